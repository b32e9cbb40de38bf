"""The subscription index: which handlers want which native events of which host.

``hookbus run`` consults it before anything heavy is imported, so an event nobody wants
is answered without msgspec, anyio or any handler module. The index is compiled from the
configuration and the handlers' own ``@handler`` declarations, and cached as JSON in the
state directory. It is rebuilt (the only time handler modules are imported for it) when a
configuration file or a handler's module file changes, or hookbus's version does.

Reading it uses the standard library only; building it is in :func:`build`.
"""

from __future__ import annotations

import contextlib
import json
import os
import time

from hookbus import __version__, diagnostics
from hookbus.locations import config_paths, state_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from hookbus.bus.dispatch import Handler
    from hookbus.config import Settings

FORMAT = 1
#: How long a hook waits for the index to be compiled (importing the handler modules)
#: before it goes on with the previous index, or none; the compile finishes in the
#: background. Counted inside the hook's budget (Claude's SessionEnd gets 1 s in all).
COMPILE_WAIT = 0.5
#: Most a compiling child may live, stuck or not.
COMPILE_LIFETIME = 30.0
#: An index with a handler that failed to load is compiled again at most this often.
RETRY_INCOMPLETE = 60.0


def _stat(path: str) -> list[object]:
    try:
        st = os.stat(path)
    except OSError:
        return [path, None, None]
    return [path, st.st_mtime_ns, st.st_size]


def index_path(files: list[str]) -> str:
    """One cache file per set of configuration files, interpreter and hookbus version."""
    import sys
    import zlib

    key = "\0".join([*files, sys.executable, __version__])
    crc = zlib.crc32(key.encode("utf-8", "surrogateescape"))
    return os.path.join(state_dir(), "index", f"{crc:08x}.json")


def _fresh(data: object, files: list[str]) -> bool:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return False
    if data.get("hookbus") != __version__:
        return False
    if data.get("configs") != [_stat(p) for p in files]:
        return False
    if not data.get("complete") and time.time() >= float(data.get("retry_at", 0)):
        return False  # a handler failed to load: try again, it may be installed by now
    watched = data.get("watch")
    return isinstance(watched, list) and all(_stat(w[0]) == w for w in watched)


def _read(path: str) -> object:
    try:
        with open(path, "rb") as f:
            return json.loads(f.read())
    except (OSError, ValueError):
        return None


def load(cwd: str | None = None, *, wait: float = COMPILE_WAIT) -> dict[str, Any] | None:
    """The index for the configuration in effect at ``cwd``; None when nothing is configured.

    A stale cache is compiled again, in an isolated child, for at most ``wait`` seconds.
    Past that, or if the compile fails, the previous index of these files (if any) is used:
    a slow or broken handler module must not switch every other guard off.
    """
    files = config_paths(cwd)
    if not files:
        return None
    path = index_path(files)
    data = _read(path)
    if _fresh(data, files):
        return data  # type: ignore[return-value]
    previous = isinstance(data, dict) and data.get("format") == FORMAT
    fresh = build_isolated(files, path, time.monotonic() + wait, wait_for_others=not previous)
    if fresh is not None:
        return fresh
    if previous:
        diagnostics.emit("index-stale", f"using the previous subscription index for {files}")
        return data  # type: ignore[return-value]
    return None


def build_isolated(
    files: list[str],
    path: str,
    deadline: float,
    *,
    retry: bool = False,
    wait_for_others: bool = True,
) -> dict[str, Any] | None:
    """Compile the index in a forked child, so that handler modules imported for it run
    with no access to the host's stdout and under a deadline; None when it is late.

    One compile at a time per index: other hooks wait for its result instead of starting
    their own (many hooks fire at once when an agent runs tools in parallel).
    """
    import fcntl

    from hookbus.isolate import run_child

    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        lock = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        lock = -1
    try:
        if lock >= 0:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # another hook is compiling this index: wait for its result
        os.close(lock)
        return _await_compiled(files, path, deadline) if wait_for_others else None
    try:
        if not retry and _failed_recently(files, path):
            return None  # a compile died or hung: it is retried once a minute, not per call
        # The child inherits the locked file: the lock lasts as long as the compile does,
        # even when this hook stops waiting for it.
        child = run_child(
            lambda: json.dumps(build(files, path)).encode(),
            deadline=deadline,
            lifetime=COMPILE_LIFETIME,
            kill_late=False,
        )
    finally:
        if lock >= 0:
            os.close(lock)
    if child.status == "ok":
        return json.loads(child.data)  # type: ignore[no-any-return]
    late = child.status == "timeout"
    diagnostics.emit(
        "index-unavailable",
        f"compiling the subscription index for {files}: {child.status}"
        + ("; it goes on in the background" if late else "; a handler module kills its importer?"),
    )
    return None


def _failed_recently(files: list[str], path: str) -> bool:
    marker = _read(f"{path}.compiling")
    if not isinstance(marker, dict) or marker.get("configs") != [_stat(p) for p in files]:
        return False
    return time.time() < float(marker.get("retry_at", 0))


def _await_compiled(files: list[str], path: str, deadline: float) -> dict[str, Any] | None:
    while time.monotonic() < deadline:
        data = _read(path)
        if _fresh(data, files):
            return data  # type: ignore[return-value]
        time.sleep(0.02)
    return None


def wanted(index: dict[str, Any] | None, host: str, native: str, tool: object) -> list[int]:
    """Indexes of the handlers that may want this native event (a superset: the bus filters
    exactly after the full decode). Empty means nobody: answer at once."""
    if index is None:
        return []
    route = index.get("routes", {}).get(host, {}).get(native)
    if route is None:
        return []
    tools = route["tools"]
    if tools is None or not isinstance(tool, str):
        return list(route["handlers"])
    if tool in tools["names"] or tool.startswith(tuple(tools["prefixes"])):
        return list(route["handlers"])
    unknown = tool not in tools["known"] and not tool.startswith(tuple(tools["known_prefixes"]))
    return list(route["handlers"]) if tools["unknown"] and unknown else []


def fail_closed(entries: Sequence[dict[str, Any]]) -> list[str]:
    """The names of the fail-closed handlers among index ``entries``."""
    return [e["name"] for e in entries if e["subscription"].get("fail_closed")]


# -- building (slow path: imports msgspec, the drivers and the handler modules) --------


def import_target(target: str, python_path: Sequence[str] = ()) -> Callable[..., Any]:
    """The function named by ``module:function`` (``function`` may be dotted)."""
    import importlib
    import sys

    # Appended, not prepended: a project file must not shadow the standard library.
    sys.path.extend(p for p in python_path if p not in sys.path)
    module_name, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj  # type: ignore[no-any-return]


def module_stat(target: str, python_path: Sequence[str]) -> list[object] | None:
    """The stat of ``target``'s module file, taken *before* it is imported, so that an edit
    made while it is being imported makes the cache stale rather than wrongly fresh."""
    import importlib.util
    import sys

    sys.path.extend(p for p in python_path if p not in sys.path)
    try:
        spec = importlib.util.find_spec(target.partition(":")[0])
    except Exception:  # its package failed to import; the import proper will say why
        return None
    origin = spec.origin if spec else None
    return _stat(origin) if origin and os.path.isfile(origin) else None


def build_handlers(settings: Settings, emit: Callable[..., None]) -> list[Handler]:
    """Import and validate the enabled handlers; each failure is a diagnostic, not an error."""
    import msgspec

    from hookbus.bus.dispatch import Handler
    from hookbus.errors import HandlerError

    built = []
    for ref in settings.handlers:
        try:
            fn = import_target(ref.target, settings.python_path)
        except BaseException as exc:  # SystemExit from an argparse at import, too
            emit("handler-unavailable", f"cannot import {ref.target}: {exc!r}", handler=ref.name)
            continue
        try:
            built.append(Handler(fn, name=ref.name, settings=ref.settings))
            continue
        except HandlerError as exc:
            problem = exc
        except Exception as exc:  # a declaration so wrong that validation itself tripped
            emit("handler-invalid", f"{ref.target}: {exc!r}", handler=ref.name)
            continue
        # Repair what configuration got wrong rather than lose the handler (and, for a
        # fail-closed one, its guard): default options, the budget as missing timeout.
        repaired = ref.settings
        if repaired.options:
            repaired = msgspec.structs.replace(repaired, options={})
        if repaired.fail_closed and repaired.timeout is None:
            repaired = msgspec.structs.replace(repaired, timeout=settings.budget)
        if repaired != ref.settings:
            try:
                built.append(Handler(fn, name=ref.name, settings=repaired))
                emit("config-invalid", f"{problem}; used timeout={repaired.timeout}, "
                     f"options={repaired.options}", handler=ref.name)  # fmt: skip
                continue
            except HandlerError:
                pass
        emit("handler-invalid", str(problem), handler=ref.name)
    return built


def routes(host: str, handlers: Sequence[Handler | _Declared]) -> dict[str, dict[str, Any]]:
    """Native event name -> the handlers (by position) that may want it, and which tools."""
    from hookbus import drivers
    from hookbus.bus.dispatch import TOOL_EVENT_KINDS

    driver = drivers.load(host)
    out: dict[str, dict[str, Any]] = {}
    for i, handler in enumerate(handlers):
        sub = handler.subscription
        if sub.hosts and host not in sub.hosts:
            continue
        for kind in sub.kinds:
            patterns = ("edit",) if kind == "after-edit" and not sub.tools else sub.tools
            tool_route = driver.tool_route(patterns) if kind in TOOL_EVENT_KINDS else None
            for native in driver.natives(kind, sub.natives):
                route = out.setdefault(native, {"handlers": [], "tools": "unset"})
                if i not in route["handlers"]:
                    route["handlers"].append(i)
                if tool_route is None or route["tools"] is None:
                    route["tools"] = None
                    continue
                tools = route["tools"]
                if tools == "unset":
                    tools = route["tools"] = {
                        "names": [], "prefixes": [], "unknown": False,
                        "known": [], "known_prefixes": [],
                    }  # fmt: skip
                tools["names"] = sorted({*tools["names"], *tool_route.names})
                tools["prefixes"] = sorted({*tools["prefixes"], *tool_route.prefixes})
                if tool_route.unknown:
                    tools["unknown"] = True
                    tools["known"] = list(tool_route.known)
                    tools["known_prefixes"] = list(tool_route.known_prefixes)
    return out


class _Declared:
    """A handler known by its last good declaration only (its module fails to load now)."""

    __slots__ = ("name", "subscription")

    def __init__(self, name: str, subscription: Any) -> None:
        self.name = name
        self.subscription = subscription


def compile_index(files: list[str], previous: object = None) -> dict[str, Any]:
    """Load the configuration, validate its handlers and compile the routes of every host.

    A handler whose module fails to load keeps the routes of its last good declaration
    (from ``previous``, the index this one replaces): the worker then fails to load it too,
    and a fail-closed one denies, instead of its guard silently vanishing.
    """
    import sys

    import msgspec

    from hookbus import drivers
    from hookbus.bus.marks import Subscription
    from hookbus.config import load as load_config

    configs = [_stat(p) for p in files]  # before reading them: see module_stat
    problems: list[str] = []

    def emit(code: str, message: str, **fields: Any) -> None:
        problems.append(f"{code}: {fields.get('handler') or fields.get('file') or ''}: {message}")
        diagnostics.emit(code, message, **fields)

    loaded = load_config(files)
    for problem in loaded.problems:
        emit("config-invalid", problem.problem, file=problem.source)
    settings = loaded.settings
    watch = [module_stat(r.target, settings.python_path) for r in settings.handlers]
    imported_before = set(sys.modules)
    handlers = build_handlers(settings, emit)
    # Also watch the project modules the handlers pulled in (guards/__init__.py importing
    # guards/impl.py): an edit there changes a declaration too.
    roots = tuple(os.path.join(p, "") for p in settings.python_path)
    for name in set(sys.modules) - imported_before:
        source = getattr(sys.modules[name], "__file__", None)
        if roots and isinstance(source, str) and source.startswith(roots):
            watch.append(_stat(source))
    complete = len(handlers) == len(settings.handlers)
    entries: list[Any] = list(handlers)
    if not complete and isinstance(previous, dict):
        loaded_names = {h.name for h in handlers}
        known = {e.get("name"): e for e in previous.get("handlers", []) if isinstance(e, dict)}
        for ref in settings.handlers:
            last = known.get(ref.name)
            if ref.name not in loaded_names and last and last.get("target") == ref.target:
                subscription = msgspec.convert(last["subscription"], Subscription)
                entries.append(_Declared(ref.name, subscription))
                emit("handler-unavailable", "kept with its last good declaration",
                     handler=ref.name)  # fmt: skip
    by_name = {r.name: r for r in settings.handlers}
    compiled = {
        "format": FORMAT,
        "hookbus": __version__,
        "configs": configs,
        "watch": sorted({json.dumps(w): w for w in watch if w is not None}.values(), key=str),
        "complete": complete,
        "problems": problems,
        "retry_at": 0 if complete else time.time() + RETRY_INCOMPLETE,
        "settings": msgspec.to_builtins(loaded.settings),
        "handlers": [
            {
                "name": h.name,
                "subscription": msgspec.to_builtins(h.subscription),
                "settings": msgspec.to_builtins(by_name[h.name].settings),
                "target": by_name[h.name].target,
            }
            for h in entries
        ],
        "routes": {host: routes(host, entries) for host in drivers.HOSTS},
    }
    # The same plain JSON data a later run reads back from the cache (lists, not tuples).
    return json.loads(msgspec.json.encode(compiled))  # type: ignore[no-any-return]


def build(files: list[str], path: str | None = None) -> dict[str, Any]:
    """Compile the index for ``files`` and cache it at ``path`` (atomically; best effort).

    A marker says a compile is under way until it succeeds: a compile that dies or hangs
    (a handler module at fault) leaves it, and hooks then retry once a minute only.
    """
    path = path or index_path(files)
    marker = f"{path}.compiling"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        with open(marker, "w", encoding="utf-8") as f:
            json.dump({"configs": [_stat(p) for p in files],
                       "retry_at": time.time() + RETRY_INCOMPLETE}, f)  # fmt: skip
    except OSError:
        pass
    data = compile_index(files, _read(path))
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError as exc:
        diagnostics.emit("index-unwritable", f"cannot cache the index at {path}: {exc}")
    with contextlib.suppress(OSError):
        os.unlink(marker)
    return data
