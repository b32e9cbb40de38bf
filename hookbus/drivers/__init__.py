"""Host drivers, loaded by name on first use and cached (a Claude hook never imports
another host's driver). Which hosts exist, and what the cold path knows of them before
a driver is loaded, is :mod:`hookbus.hosts`."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.types import Driver

_loaded: dict[str, Driver] = {}


def load(host: str) -> Driver:
    """The driver of ``host``; KeyError naming the known hosts."""
    driver = _loaded.get(host)
    if driver is None:
        import importlib

        from hookbus.hosts import facts

        driver = _loaded[host] = importlib.import_module(facts(host).driver).driver
    return driver
