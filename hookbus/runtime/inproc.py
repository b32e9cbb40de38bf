"""The in-process entry of the runtime, for hosts that call Python callbacks instead of
running ``hookbus run`` (a Hermes Agent plugin)::

    result = inproc.dispatch("claude", payload)  # a mapping, or the payload's bytes
    result.output    # the HookOutput the hook command would have written
    result.event     # the decoded event; result.dispatch: merged reply, each outcome

The promises of ``hookbus run`` hold: a valid reply by the deadline, never an exception
(a failure is a diagnostic and the fallback), a fail-closed guard never bypassed. One
more is added: the host's process is left as it was found.

Handler modules are imported in forked children only, never here: an import would grow
the host's ``sys.modules`` and ``sys.path`` (:func:`compile.import_target` appends the
configuration's ``python_path``) and run the module's import-time code in the host, and
a handler stuck in C code holding the GIL (a runaway regex) would stop every thread of
the host, where a child is simply killed. So each dispatch forks one worker
(:mod:`~hookbus.runtime.isolate`) that imports the handlers the event wants, stands in
for the fail-closed ones that cannot load (:func:`compile.stand_ins`), dispatches and
sends back the encoded reply, the dispatch and its diagnostics, which this process
records (:func:`diagnostics.record`; dropped, not sent to the host's stderr, when the
log is unusable). The fallback is encoded before the fork: the host's no-opinion, or the
refusal owed to the fail-closed handlers that want the event. A fork and the wanted
imports per call is what ``hookbus run`` pays too, less an interpreter's start.

What is cached, per set of configuration files, is the compiled index (settings, each
handler's declaration): :func:`snapshot`. It is read from ``hookbus run``'s cache or
compiled in a watched child (which caches it for ``hookbus run`` in turn), and kept while
:func:`index.is_fresh` holds: editing a configuration file or a watched handler module
recompiles it. A module whose import hung, or killed the child, is skipped for a minute
(:func:`compile.write_skip`); a call that finds no index refuses if any configured
handler may be fail-closed, since what they want is unknown.

Forking a host with threads is what :mod:`~hookbus.runtime.isolate` explains (and
silences Python 3.12's warning about, for its own fork only); its child also lets go of
the host loop's signal wakeup fd. Signal handlers, ``sys.path`` and event loops are the
children's to change, never the host's.

:func:`dispatch` blocks its thread for the budget at most and enters no event loop, so
it works inside a running one; :func:`dispatch_async` runs it on a worker thread so
that the loop goes on meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, cast

import msgspec

from hookbus import hosts
from hookbus.bus.budgets import budget
from hookbus.bus.dispatch import Bus, Dispatch, Outcome
from hookbus.bus.errors import DecodeError
from hookbus.bus.events import Event
from hookbus.bus.host import Driver, Dropped
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import Reply
from hookbus.bus.subscriptions import guards
from hookbus.local import diagnostics
from hookbus.local.discover import config_paths
from hookbus.runtime import load
from hookbus.runtime.call import answer_owed
from hookbus.runtime.compile import compile_index, save
from hookbus.runtime.config import Settings
from hookbus.runtime.config import load as load_config
from hookbus.runtime.index import Lookup, is_fresh, read
from hookbus.runtime.isolate import Channel, Child, Work, run_child
from hookbus.runtime.load import read_skip, write_skip
from hookbus.runtime.peek import sniff
from hookbus.runtime.process import Result, decode, process_event, unreadable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import HandlerData, IndexData

Payload = Mapping[str, object] | bytes
#: Seconds the worker keeps, inside the budget, to merge, encode and send its reply.
RESERVE = 0.1
#: A child is gone this long after its deadline, whatever it is doing.
AFTERLIFE = 30.0
_IMPORTING = "I"  # the note naming the handler being imported (empty: none)


class Snapshot:
    """The configuration in effect for a set of files, compiled: settings and index."""

    __slots__ = ("data", "files", "settings")

    def __init__(self, files: list[str], data: IndexData) -> None:
        self.files = files
        self.data = data
        self.settings = msgspec.convert(data["settings"], Settings)

    @property
    def fresh(self) -> bool:
        return is_fresh(self.data, self.files)


_snapshots: dict[tuple[str, ...], Snapshot] = {}


class _Answer(msgspec.Struct, frozen=True, kw_only=True):
    """What a child sends back: an output frame or an index, and its diagnostics."""

    output: bytes | None = None
    reply: Reply | None = None
    outcomes: tuple[Outcome, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    index: dict[str, Any] | None = None
    diagnostics: bytes = b""


def snapshot(project: str | None = None) -> Snapshot | None:
    """The compiled configuration in effect for ``project`` (default: the working
    directory), cached while fresh; None without configuration, or when it could not be
    compiled within its budget."""
    files = config_paths(project)
    return _snapshot(files, time.monotonic(), None) if files else None


def dispatch(
    host: str,
    payload: Payload,
    *,
    native: str | None = None,
    project: str | None = None,
    timeout: float | None = None,
) -> Result:
    """Decode ``payload`` (``native`` names its event when it does not), dispatch it to
    the handlers configured for ``project`` (default: the folder the host names, else the
    event's working directory), and encode the reply; ``timeout`` is the host's for this event.
    Never raises: even an unknown host is a diagnostic and exit code 1, as in ``hookbus run``."""
    started = time.monotonic()
    try:
        driver = hosts.driver(host)
    except KeyError as exc:
        diagnostics.emit("usage-invalid", str(exc.args[0]))
        return Result(output=HookOutput(stderr=f"hookbus: {exc.args[0]}\n".encode(), exit_code=1))
    fallback = [driver.no_opinion(native)]  # sharpened as the dispatch learns more
    try:
        return _dispatch(driver, payload, native, project, timeout, started, fallback)
    except Exception:  # a bug of ours must not become the host's problem
        import traceback

        diagnostics.emit("internal-error", "hookbus failed; answering the fallback",
                         host=host, error=traceback.format_exc(limit=8))  # fmt: skip
        return Result(output=fallback[0])


async def dispatch_async(
    host: str,
    payload: Payload,
    *,
    native: str | None = None,
    project: str | None = None,
    timeout: float | None = None,
) -> Result:
    """:func:`dispatch` on a worker thread, the event loop running on meanwhile (a
    cancelled caller still waits for it, within its budget: the worker is never orphaned)."""
    import anyio.to_thread

    def run() -> Result:
        return dispatch(host, payload, native=native, project=project, timeout=timeout)

    return await anyio.to_thread.run_sync(run)


def _dispatch(  # noqa: PLR0917
    driver: Driver,
    payload: Payload,
    native: str | None,
    project: str | None,
    timeout: float | None,
    started: float,
    fallback: list[HookOutput],
) -> Result:
    data = payload if isinstance(payload, bytes) else b""
    event: Event | None = None
    problem = ""
    try:
        if not isinstance(payload, bytes):
            data = msgspec.json.encode(payload)
        event = decode(driver, data, native, diagnostics.emit)
    except (DecodeError, TypeError, msgspec.EncodeError) as exc:
        problem = str(exc)
    native = event.native if event else native or sniff(data, driver.facts)
    fallback[0] = no_opinion = driver.no_opinion(native)
    host_timeout = timeout or driver.facts.timeout_for(native)
    files = config_paths(project or _project(driver, payload, event)) if native else []
    found = _snapshot(files, started, host_timeout) if files else None
    if event is None or found is None:  # what the handlers want, or the event, is unknown
        owed = _blind_guards(files) if found is None else _routed(found, driver, native)
        if event is not None:
            why = "its handlers could not be loaded in time"
            return Result(output=answer_owed(driver, native, owed, why), event=event)
        diagnostics.emit("input-invalid", problem, host=driver.name, native=native,
                         bytes=len(data), denied_for=[g["name"] for g in owed] or None)  # fmt: skip
        return Result(output=unreadable(driver, native, owed))
    skip = read_skip(files)  # a module whose import hung is not imported for now
    entries: list[HandlerData] = [
        {**e, "unavailable": skip[c]} if (c := e.get("config") or e["name"]) in skip else e
        for e in load.wanting(
            found.data["handlers"],
            (event, *driver.derive(event)),
            driver.capabilities(event.native),
        )
    ]
    if not entries:
        return Result(output=no_opinion, event=event)
    owed = guards(entries)
    fallback[0] = answer_owed(driver, native, owed, "no answer in time")
    deadline = started + budget(found.settings.budget, host_timeout)
    where: dict[str, Any] = {"host": driver.name, "native": native, "session_id": event.session_id}
    if time.monotonic() >= deadline:
        diagnostics.emit("watchdog-fired", "the budget was spent before dispatch", **where)
        return Result(output=fallback[0], event=event)
    work = _worker(driver, event, entries, found.settings, deadline, fallback[0])
    answered = "the refusal (fail-closed)" if owed else "no opinion (fail-open)"
    answer = _run(work, deadline, files, f"the worker; answered {answered}", where)
    if answer is None or answer.output is None:
        return Result(output=fallback[0], event=event)
    done = None if answer.reply is None else Dispatch(event=event, reply=answer.reply,
        outcomes=answer.outcomes, dropped=answer.dropped)  # fmt: skip
    return Result(output=HookOutput.from_frame(answer.output), event=event, dispatch=done)


def _project(driver: Driver, payload: Payload, event: Event | None) -> str | None:
    """The project folder the host names (environment, payload), else the event's working
    directory: a hook command runs there, while this process may be anywhere."""
    if isinstance(payload, bytes):
        with contextlib.suppress(msgspec.DecodeError):
            payload = msgspec.json.decode(payload)
    mapping = payload if isinstance(payload, Mapping) else None
    return driver.facts.project_dir(os.environ, mapping) or (event.cwd if event else None)


def _routed(found: Snapshot, driver: Driver, native: str | None) -> list[HandlerData]:
    """The fail-closed handlers the index routes ``native`` to (any tool), or unknown."""
    lookup = Lookup(found.files, "fresh", found.data)
    if native is None:  # any event: who may want every one
        return guards(lookup.unknown_handlers())
    return guards(lookup.candidates(driver.name, native, None))


def _blind_guards(files: list[str]) -> list[HandlerData]:
    """With no index: the fail-closed handlers configured now, by their last known
    declaration, or unknown (and so counted as fail-closed)."""
    if not files:
        return []
    cached = _snapshots.get(tuple(files))
    last = cached.data if cached is not None else read(files).data
    return guards(load.configured(files, last)[0])


def _snapshot(files: list[str], started: float, host_timeout: float | None) -> Snapshot | None:
    """The cached snapshot while fresh, else ``hookbus run``'s index if fresh, else one
    compiled within the configuration's budget (under the host's timeout, when given)."""
    key = tuple(files)
    cached = _snapshots.get(key)
    if cached is not None and cached.fresh:
        return cached
    lookup = read(files)
    if lookup.fresh:
        data = lookup.data
    else:
        own = load_config(files).settings.budget
        limit = own if host_timeout is None else budget(own, host_timeout)
        data = _compile(files, cached, lookup, started + limit)
    if data is None:
        return None
    _snapshots[key] = found = Snapshot(files, data)
    return found


def _compile(
    files: list[str], cached: Snapshot | None, lookup: Lookup, deadline: float
) -> IndexData | None:
    """Compile the index in a watched child, which then caches it for ``hookbus run``."""
    previous = cached.data if cached is not None else lookup.data
    skip = read_skip(files)

    def work(channel: Channel) -> Callable[[], None]:
        _enter_child()
        done = compile_index(files, previous, skip=skip,
            progress=lambda name: channel.note(_IMPORTING, name.encode()))  # fmt: skip
        index = cast("dict[str, Any]", done.data)
        channel.result(msgspec.msgpack.encode(_Answer(index=index, diagnostics=diagnostics.take())))
        return lambda: save(files, done.data)

    answer = _run(work, deadline, files, "compiling the subscription index", {})
    return cast("IndexData | None", answer.index if answer else None)


def _worker(  # noqa: PLR0917
    driver: Driver,
    event: Event,
    entries: list[HandlerData],
    settings: Settings,
    deadline: float,
    fallback: HookOutput,
) -> Work:
    """The dispatch as the forked worker runs it: import, build the bus, dispatch."""

    def work(channel: Channel) -> bytes:
        _enter_child()
        try:
            announce = lambda name: channel.note(_IMPORTING, name.encode())  # noqa: E731
            handlers = load.load_wanted(entries, settings, diagnostics.emit, announce)
            bus = Bus(handlers, settings=settings, budget=settings.budget)
            result = process_event(event, driver=driver, bus=bus, emit=diagnostics.emit,
                                   deadline=deadline - RESERVE)  # fmt: skip
            done = result.dispatch or Dispatch(event=event, reply=Reply())
            answer = _Answer(output=result.output.to_frame(), reply=done.reply,
                             outcomes=done.outcomes, dropped=done.dropped)  # fmt: skip
        except Exception:
            import traceback

            diagnostics.emit("internal-error", "the worker failed; answering the fallback",
                             host=driver.name, error=traceback.format_exc(limit=8))  # fmt: skip
            answer = _Answer(output=fallback.to_frame())
        lines = diagnostics.take()
        try:
            return msgspec.msgpack.encode(msgspec.structs.replace(answer, diagnostics=lines))
        except Exception:  # a reply holding what msgpack cannot carry: its output still can
            return msgspec.msgpack.encode(_Answer(output=answer.output, diagnostics=lines))

    return work


def _enter_child() -> None:
    """First in a child: its diagnostics are the parent's to record (the child lets go
    of the host loop's signal wakeup fd in :mod:`~hookbus.runtime.isolate`), and what it
    imports comes from no relative entry of the host's import path (an empty or ``.``
    entry of the ``PYTHONPATH`` the host was started with is the working folder, the
    agent's: see :mod:`hookbus.local.interpreter`)."""
    diagnostics.take()
    diagnostics.defer()
    sys.path[:] = [p for p in sys.path if os.path.isabs(p)]


def _run(
    work: Work, deadline: float, files: list[str], what: str, where: dict[str, Any]
) -> _Answer | None:
    """Run ``work`` in a child until ``deadline``: its answer, or None and a diagnostic."""
    child = _fork(work, deadline)
    if child.status == "ok":
        try:
            answer = msgspec.msgpack.decode(child.data, type=_Answer)
        except (msgspec.DecodeError, ValueError) as exc:
            diagnostics.emit("worker-died", f"{what}: unreadable answer ({exc})", **where)
            return None
        if answer.diagnostics and diagnostics.usable() is None:
            diagnostics.record(answer.diagnostics)
        return answer
    hung = child.notes.get(_IMPORTING, b"").decode("utf-8", "replace")
    how = "no answer in time" if child.status == "timeout" else f"the child {child.status}"
    code = "watchdog-fired" if child.status == "timeout" else f"worker-{child.status}"
    doing = f" while importing handler {hung}" if hung else ""
    diagnostics.emit(code, f"{what}: {how}{doing}", handler=hung or None, **where)
    if hung:
        write_skip(files, hung, f"importing its module: {how}")
    return None


def _fork(work: Work, deadline: float) -> Child:
    return run_child(work, deadline=deadline, lifetime=deadline - time.monotonic() + AFTERLIFE)
