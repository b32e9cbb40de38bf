"""The registry of hosts: their names, and each host's parts, loaded by name on first use.

A host is a folder, ``hookbus/hosts/<name>/``: ``facts.py`` (what the cold path knows of
it before anything heavy: :mod:`hookbus.hosts.shared.facts`), ``driver.py`` (decode and
encode), ``samples.py`` (a payload per native event), ``manifest.py`` (what ``hookbus
install`` writes into the host's configuration) and its plugin or shim where it has one.
What several hosts build on lives in ``shared/``. Adding a host is a folder and a line in
:data:`NAMES` (docs/architecture.md, "Adding a host").

A hook reads one host's facts and loads one driver: nothing here imports a host's folder
before it is asked for by name. A host's folder imports no other host's: one that needs
another's part at run time asks for it here (:func:`driver`, :func:`manifest`). The CLI,
the subscription index and handler validation all take host names from here.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from hookbus.bus.host import Driver
    from hookbus.hosts.shared.facts import HostFacts
    from hookbus.hosts.shared.manifest import Manifest

#: Every host hookbus drives, in the order the CLI and the docs list them.
NAMES: tuple[str, ...] = (
    "claude", "codex", "gemini", "cline", "qwen", "copilot", "vscode", "kimi", "cursor",
    "antigravity", "droid", "qoder", "kiro", "windsurf", "goose", "grok", "openhands", "pi",
    "hermes", "opencode", "kilo",
)  # fmt: skip

#: Host names a handler may filter on before their driver exists: a typo fails when the
#: bus is built, while a handler written for a host whose driver comes later does not.
PLANNED_HOSTS: frozenset[str] = frozenset()


class Registry:
    """Host name -> its facts, each host's loaded on first use; iterating, ``in`` and
    ``len`` read the names alone."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self._names = list(names)
        self._facts: dict[str, HostFacts] = {}

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __getitem__(self, name: str) -> HostFacts:
        found = self._facts.get(name)
        if found is None:
            if name not in self._names:
                raise KeyError(f"unknown host {name!r}; known: {', '.join(sorted(self))}")
            import importlib

            module = importlib.import_module(f"hookbus.hosts.{name}.facts")
            found = self._facts[name] = module.FACTS
        return found

    def get(self, name: str) -> HostFacts | None:
        return self[name] if name in self._names else None

    def values(self) -> list[HostFacts]:
        return [self[name] for name in self._names]

    def items(self) -> list[tuple[str, HostFacts]]:
        return [(name, self[name]) for name in self._names]

    def add(self, host: HostFacts) -> None:
        if host.name not in self._names:
            self._names.append(host.name)
        self._facts[host.name] = host


#: Every host's facts by name (see :class:`Registry`).
HOSTS = Registry(NAMES)
_drivers: dict[str, Driver] = {}


def is_known(host: str) -> bool:
    """True for a host with a driver, or one whose driver is planned."""
    return host in HOSTS or host in PLANNED_HOSTS


def known_names() -> list[str]:
    return sorted({*HOSTS, *PLANNED_HOSTS})


def facts(host: str) -> HostFacts:
    """The facts of ``host``; KeyError naming the known hosts."""
    return HOSTS[host]


def driver(host: str) -> Driver:
    """The driver of ``host``, loaded on first use; KeyError naming the known hosts."""
    found = _drivers.get(host)
    if found is None:
        import importlib

        found = _drivers[host] = importlib.import_module(facts(host).driver).driver
    return found


def manifest(host: str) -> Manifest:
    """The manifest of ``host`` (what ``install`` writes into its configuration), loaded
    on first use; KeyError naming the known hosts, or saying that it has none."""
    import importlib

    module = facts(host).manifest
    if module is None:
        raise KeyError(f"hookbus cannot install into {host} yet")
    return importlib.import_module(module).manifest  # type: ignore[no-any-return]


def register(host: HostFacts | str) -> None:
    """Add a host: its facts, or the importable name of its package, a folder laid out
    as a host's folder here is (``facts.py`` with ``FACTS``, naming its ``driver`` and
    ``samples`` modules). Tests register a toy host this way through their own launcher
    (``hosts.register("toy")``, tests/toy/); hooks never do."""
    if isinstance(host, str):
        import importlib

        found: HostFacts = importlib.import_module(f"{host}.facts").FACTS
        HOSTS.add(found)
    else:
        HOSTS.add(host)
