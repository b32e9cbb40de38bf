"""The subscription index: which handlers want which native events of which host.

``hookbus run`` consults it before anything heavy is imported, so an event nobody wants
is answered without msgspec, anyio or any handler module. The index is compiled from the
configuration and the handlers' own ``@handler`` declarations, and cached as JSON in the
state directory. It is rebuilt (the only time handler modules are imported for it) when a
configuration file or a handler's module file changes, or hookbus's version does.

Reading it uses the standard library only; building it is in :func:`build`.
"""

from __future__ import annotations

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
#: before it answers without it; the compiling child finishes in the background.
COMPILE_WAIT = 1.0
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


def load(cwd: str | None = None) -> dict[str, Any] | None:
    """The index for the configuration in effect at ``cwd``; None when nothing is configured.

    A missing or stale cache is rebuilt (and written back) on the spot.
    """
    files = config_paths(cwd)
    if not files:
        return None
    path = index_path(files)
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read())
    except (OSError, ValueError):
        data = None
    if _fresh(data, files):
        return data  # type: ignore[no-any-return]
    return build_isolated(files, path)


def build_isolated(files: list[str], path: str) -> dict[str, Any] | None:
    """Compile the index in a forked child, so that handler modules imported for it run
    with no access to the host's stdout and under a deadline; None when it is late."""
    from hookbus.isolate import run_child

    child = run_child(
        lambda: json.dumps(build(files, path)).encode(),
        deadline=time.monotonic() + COMPILE_WAIT,
        lifetime=COMPILE_LIFETIME,
        kill_late=False,
    )
    if child.status == "ok":
        return json.loads(child.data)  # type: ignore[no-any-return]
    diagnostics.emit(
        "index-unavailable",
        f"compiling the subscription index for {files}: {child.status}"
        + (
            f" after {COMPILE_WAIT}s; it goes on in the background"
            if child.status == "timeout"
            else ""
        )
        + "; this call answers without handlers",
    )
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


def routes(host: str, handlers: Sequence[Handler]) -> dict[str, dict[str, Any]]:
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


def compile_index(files: list[str]) -> dict[str, Any]:
    """Load the configuration, validate its handlers and compile the routes of every host."""
    import msgspec

    from hookbus import drivers
    from hookbus.config import load as load_config

    configs = [_stat(p) for p in files]  # before reading them: see module_stat
    loaded = load_config(files)
    for problem in loaded.problems:
        diagnostics.emit("config-invalid", problem.problem, file=problem.source)
    settings = loaded.settings
    watch = [module_stat(r.target, settings.python_path) for r in settings.handlers]
    handlers = build_handlers(settings, diagnostics.emit)
    complete = len(handlers) == len(settings.handlers)
    compiled = {
        "format": FORMAT,
        "hookbus": __version__,
        "configs": configs,
        "watch": [w for w in watch if w is not None],
        "complete": complete,
        "retry_at": 0 if complete else time.time() + RETRY_INCOMPLETE,
        "settings": msgspec.to_builtins(loaded.settings),
        "handlers": [
            {
                "name": h.name,
                "subscription": msgspec.to_builtins(h.subscription),
                "settings": msgspec.to_builtins(
                    next(r.settings for r in loaded.settings.handlers if r.name == h.name)
                ),
                "target": next(r.target for r in loaded.settings.handlers if r.name == h.name),
            }
            for h in handlers
        ],
        "routes": {host: routes(host, handlers) for host in drivers.HOSTS},
    }
    # The same plain JSON data a later run reads back from the cache (lists, not tuples).
    return json.loads(msgspec.json.encode(compiled))  # type: ignore[no-any-return]


def build(files: list[str], path: str | None = None) -> dict[str, Any]:
    """Compile the index for ``files`` and cache it at ``path`` (atomically; best effort)."""
    data = compile_index(files)
    path = path or index_path(files)
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError as exc:
        diagnostics.emit("index-unwritable", f"cannot cache the index at {path}: {exc}")
    return data
