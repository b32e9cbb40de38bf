"""The subscription index, compiled: load the configuration, import and validate the
enabled handlers, and route every host's native events to the handlers that may want
them. Only ever run in a forked, watched child (the hook's worker, or the CLI's
compile), since it imports handler modules.

A handler whose module fails to load keeps the declaration it had in the previous index
(same target), so a fail-closed guard whose dependency vanished denies instead of
silently disappearing; one that never loaded has an unknown declaration, and
:func:`hookbus.bus.subscriptions.fail_closed` counts it as a guard.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from hookbus import __version__, hosts
from hookbus.bus.dispatch import Handler
from hookbus.bus.marks import Subscription, capable
from hookbus.bus.output import HookOutput
from hookbus.bus.subscriptions import guards
from hookbus.hosts.shared.driver import TOOL_EVENT_KINDS
from hookbus.local import diagnostics, state
from hookbus.runtime.call import answer_owed
from hookbus.runtime.config import HandlerRef, Settings
from hookbus.runtime.config import load as load_config
from hookbus.runtime.index import (
    FORMAT,
    INDEX_DIR,
    Lookup,
    Unloaded,
    index_name,
    stat,
)
from hookbus.runtime.load import Unavailable, build_handlers, entry_of, module_files, ref_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import (
        ClientData,
        HandlerData,
        IndexData,
        OutputData,
        ProblemData,
        RouteData,
        Stat,
    )
    from hookbus.hosts.shared.facts import HostFacts

Emit = Callable[..., None]
#: A compile with a handler that failed to load is retried at most this often.
RETRY_INCOMPLETE = 60.0


def module_stat(target: str, python_path: Sequence[str]) -> Stat | None:
    """The stat of ``target``'s module file, taken *before* it is imported (and without
    importing its packages), so that an edit made while it is being imported makes the
    cache stale rather than wrongly fresh."""
    sys.path.extend(p for p in python_path if p not in sys.path)
    try:
        files = module_files(target.partition(":")[0])
    except Unavailable:  # the import proper will say why
        return None
    return stat(files[-1]) if files else None


def trust_stats(files: list[str]) -> list[Stat]:
    """What decides whether the project among ``files`` may run its code: the trust
    store, and each file its trust record names (a change there is a change of trust)."""
    from hookbus.local import project_trust
    from hookbus.local.discover import is_project_file

    projects = [p for p in files if is_project_file(p)]
    if not projects:
        return []
    found = [stat(project_trust.store_path())]
    store = project_trust.read_store()
    for path in projects:
        record = store.record(path)
        found += [stat(f) for f in sorted(record.files)] if record is not None else []
    return found


def _keep_previous(
    settings: Settings, previous: IndexData, unreadable: tuple[str, ...]
) -> Settings:
    """``settings`` plus the handlers of ``previous`` it lost because a file of it cannot
    be read (a half-saved editor buffer must not switch a guard off): each is kept with
    its last declaration, and so stood in for, denying, when it is fail-closed.

    When the unreadable file is the user's own, the handlers it enabled are not known now,
    so a project's table for one of them (which it may not set: see
    :func:`hookbus.runtime.config.load`) would apply; every handler of ``previous`` therefore keeps
    the settings it had, and a project cannot weaken a guard of the user's by waiting for
    a broken user file."""
    from hookbus.local.discover import is_project_file

    before = {(ref := ref_of(e)).name: ref for e in previous["handlers"]}
    users_file = any(not is_project_file(p) for p in unreadable)
    refs = [before.get(r.name, r) if users_file else r for r in settings.handlers]
    names = {r.name for r in settings.handlers}
    lost = [e for e in previous["handlers"] if e["subscription"] is not None]
    kept = list({r.name: r for e in lost if (r := ref_of(e)).name not in names}.values())
    names_kept = [r.name for r in kept]
    diagnostics.emit("config-invalid", f"{', '.join(unreadable)} cannot be read: the "
                     f"handlers it enabled are kept as they were: {names_kept}")  # fmt: skip
    return msgspec.structs.replace(settings, handlers=(*refs, *kept))


class _Declared:
    """A handler known by its last good declaration only (its module fails to load now)."""

    __slots__ = ("name", "subscription")

    def __init__(self, name: str, subscription: Subscription) -> None:
        self.name = name
        self.subscription = subscription


def routes(host: str, handlers: Sequence[Handler | _Declared | None]) -> dict[str, RouteData]:
    """Native event -> the handlers (by position) that may want it, and which tools. A
    None entry (declaration unknown) is left out: the runtime treats it as wanting all."""
    driver = hosts.driver(host)
    out: dict[str, RouteData] = {}
    for i, handler in enumerate(handlers):
        if handler is None:
            continue
        sub = handler.subscription
        if sub.hosts and host not in sub.hosts:
            continue
        for kind in sub.kinds:
            patterns = ("edit",) if kind == "after-edit" and not sub.tools else sub.tools
            tool_route = driver.tool_route(patterns) if kind in TOOL_EVENT_KINDS else None
            for native in driver.natives(kind, sub.natives):
                if not driver.can_carry(native, tool_route):
                    continue
                if sub.capabilities and not capable(sub, driver.capabilities(native)):
                    continue
                route = out.get(native)
                if route is None:
                    route = out[native] = {"handlers": [], "tools": None}
                    fresh = True
                else:
                    fresh = False
                if i not in route["handlers"]:
                    route["handlers"].append(i)
                if tool_route is None or (not fresh and route["tools"] is None):
                    route["tools"] = None
                    continue
                tools = route["tools"] or {
                    "names": [], "prefixes": [], "unknown": False, "known": [],
                    "known_prefixes": [],
                }  # fmt: skip
                tools["names"] = sorted({*tools["names"], *tool_route.names})
                tools["prefixes"] = sorted({*tools["prefixes"], *tool_route.prefixes})
                if tool_route.unknown:
                    tools["unknown"] = True
                    tools["known"] = list(tool_route.known)
                    tools["known_prefixes"] = list(tool_route.known_prefixes)
                route["tools"] = tools
    return out


class _Built:
    """The handlers of a compile, in the bus's order (each member of a group on its own):
    those loaded, what routes each (a loaded handler, a last good declaration, or None
    for an unknown one), and the index entry of each."""

    def __init__(self, previous: IndexData | None) -> None:
        self.last: dict[str, list[HandlerData]] = {}
        for known in previous["handlers"] if previous else []:
            self.last.setdefault(known.get("config") or known["name"], []).append(known)
        self.built: list[Handler] = []
        self.entries: list[Handler | _Declared | None] = []
        self.data: list[HandlerData] = []
        #: Configuration name -> why it is not loaded.
        self.unavailable: dict[str, str] = {}

    def add(
        self,
        ref: HandlerRef,
        settings: Settings,
        emit: Emit,
        why: str | None,
        progress: Callable[[str], None] | None,
    ) -> None:
        """Load ``ref`` (unless ``why`` says why not), or keep what is known of it."""
        if why is None:
            if progress is not None:
                progress(ref.name)
            try:
                handlers = build_handlers(ref, settings, emit)
            except Unavailable as exc:
                why = str(exc)
            else:
                self.built += handlers
                self.entries += handlers
                self.data += [entry_of(ref, name=h.name, subscription=h.subscription)
                              for h in handlers]  # fmt: skip
                return
        self.unavailable[ref.name] = why
        lasts = [h for h in self.last.get(ref.name, []) if h["target"] == ref.target]
        first = len(self.data)
        if lasts and all(h["subscription"] is not None for h in lasts):
            for known in lasts:
                declared = msgspec.convert(known["subscription"], Subscription)
                self.entries.append(_Declared(known["name"], declared))
                self.data.append(entry_of(ref, name=known["name"], subscription=declared,
                                          unavailable=why))  # fmt: skip
        else:
            self.entries.append(None)
            self.data.append(entry_of(ref, unavailable=why))
        # Said once, by its first entry (a group's members share their module and why).
        emit("handler-unavailable", Unloaded(self.data[first]).detail, handler=ref.name)


class _Problems:
    """Emits a compile's diagnostics, and keeps them for the index (install reports them,
    and refuses an invalid configuration)."""

    def __init__(self) -> None:
        self.found: list[ProblemData] = []

    def __call__(self, code: str, message: str, *, invalid: bool = True, **fields: Any) -> None:
        subject = str(fields.get("handler") or fields.get("file") or "")
        self.found.append({"code": code, "subject": subject, "message": message,
                           "invalid": invalid})  # fmt: skip
        level = fields.pop("level", "warning" if invalid else "info")
        diagnostics.emit(code, message, level=level, **fields)


class Compiled:
    """A compiled index and the handlers it loaded (for a dispatch in the same process)."""

    __slots__ = ("data", "handlers", "settings")

    def __init__(self, data: IndexData, handlers: list[Handler], settings: Settings) -> None:
        self.data = data
        self.handlers = handlers
        self.settings = settings


def compile_index(
    files: list[str],
    previous: IndexData | None = None,
    *,
    skip: dict[str, str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> Compiled:
    """Compile the index of ``files``. ``skip`` names targets not to import (their import
    hung before), by handler name; ``progress`` hears each handler's name before its module
    is imported."""
    configs = [stat(p) for p in files]  # before reading them: see module_stat
    trust = trust_stats(files)  # before the trust store is read, for the same reason
    emit = _Problems()
    problems = emit.found
    loaded = load_config(files)
    for problem in loaded.problems:
        code = "config-untrusted" if problem.untrusted else (
            "config-invalid" if problem.invalid else "config-note")  # fmt: skip
        emit(code, problem.problem, file=problem.source, invalid=problem.invalid,
             level="info" if code == "config-note" else "warning")  # fmt: skip
    settings = loaded.settings
    if loaded.unreadable and previous is not None:
        settings = _keep_previous(settings, previous, loaded.unreadable)
    watch = [module_stat(r.target, settings.python_path) for r in settings.handlers]
    before = set(sys.modules)
    kept = {r.name for r in settings.handlers} - {r.name for r in loaded.settings.handlers}
    why_kept = f"{', '.join(loaded.unreadable)} cannot be read, so it is kept as it was"
    found = _Built(previous)
    for ref in settings.handlers:
        why = why_kept if ref.name in kept else (skip or {}).get(ref.name)
        found.add(ref, settings, emit, why, progress)
    # Also watch every module the handlers pulled in that is not part of an installation
    # (guards/__init__.py importing guards/impl.py, a rules module on PYTHONPATH): an edit
    # there changes a declaration too. Installed packages change with a reinstall, which
    # changes the handler's own module or the interpreter.
    installed = tuple(os.path.join(p, "") for p in {sys.prefix, sys.base_prefix, sys.exec_prefix})
    for name in set(sys.modules) - before:
        source = getattr(sys.modules[name], "__file__", None)
        if isinstance(source, str) and not source.startswith(installed):
            watch.append(stat(source))
    watch += trust
    complete = not found.unavailable
    data: IndexData = {
        "format": FORMAT,
        "hookbus": __version__,
        "python": sys.executable,
        "configs": configs,
        "watch": sorted({json.dumps(w): w for w in watch if w is not None}.values(), key=str),
        "complete": complete,
        "retry_at": 0 if complete else time.time() + RETRY_INCOMPLETE,
        "problems": problems,
        "settings": msgspec.to_builtins(settings),
        "handlers": found.data,
        "routes": {host: routes(host, found.entries) for host in hosts.HOSTS},
        "refusals": refusals(guards(found.data)),
        "clients": {},
    }
    lookup = Lookup([], "fresh", data)
    data["clients"] = {host: client_facts(facts, lookup.declared_env(host))
                       for host, facts in hosts.HOSTS.items()}  # fmt: skip
    # The same plain JSON a later run reads back from the cache (lists, not tuples); the
    # standard library's, which escapes a path that is not UTF-8 instead of failing.
    plain: IndexData = json.loads(json.dumps(data))
    return Compiled(plain, found.built, settings)


def client_facts(facts: HostFacts, env: list[str]) -> ClientData:
    """What the warm server's client needs of ``facts`` (it cannot import them)."""
    quiet = {"": _plain(facts.no_opinion)}
    quiet.update((native, _plain(out)) for native, out in facts.no_opinion_by_event.items())
    keys = {key for d in facts.dialects for key in (*d.keys, *(d.spelled or ())[:1])}
    return {
        "event_paths": [list(p) for p in facts.event_paths],
        "tool_paths": [list(p) for p in facts.tool_paths],
        "events": sorted(facts.events),
        "dialect_keys": sorted(keys),
        "decisive_keys": sorted({key for d in facts.dialects if d.decisive for key in d.keys}),
        "dialect_env": sorted({v for d in facts.dialects for v in d.env}),
        "payload_env": facts.payload_env is not None,
        "project": facts.project_word,
        "no_opinion": quiet,
        "env": env,
    }


def refusals(owed_to: list[HandlerData]) -> dict[str, dict[str, OutputData]]:
    """Each host's refusal of each native event, encoded now, so that the watchdog, the
    warm server's client and the shims know it without loading a driver (only when some
    handler, of ``owed_to``, is or may be a guard)."""
    if not owed_to:
        return {}
    found: dict[str, dict[str, OutputData]] = {}
    for host in hosts.HOSTS:
        driver = hosts.driver(host)
        for native in driver.events:
            out = answer_owed(driver, native, owed_to, "no answer in time")
            if out != driver.no_opinion(native):
                found.setdefault(host, {})[native] = _plain(out)
    return found


def _plain(out: HookOutput) -> OutputData:
    return {
        "stdout": out.stdout.decode("utf-8", "replace"),
        "stderr": out.stderr.decode("utf-8", "replace"),
        "exit_code": out.exit_code,
    }


def save(files: list[str], data: IndexData) -> None:
    """Cache ``data`` in the state root (atomically); a diagnostic when that fails."""
    try:
        state.write(INDEX_DIR, index_name(files), data=json.dumps(data).encode())
    except OSError as exc:
        diagnostics.emit("index-unwritable", f"cannot cache the subscription index: {exc}")


def compile_in_child(files: list[str], *, timeout: float = 60.0) -> IndexData | None:
    """Compile and cache the index in a forked child (handler modules printing or hanging
    at import must not reach the caller's output or hold it); None when it failed."""
    from hookbus.runtime.index import read
    from hookbus.runtime.isolate import Channel, run_child

    previous: Lookup = read(files)

    def work(channel: Channel) -> bytes:
        diagnostics.take()
        note = lambda name: channel.note("I", name.encode())  # noqa: E731
        compiled = compile_index(files, previous.data, progress=note)
        save(files, compiled.data)
        return json.dumps(compiled.data).encode()

    child = run_child(work, deadline=time.monotonic() + timeout, lifetime=timeout + 1)
    if child.status != "ok":
        importing = child.notes.get("I", b"").decode(errors="replace")
        doing = f" (importing handler {importing})" if importing else ""
        diagnostics.emit("index-unavailable", f"compiling the subscription index: "
                         f"{child.status}{doing}")  # fmt: skip
        return None
    data: IndexData = json.loads(child.data)
    return data
