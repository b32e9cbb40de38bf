"""Load handlers: import what a configuration names and validate its declaration.

Only ever run in a forked, watched child (the hook's worker, the index's compile): it
imports handler modules. A module file someone else could have written is not imported
(:mod:`hookbus.local.trust`), nor a project's module but as its trust record allows
(:mod:`hookbus.runtime.project_imports`). A fail-closed handler that cannot be loaded is
stood in for by a handler that refuses, saying why, so its guard never silently
disappears.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any

import msgspec

from hookbus.bus.dispatch import Handler, HandlerSettings, check_hosts, group_handlers
from hookbus.bus.errors import HandlerError
from hookbus.bus.events import Event
from hookbus.bus.marks import Group, Subscription, subscribed
from hookbus.local import diagnostics, state
from hookbus.local.trust import file_problem
from hookbus.runtime.config import HandlerRef, Settings
from hookbus.runtime.index import INDEX_DIR, Unloaded, index_name, stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.host import Capabilities
    from hookbus.bus.subscriptions import HandlerData, IndexData

Emit = Callable[..., None]


class Unavailable(Exception):
    """A handler module could not be imported (or was not trusted); the message says why."""


def import_target(target: str, settings: Settings) -> Any:
    """The function, or group, named by ``module:function`` (``function`` may be dotted),
    found on ``settings``'s path. Every file the import would run (``pkg/__init__.py``,
    then ``pkg/guards.py``...) is checked first, and one someone else could have written
    is refused (:mod:`hookbus.local.trust`); a module of the project's folders is imported only
    as the user trusted it (:mod:`hookbus.runtime.project_imports`)."""
    import importlib

    from hookbus.runtime.project_imports import guard

    guard(settings)
    # Appended, not prepended: a project file must not shadow the standard library.
    sys.path.extend(p for p in settings.python_path if p not in sys.path)
    module_name, _, attr = target.partition(":")
    for origin in module_files(module_name):
        problem = file_problem(origin)
        if problem:
            raise Unavailable(f"{origin} {problem}: not imported")
    if not attr:
        raise Unavailable(f"{target!r} names no function: write it as module:function")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise Unavailable(f"{module_name} has no {attr!r}; {_handlers_in(obj)}")
        obj = getattr(obj, part)
    return obj


def _handlers_in(module: object) -> str:
    """What a misspelled target might have meant: the module's marked handlers."""
    from hookbus.bus.marks import MARK

    names = sorted(n for n, v in vars(module).items() if hasattr(v, MARK) or isinstance(
        v, Group)) if hasattr(module, "__dict__") else []  # fmt: skip
    if not names:
        return "it has no @hookbus.handler function or hookbus.group"
    return f"its handlers: {', '.join(names)}"


def module_files(module_name: str) -> list[str]:
    """The files importing ``module_name`` would run that are not imported yet (packages
    first), found as the import system finds them but without importing anything.
    :class:`Unavailable` when one cannot be found."""
    files = []
    parts = module_name.split(".")
    path = None
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        loaded = sys.modules.get(name)
        if loaded is not None:
            path = getattr(loaded, "__path__", None)
            continue
        spec = None
        try:
            # The meta path finders, in order, as importlib.util.find_spec asks them
            # (that module costs a hook a millisecond, and imports the parents).
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if find is not None and (spec := find(name, path)) is not None:
                    break
        except Exception as exc:
            raise Unavailable(f"cannot find {name}: {diagnostics.error_line(exc)}") from None
        if spec is None:
            raise Unavailable(f"no module named {name!r}")
        if spec.origin and os.path.isfile(spec.origin):
            files.append(spec.origin)
        path = spec.submodule_search_locations
    return files


def _make(obj: object, name: str, settings: HandlerSettings) -> list[Handler]:
    from hookbus.hosts import known_names

    if isinstance(obj, Group):
        made = group_handlers(obj, name=name, settings=settings)
    elif callable(obj):
        made = [Handler(obj, name=name, settings=settings)]
    else:
        raise HandlerError(name, f"names {type(obj).__name__}, not a handler function "
                           "or a hookbus.group(...)")  # fmt: skip
    for handler in made:
        check_hosts(handler, known_names())
    return made


def member_of(name: str, config: str) -> str | None:
    """The function name of handler ``name`` in the group enabled as ``config``; None
    when ``name`` is that handler itself."""
    return name[len(config) + 1 :] if name != config else None


def build_handlers(
    ref: HandlerRef, settings: Settings, emit: Emit, members: Collection[str] | None = None
) -> list[Handler]:
    """Import and validate one enabled handler: its one :class:`Handler`, or one per
    function of the group it names (only ``members``, by function name, when given);
    :class:`Unavailable` saying why not.

    What configuration got wrong is repaired rather than the handler lost (and, for a
    fail-closed one, its guard): each dropped part of its options is reported (and kept
    for the handler, as ``ctx.problems``), defaults stand in for options that cannot be
    used at all, the budget for a missing timeout.
    """
    try:
        obj = import_target(ref.target, settings)
    except Unavailable:
        raise
    except BaseException as exc:  # SystemExit from an argparse at import, too
        raise Unavailable(diagnostics.error_line(exc)) from None
    where = ref.settings.source
    try:
        handlers = _make(obj, ref.name, ref.settings)
    except HandlerError as exc:
        problem: Exception = exc
    except Exception as exc:  # a declaration so wrong that validation itself tripped
        raise Unavailable(f"{ref.target}: {diagnostics.error_line(exc)}") from None
    else:
        for line in handlers[0].problems[len(ref.settings.problems) :]:
            emit("config-invalid", f"{where or 'configuration'}: [handlers.{ref.name!r}] "
                 f"{line}", handler=ref.name, file=where)  # fmt: skip
        return _only(handlers, ref.name, members)
    repaired = ref.settings
    if repaired.options:
        repaired = msgspec.structs.replace(repaired, options={})
    if repaired.fail_closed and repaired.timeout is None:
        repaired = msgspec.structs.replace(repaired, timeout=settings.budget)
    if repaired != ref.settings:
        try:
            handlers = _make(obj, ref.name, repaired)
        except HandlerError:
            pass
        else:
            emit("config-invalid", f"{where or 'configuration'}: {problem}; used "
                 f"timeout={repaired.timeout}, options={repaired.options}",
                 handler=ref.name, file=where)  # fmt: skip
            return _only(handlers, ref.name, members)
    raise Unavailable(str(problem))


def _only(handlers: list[Handler], config: str, members: Collection[str] | None) -> list[Handler]:
    if members is None:
        return handlers
    found = [h for h in handlers if member_of(h.name, config) in members]
    missing = set(members) - {member_of(h.name, config) for h in found}
    if missing:
        raise Unavailable(f"{config} has no member {', '.join(sorted(map(str, missing)))} any "
                          "more")  # fmt: skip
    return found


def ref_of(entry: HandlerData) -> HandlerRef:
    """The configuration's handler an index entry belongs to (a group's, for a member)."""
    return HandlerRef(
        name=entry.get("config") or entry["name"],
        target=entry["target"],
        settings=msgspec.convert(entry["settings"], HandlerSettings),
    )


def stand_in(entry: HandlerData) -> Handler:
    """A handler that could not be loaded, standing in for a fail-closed one: it denies
    every event its last declaration wants (every event, when that is unknown), and says
    why the real one is missing."""
    from hookbus.bus.events import KINDS
    from hookbus.bus.marks import MARK
    from hookbus.bus.replies import Reply
    from hookbus.runtime.index import refusal_reason

    reason = refusal_reason("it did not load", [entry])

    def refuse(event: object) -> Reply:
        return Reply.deny(reason)

    declared = entry["subscription"]
    sub = (
        msgspec.convert(declared, Subscription)
        if declared is not None
        else Subscription(kinds=tuple(sorted(KINDS)))
    )
    setattr(
        refuse, MARK, msgspec.structs.replace(sub, fail_closed=True, timeout=sub.timeout or 1.0)
    )
    return Handler(refuse, name=entry["name"])


def stand_ins(entries: Sequence[HandlerData], loaded: set[str]) -> list[Handler]:
    """Stand-ins for the fail-closed handlers among ``entries`` not in ``loaded``."""
    from hookbus.bus.subscriptions import fail_closed

    missing = [e for e in entries if e["name"] not in loaded]
    closed = set(fail_closed(missing))
    return [stand_in(e) for e in missing if e["name"] in closed]


def wanting(
    entries: Sequence[HandlerData], events: Sequence[Event], capabilities: Capabilities
) -> list[HandlerData]:
    """The ``entries`` whose declaration wants one of ``events`` (of a native event the
    host can do ``capabilities`` with), or is unknown (an unknown one may want any)."""
    chosen = []
    for entry in entries:
        declared = entry["subscription"]
        if declared is None or any(
            subscribed(msgspec.convert(declared, Subscription), ev, capabilities) for ev in events
        ):
            chosen.append(entry)
    return chosen


def configured(
    files: list[str], previous: IndexData | None, routed: set[str] | None = None
) -> tuple[list[HandlerData], Settings]:
    """The handlers the configuration enables now, each with the declaration the
    ``previous`` index knew (unknown for a new one, or one whose target changed; a group
    as the members the previous index knew), and the settings. With ``routed``, a
    handler of known declaration is kept only if the previous index routed the event to
    it."""
    from hookbus.runtime.config import load as load_config

    loaded = load_config(files)
    known: dict[str, list[HandlerData]] = {}
    for last in previous["handlers"] if previous else []:
        known.setdefault(last.get("config") or last["name"], []).append(last)
    entries: list[HandlerData] = []
    for ref in loaded.settings.handlers:
        settings = msgspec.to_builtins(ref.settings)
        lasts = [h for h in known.get(ref.name, []) if h["target"] == ref.target]
        if lasts and all(h["subscription"] for h in lasts):
            for last in lasts:
                if routed is None or last["name"] in routed:
                    entries.append({**last, "settings": settings, "unavailable": None})
            continue
        entries.append(entry_of(ref))
    return entries, loaded.settings


def entry_of(
    ref: HandlerRef,
    *,
    name: str | None = None,
    subscription: Subscription | None = None,
    unavailable: str | None = None,
) -> HandlerData:
    """The index entry of handler ``name`` (default: ``ref``'s own; a member of its group
    is ``<ref.name>.<function>``) declaring ``subscription`` (None: unknown)."""
    name = name or ref.name
    return {
        "name": name,
        "config": ref.name,
        "member": member_of(name, ref.name),
        "target": ref.target,
        "settings": msgspec.to_builtins(ref.settings),
        "subscription": None if subscription is None else msgspec.to_builtins(subscription),
        "unavailable": unavailable,
    }


def load_wanted(
    entries: Sequence[HandlerData],
    settings: Settings,
    emit: Emit,
    announce: Callable[[str], None],
    unavailable: dict[str, str] | None = None,
) -> list[Handler]:
    """Import the handlers ``entries`` name (each announced first, so that a hang is
    blamed on the right module; a group's wanted members together), plus stand-ins for
    the fail-closed ones that cannot be loaded now. ``announce("")`` says the imports
    are over. What each handler that is not loaded is told (:class:`Unloaded`'s detail:
    why, where, the fix) goes into ``unavailable`` by handler name, when given:
    ``hookbus try`` shows it."""
    handlers = []
    missing: list[HandlerData] = []
    wanted: dict[str, list[HandlerData]] = {}
    for entry in entries:
        if entry["unavailable"] is not None or entry["subscription"] is None:
            missing.append(entry)
            continue
        wanted.setdefault(entry.get("config") or entry["name"], []).append(entry)
    for config, group in wanted.items():
        ref = ref_of(group[0])
        announce(ref.name)
        members = [m for e in group if (m := e.get("member")) is not None]
        try:
            handlers += build_handlers(ref, settings, emit,
                                       members if len(members) == len(group) else None)  # fmt: skip
        except Unavailable as exc:
            failed: list[HandlerData] = [{**e, "unavailable": str(exc)} for e in group]
            missing += failed
            emit("handler-unavailable", Unloaded(failed[0]).detail, handler=config)
    announce("")
    if unavailable is not None:
        unavailable.update({e["name"]: Unloaded(e).detail for e in missing})
    return handlers + stand_ins(missing, set())


# -- hung imports, remembered ----------------------------------------------------------

#: Handlers to skip (name -> why) because importing them hung in an earlier call.
SKIP_SUFFIX = ".skip"
#: How long a hung import is not tried again.
SKIP_FOR = 60.0


def read_skip(files: list[str]) -> dict[str, str]:
    """Handlers whose import hung recently for these files (name -> why)."""
    try:
        marker = json.loads(state.read(INDEX_DIR, index_name(files) + SKIP_SUFFIX))
    except (OSError, ValueError):
        return {}
    if not isinstance(marker, dict) or marker.get("configs") != [stat(p) for p in files]:
        return {}
    if time.time() >= float(marker.get("retry_at", 0)):
        return {}
    skip = marker.get("skip")
    return {str(k): str(v) for k, v in skip.items()} if isinstance(skip, dict) else {}


def write_skip(files: list[str], name: str, why: str) -> None:
    """Remember that importing handler ``name`` hung: for a minute no hook imports it."""
    skip = {**read_skip(files), name: why}
    marker = {
        "configs": [stat(p) for p in files],
        "retry_at": time.time() + SKIP_FOR,
        "skip": skip,
    }
    try:
        state.write(INDEX_DIR, index_name(files) + SKIP_SUFFIX, data=json.dumps(marker).encode())
    except OSError as exc:
        diagnostics.emit("index-unwritable", f"cannot record the hung import: {exc}")
