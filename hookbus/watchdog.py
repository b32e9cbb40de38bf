"""The process watchdog: a valid reply reaches the host before its deadline, whatever the
handlers do.

Per-handler timeouts inside the bus are cooperative: a handler stuck in C code that holds
the GIL (a runaway regex, a blocking extension call) cannot be interrupted from another
thread. So ``hookbus run`` forks once it knows a handler wants the event: the forked
worker imports the handlers, dispatches and sends back the encoded reply; this process,
which imports no handler, waits on a pipe until the deadline. If nothing has arrived by
then it kills the worker and answers the fallback it encoded *before* forking: "no
opinion", or a deny when one of the handlers that wanted the event is fail-closed.

Work the handlers started with ``spawn_detached`` runs in its own session and survives.
"""

from __future__ import annotations

import gc
import os
import select
import signal
import time
from typing import Any

import msgspec

from hookbus import diagnostics, drivers
from hookbus.bus.dispatch import budget
from hookbus.bus.events import Event, derived
from hookbus.bus.marks import Subscription, subscribed
from hookbus.bus.replies import Reply
from hookbus.errors import DecodeError
from hookbus.run import Options
from hookbus.types import Driver, HookOutput

#: Time the worker keeps, inside the budget, to merge, encode and send its reply.
WORKER_RESERVE = 0.1


def dispatch_guarded(  # noqa: PLR0917
    data: bytes,
    opts: Options,
    native: str,
    index: dict[str, Any],
    wanted: list[int],
    started: float,
) -> HookOutput:
    driver = drivers.load(opts.host)
    try:
        event = driver.decode(data, native)
    except DecodeError as exc:
        diagnostics.emit("input-invalid", str(exc), host=opts.host, path=exc.path,
                         bytes=len(data))  # fmt: skip
        return driver.no_opinion
    entries = [index["handlers"][i] for i in wanted]
    events = (event, *derived(event))
    chosen = [
        e
        for e in entries
        if any(subscribed(msgspec.convert(e["subscription"], Subscription), ev) for ev in events)
    ]
    if not chosen:
        return driver.no_opinion

    limit = opts.timeout or driver.deadline(native)
    settings_budget = float(index["settings"].get("budget") or 5.0)
    deadline = started + budget(settings_budget, limit)
    closed = [e["name"] for e in chosen if e["subscription"].get("fail_closed")]
    if closed:
        why = f"hookbus: fail-closed handler {', '.join(closed)} did not answer in time"
        fallback = driver.encode(event, Reply.deny(why)).output
    else:
        fallback = driver.no_opinion

    read_end, write_end = os.pipe()
    # Keep the collector away from what both processes share: a collection in the
    # worker would touch (and so copy) every page of the parent's heap.
    gc.freeze()
    try:
        pid = os.fork()
    except OSError as exc:
        os.close(read_end)
        os.close(write_end)
        diagnostics.emit("fork-failed", f"cannot start the worker ({exc}); answered the fallback",
                         host=event.host, native=event.native)  # fmt: skip
        return fallback
    if pid == 0:  # the worker
        os.close(read_end)
        _work(write_end, event, driver, index, chosen, fallback, deadline - WORKER_RESERVE)
    os.close(write_end)
    received = _receive(read_end, deadline)
    os.close(read_end)
    where = {"host": event.host, "native": event.native, "session_id": event.session_id}
    if received is None:
        os.kill(pid, signal.SIGKILL)
        diagnostics.emit(
            "watchdog-fired",
            f"no reply within {deadline - started:.3f}s; worker killed, answered "
            + ("deny (fail-closed)" if closed else "no opinion (fail-open)"),
            handlers=[e["name"] for e in chosen],
            **where,
        )
        output = fallback
    else:
        try:
            output = msgspec.msgpack.decode(received, type=HookOutput)
        except msgspec.DecodeError:
            diagnostics.emit("worker-died", "the worker sent no reply", **where)
            output = fallback
    os.waitpid(pid, 0)
    return output


def _receive(fd: int, deadline: float) -> bytes | None:
    """Everything written to ``fd`` until EOF, or None when the deadline comes first."""
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return None
        chunk = os.read(fd, 65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _work(  # noqa: PLR0917
    fd: int,
    event: Event,
    driver: Driver,
    index: dict[str, Any],
    chosen: list[dict[str, Any]],
    fallback: HookOutput,
    deadline: float,
) -> None:
    """Run in the forked worker: build the wanted handlers, dispatch, send, exit."""
    output = fallback
    gc.disable()  # a short-lived process: memory is returned at exit
    try:
        _quiet_stdio()
        from hookbus.bus.dispatch import Bus
        from hookbus.config import HandlerRef, Settings
        from hookbus.index import build_handlers
        from hookbus.process import process_event

        settings = msgspec.convert(index["settings"], Settings)
        refs = tuple(msgspec.convert(e, HandlerRef) for e in chosen)
        handlers = build_handlers(
            msgspec.structs.replace(settings, handlers=refs), diagnostics.emit
        )
        if len(handlers) == len(refs) or not any(
            e["subscription"].get("fail_closed") for e in chosen
        ):
            bus = Bus(handlers, settings=settings, budget=settings.budget)
            result = process_event(
                event, driver=driver, bus=bus, emit=diagnostics.emit, deadline=deadline
            )
            output = result.output
    except BaseException:
        import traceback

        diagnostics.emit("internal-error", "the worker failed; answering the fallback",
                         host=event.host, error=traceback.format_exc(limit=8))  # fmt: skip
    try:
        data = msgspec.msgpack.encode(output)
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os._exit(0)


def _quiet_stdio() -> None:
    """Handlers' prints must never reach the host's stdout (it is the reply channel)."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
