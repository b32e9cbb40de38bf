"""The subscription index, read: which handlers may want a native event of a host.

``hookbus run`` consults it before anything heavy is imported, so an event nobody wants
is answered without msgspec, anyio or any handler module. It is plain JSON in the state
root, compiled by :mod:`hookbus.runtime.compile` from the configuration and the
handlers' own declarations; this module only reads it, with the standard library.

An index is *fresh* when it was compiled by this hookbus, for these configuration files
as they are now, with every file it watched unchanged: the handler modules, and for a
project the trust store and the files of its trust record (trusting or changing a
project's code changes which handlers run). Anything else (missing,
stale, from another version, unreadable, in a refused state root) is not an answer:
``hookbus run`` then compiles and dispatches in one watched worker, and its fallback is
computed as if every handler whose declaration is unknown were fail-closed.
"""

from __future__ import annotations

import json
import os
import sys
import time

from hookbus import __version__
from hookbus.bus.output import HookOutput
from hookbus.bus.subscriptions import fail_closed
from hookbus.local import state

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Literal

    from hookbus.bus.subscriptions import HandlerData, IndexData, Stat

    Freshness = Literal["fresh", "stale", "missing", "unreadable", "refused"]

FORMAT = 9
INDEX_DIR = "index"


def stat(path: str) -> Stat:
    try:
        st = os.stat(path)
    except OSError:
        return [path, None, None]
    return [path, st.st_mtime_ns, st.st_size]


def index_name(files: list[str]) -> str:
    """One index per set of configuration files, interpreter and user folder (whose trust
    store says which project code may run: an index compiled against another store is
    not this one). hookbus's version is not in the name: after an upgrade the old index
    still tells which handlers are guards."""
    from hookbus.local.discover import user_folder

    key = "\0".join([*files, sys.executable, user_folder()]).encode("utf-8", "surrogateescape")
    # The client's digest (``hookbus.runtime.warm.client.digest``; a test holds them equal).
    return f"{int.from_bytes(key, 'big') % ((1 << 64) - 59):016x}.json"


def is_fresh(data: IndexData, files: list[str], now: float | None = None) -> bool:
    if data.get("hookbus") != __version__ or data.get("python") != sys.executable:
        return False
    if data.get("configs") != [stat(p) for p in files]:
        return False
    if not data.get("complete") and (now or time.time()) >= float(data.get("retry_at", 0)):
        return False  # a handler failed to load: try again, it may be installed by now
    return all(stat(str(w[0])) == w for w in data.get("watch", []))


class Lookup:
    """The index as found for a set of configuration files, and how fresh it is."""

    __slots__ = ("data", "files", "freshness", "problem")

    def __init__(
        self,
        files: list[str],
        freshness: Freshness,
        data: IndexData | None = None,
        problem: str | None = None,
    ) -> None:
        self.files = files
        self.freshness: Freshness = freshness
        #: The index read, fresh or not (a stale one still knows the declarations).
        self.data = data
        #: Why there is no usable index (for the diagnostic).
        self.problem = problem

    @property
    def fresh(self) -> bool:
        return self.freshness == "fresh"

    def wanted(self, host: str, native: str, tool: object) -> list[int]:
        """Positions of the handlers that may want this native event (a superset: the
        bus filters exactly after the full decode). Empty means nobody."""
        if self.data is None:
            return []
        route = self.data["routes"].get(host, {}).get(native)
        if route is None:
            return []
        tools = route["tools"]
        if tools is None or not isinstance(tool, str):
            return list(route["handlers"])
        if tool in tools["names"] or tool.startswith(tuple(tools["prefixes"])):
            return list(route["handlers"])
        unknown = tool not in tools["known"] and not tool.startswith(tuple(tools["known_prefixes"]))
        return list(route["handlers"]) if tools["unknown"] and unknown else []

    def candidates(self, host: str, native: str, tool: object) -> list[HandlerData]:
        """Who may want this native event: the handlers routed to it (:meth:`wanted`),
        then those whose declaration is unknown (they may want any). The one gate every
        path asks (the cold path, its watchdog and worker, the in-process entry; the
        warm server's client restates it, ``client._wanted``, and a test holds them
        equal)."""
        if self.data is None:
            return []
        chosen = [self.data["handlers"][i] for i in self.wanted(host, native, tool)]
        return chosen + [h for h in self.unknown_handlers() if h not in chosen]

    def nobody(self, host: str, native: str, tool: object) -> bool:
        """True when the index is fresh and no handler may want this event: the call is
        answered the host's no-opinion without a worker."""
        return self.fresh and not self.candidates(host, native, tool)

    def refusal(self, host: str, native: str) -> HookOutput | None:
        """The refusal of ``native`` the index encoded when it was compiled (None when it
        has none: no handler is, or may be, fail-closed)."""
        found = self.data["refusals"].get(host, {}).get(native) if self.data else None
        if found is None:
            return None
        return HookOutput(found["stdout"].encode(), found["stderr"].encode(), found["exit_code"])

    def declared_env(self, host: str) -> list[str]:
        """The environment variables declared (``env=``) by the handlers the index routes
        any of ``host``'s events to: what a warm server's client forwards for ``host``."""
        if self.data is None:
            return []
        routed = {i for route in self.data["routes"].get(host, {}).values()
                  for i in route["handlers"]}  # fmt: skip
        names: set[str] = set()
        for i in routed:
            sub = self.data["handlers"][i]["subscription"]
            names.update(sub.get("env", ()) if sub is not None else ())
        return sorted(names)

    def unknown_handlers(self) -> list[HandlerData]:
        """Handlers whose declaration is unknown: they may want any event."""
        handlers = self.data["handlers"] if self.data is not None else []
        return [h for h in handlers if h["subscription"] is None]


#: The last index text parsed, and what it parsed to: a warm server's worker reads the
#: same file call after call, and parsing it is the larger part of reading it. Only the
#: parse is kept: the file is read, and its freshness judged, on every call. Nothing
#: changes the parsed index (a compile makes a new one).
_parsed: tuple[bytes, object] = (b"", None)


def _loads(raw: bytes) -> object:
    global _parsed
    if raw and raw == _parsed[0]:
        return _parsed[1]
    data = json.loads(raw)
    _parsed = (raw, data)
    return data


def read(files: list[str]) -> Lookup:
    """The index for ``files`` (the configuration in effect), never compiling it."""
    if not files:
        return Lookup(files, "fresh", None)
    try:
        raw = state.read(INDEX_DIR, index_name(files))
    except FileNotFoundError:
        return Lookup(files, "missing", problem="no subscription index yet")
    except state.StateRefused as exc:
        return Lookup(files, "refused", problem=str(exc))
    except OSError as exc:
        return Lookup(files, "unreadable", problem=f"cannot read the index: {exc}")
    try:
        data = _loads(raw)
    except ValueError as exc:
        return Lookup(files, "unreadable", problem=f"the index is not JSON: {exc}")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return Lookup(files, "stale", problem="the index has another format")
    if is_fresh(data, files):  # type: ignore[arg-type]
        return Lookup(files, "fresh", data)  # type: ignore[arg-type]
    return Lookup(files, "stale", data, problem="the configuration or a handler changed")  # type: ignore[arg-type]


class Unloaded:
    """What a person is told of a handler that did not load, wherever it is told: the
    deny of the stand-in refusing for it and the index's refusals (which the watchdog,
    the warm server's client and the shims answer), the ``handler-unavailable``
    diagnostic, ``doctor`` and ``verify``. Built from its index entry: what happened and
    where (the ``enable`` entry's ``path:line``; the failing line of its module is in
    ``why``, by :func:`hookbus.local.diagnostics.error_line`), what hooks do meanwhile, and the
    fix.

    A handler whose declaration is unknown counts as fail-closed (:func:`fail_closed`):
    hookbus cannot tell a misspelt name from a guard whose module is missing here (not
    installed yet, or uninstalled by the agent, with the state folder that remembered
    its declaration wiped), and taking the first for the second would switch a guard
    off. Only the user can say which, so its fix names both edits: the correction, and
    ``fail_closed = false`` for a handler that need not block.
    """

    __slots__ = ("fix", "guard", "meanwhile", "name", "where", "why")

    def __init__(self, entry: HandlerData) -> None:
        settings = entry["settings"]
        self.name = entry["name"]
        self.why = entry["unavailable"] or "it did not load"
        where = settings.get("enabled_at") or settings.get("source")
        #: The ``enable`` entry naming it, ``path:line`` (empty when not known).
        self.where = str(where or "")
        #: True when it counts as fail-closed: a stand-in refuses for it.
        self.guard = bool(fail_closed([entry]))
        presumed = self.guard and entry["subscription"] is None and not isinstance(
            settings.get("fail_closed"), bool)  # fmt: skip
        if presumed:
            self.meanwhile = "it may be a guard, so hookbus denies what it may want"
        elif self.guard:
            self.meanwhile = "it is fail-closed, so hookbus denies what it wants"
        else:
            self.meanwhile = "hooks run without it"
        named = self.why.startswith("no module named") or " has no " in self.why
        self.fix = f"correct the {'name' if named else 'error'}"
        if presumed:
            there = " in that file" if self.where else ""
            table = entry.get("config") or self.name  # a group's table is the group's
            self.fix += (f", or add fail_closed = false to [handlers.\"{table}\"]{there} "
                         "if it need not block")  # fmt: skip
        elif not self.guard:
            self.fix += ", or take it out of enable"
        from hookbus.local.discover import is_project_file

        path, _, line = self.where.rpartition(":")
        if is_project_file(path if line.isdigit() else self.where):
            # A project's file runs its code only as trusted: an edit needs trust again.
            self.fix += ", then: hookbus trust"

    @property
    def what(self) -> str:
        """What happened, where, and what hooks do meanwhile (all but its name)."""
        at = f" (enabled at {self.where})" if self.where else ""
        return f"did not load: {self.why}{at}; {self.meanwhile}"

    @property
    def detail(self) -> str:
        """All but its name: :attr:`what`, then the fix."""
        return f"{self.what}; fix: {self.fix}"

    def __str__(self) -> str:
        return f"{self.name} {self.detail}"


def refusal_reason(why: str, guards: Sequence[HandlerData | str]) -> str:
    """The reason of a refusal owed to ``guards`` (the fail-closed handlers, or maybe so,
    that may want the event; a name alone where only that is known), on every path
    that refuses: when one of them did not load, that one, told by :class:`Unloaded`
    (its stand-in denies every call until it loads, so it is what to fix, whatever else
    happened); else ``why`` (what kept hookbus from answering) and their names."""
    for guard in guards:
        if not isinstance(guard, str) and guard["unavailable"] is not None:
            return f"hookbus: {Unloaded(guard)} (all problems: hookbus doctor)"
    names = ", ".join(g if isinstance(g, str) else g["name"] for g in guards)
    return f"hookbus: {why}; fail-closed {names} wants it"
