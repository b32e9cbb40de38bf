"""Host drivers, loaded by name on first use and cached.

This registry is read on every hook's cold path, so it holds, per host, only what
``hookbus run`` needs before it decides to load the driver: where the event name and the
tool name sit in the payload, and the host's "no opinion" reply. Everything else lives
in the driver module (``hookbus/drivers/<host>.py``, ending in ``driver = ...``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.types import Driver


class Peek:
    """Payload keys of the event and tool names, and the no-opinion reply, of one host."""

    __slots__ = ("event_field", "module", "no_opinion_exit", "no_opinion_stdout", "tool_field")

    def __init__(
        self,
        module: str,
        *,
        event_field: str,
        tool_field: str,
        no_opinion_stdout: bytes = b"",
        no_opinion_exit: int = 0,
    ) -> None:
        self.module = module
        self.event_field = event_field
        self.tool_field = tool_field
        self.no_opinion_stdout = no_opinion_stdout
        self.no_opinion_exit = no_opinion_exit


HOSTS: dict[str, Peek] = {
    "claude": Peek("hookbus.drivers.claude", event_field="hook_event_name", tool_field="tool_name"),
}

_loaded: dict[str, Driver] = {}


def load(host: str) -> Driver:
    """The driver of ``host``; raises KeyError naming the known hosts."""
    driver = _loaded.get(host)
    if driver is None:
        if host not in HOSTS:
            raise KeyError(f"unknown host {host!r}; known: {', '.join(sorted(HOSTS))}")
        import importlib

        driver = _loaded[host] = importlib.import_module(HOSTS[host].module).driver
    return driver
