"""Load handlers: import what a configuration names and validate its declaration.

Only ever run in a forked, watched child (the hook's worker, the index's compile): it
imports handler modules. A module file someone else could have written is not imported
(:mod:`hookbus.trust`). A fail-closed handler that cannot be loaded is stood in for by
a handler that refuses, saying why, so its guard never silently disappears.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from hookbus import diagnostics, state
from hookbus.bus.dispatch import Handler
from hookbus.bus.events import Event
from hookbus.bus.marks import Subscription, subscribed
from hookbus.config import HandlerRef, Settings
from hookbus.errors import HandlerError
from hookbus.runtime.index import INDEX_DIR, index_name, stat
from hookbus.trust import file_problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.runtime.index import HandlerData, IndexData

Emit = Callable[..., None]


class Unavailable(Exception):
    """A handler module could not be imported (or was not trusted); the message says why."""


def import_target(target: str, python_path: Sequence[str] = ()) -> Callable[..., Any]:
    """The function named by ``module:function`` (``function`` may be dotted). Every file
    the import would run (``pkg/__init__.py``, then ``pkg/guards.py``...) is checked
    first, and one someone else could have written is refused (:mod:`hookbus.trust`)."""
    import importlib

    # Appended, not prepended: a project file must not shadow the standard library.
    sys.path.extend(p for p in python_path if p not in sys.path)
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
    return obj  # type: ignore[no-any-return]


def _handlers_in(module: object) -> str:
    """What a misspelled target might have meant: the module's marked handlers."""
    from hookbus.bus.marks import MARK

    names = sorted(n for n, v in vars(module).items() if hasattr(v, MARK)) if hasattr(
        module, "__dict__") else []  # fmt: skip
    if not names:
        return "it has no @hookbus.handler function"
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
            raise Unavailable(f"cannot find {name}: {exc!r}") from None
        if spec is None:
            raise Unavailable(f"no module named {name!r}")
        if spec.origin and os.path.isfile(spec.origin):
            files.append(spec.origin)
        path = spec.submodule_search_locations
    return files


def build_handler(ref: HandlerRef, settings: Settings, emit: Emit) -> Handler:
    """Import and validate one enabled handler; :class:`Unavailable` saying why not.

    What configuration got wrong is repaired rather than the handler lost (and, for a
    fail-closed one, its guard): default options, the budget as a missing timeout.
    """
    try:
        fn = import_target(ref.target, settings.python_path)
    except Unavailable:
        raise
    except BaseException as exc:  # SystemExit from an argparse at import, too
        raise Unavailable(f"cannot import {ref.target}: {exc!r}") from None
    try:
        return Handler(fn, name=ref.name, settings=ref.settings)
    except HandlerError as exc:
        problem: Exception = exc
    except Exception as exc:  # a declaration so wrong that validation itself tripped
        raise Unavailable(f"{ref.target}: {exc!r}") from None
    repaired = ref.settings
    if repaired.options:
        repaired = msgspec.structs.replace(repaired, options={})
    if repaired.fail_closed and repaired.timeout is None:
        repaired = msgspec.structs.replace(repaired, timeout=settings.budget)
    if repaired != ref.settings:
        try:
            handler = Handler(fn, name=ref.name, settings=repaired)
        except HandlerError:
            pass
        else:
            emit("config-invalid", f"{problem}; used timeout={repaired.timeout}, "
                 f"options={repaired.options}", handler=ref.name)  # fmt: skip
            return handler
    raise Unavailable(str(problem))


def stand_in(entry: HandlerData) -> Handler:
    """A handler that could not be loaded, standing in for a fail-closed one: it denies
    every event its last declaration wants (every event, when that is unknown), and says
    why the real one is missing."""
    from hookbus.bus.events import KINDS
    from hookbus.bus.marks import MARK
    from hookbus.bus.replies import Reply

    why = entry["unavailable"] or "it did not load"
    reason = f"hookbus: fail-closed handler {entry['name']} could not be loaded ({why})"

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
    from hookbus.runtime.index import fail_closed

    missing = [e for e in entries if e["name"] not in loaded]
    closed = set(fail_closed(missing))
    return [stand_in(e) for e in missing if e["name"] in closed]


def wanting(entries: Sequence[HandlerData], events: Sequence[Event]) -> list[HandlerData]:
    """The ``entries`` whose declaration wants one of ``events``, or is unknown (an
    unknown one may want any)."""
    chosen = []
    for entry in entries:
        declared = entry["subscription"]
        if declared is None or any(
            subscribed(msgspec.convert(declared, Subscription), ev) for ev in events
        ):
            chosen.append(entry)
    return chosen


def configured(
    files: list[str], previous: IndexData | None, routed: set[str] | None = None
) -> tuple[list[HandlerData], Settings]:
    """The handlers the configuration enables now, each with the declaration the
    ``previous`` index knew (unknown for a new one, or one whose target changed), and
    the settings. With ``routed``, a handler of known declaration is kept only if the
    previous index routed the event to it."""
    from hookbus.config import load as load_config

    loaded = load_config(files)
    known = {h["name"]: h for h in (previous["handlers"] if previous else [])}
    entries: list[HandlerData] = []
    for ref in loaded.settings.handlers:
        last = known.get(ref.name)
        subscription = None
        if last is not None and last["target"] == ref.target and last["subscription"]:
            if routed is not None and ref.name not in routed:
                continue
            subscription = last["subscription"]
        entries.append(
            {
                "name": ref.name,
                "target": ref.target,
                "settings": msgspec.to_builtins(ref.settings),
                "subscription": subscription,
                "unavailable": None,
            }
        )
    return entries, loaded.settings


def load_wanted(
    entries: Sequence[HandlerData],
    settings: Settings,
    emit: Emit,
    announce: Callable[[str], None],
) -> list[Handler]:
    """Import the handlers ``entries`` name (each announced first, so that a hang is
    blamed on the right module), plus stand-ins for the fail-closed ones that cannot be
    loaded now. ``announce("")`` says the imports are over."""
    handlers = []
    missing: list[HandlerData] = []
    for entry in entries:
        if entry["unavailable"] is not None or entry["subscription"] is None:
            missing.append(entry)
            continue
        ref = msgspec.convert(entry, HandlerRef)
        announce(ref.name)
        try:
            handlers.append(build_handler(ref, settings, emit))
        except Unavailable as exc:
            missing.append({**entry, "unavailable": str(exc)})
            emit("handler-unavailable", str(exc), handler=ref.name)
    announce("")
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
