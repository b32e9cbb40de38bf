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

import time
from typing import Any

import msgspec

from hookbus import diagnostics, drivers
from hookbus.bus.dispatch import DEFAULT_BUDGET, budget
from hookbus.bus.events import Event, derived
from hookbus.bus.marks import Subscription, subscribed
from hookbus.bus.replies import Reply
from hookbus.errors import DecodeError
from hookbus.index import fail_closed
from hookbus.isolate import run_child
from hookbus.process import decode
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
    entries = [index["handlers"][i] for i in wanted]
    try:
        event = decode(driver, data, native, diagnostics.emit)
    except DecodeError as exc:
        closed = fail_closed(entries)
        diagnostics.emit("input-invalid", str(exc), host=opts.host, native=native, path=exc.path,
                         bytes=len(data), denied_for=closed or None)  # fmt: skip
        return (
            refusal(driver, native, closed, "could not read this event")
            if closed
            else (driver.no_opinion)
        )
    events = (event, *derived(event))
    chosen = [
        e
        for e in entries
        if any(subscribed(msgspec.convert(e["subscription"], Subscription), ev) for ev in events)
    ]
    if not chosen:
        return driver.no_opinion

    limit = opts.timeout or driver.deadline(native)
    settings_budget = float(index["settings"].get("budget") or DEFAULT_BUDGET)
    deadline = started + budget(settings_budget, limit)
    closed = fail_closed(chosen)
    if closed:
        why = f"hookbus: fail-closed handler {', '.join(closed)} did not answer in time"
        fallback = driver.encode(event, Reply.deny(why)).output
    else:
        fallback = driver.no_opinion

    if time.monotonic() >= deadline:  # the index compile ate the budget
        diagnostics.emit("watchdog-fired", "the budget was spent before dispatch",
                         handlers=[e["name"] for e in chosen], host=event.host,
                         native=event.native)  # fmt: skip
        return fallback

    def work() -> bytes:
        output = _work(event, driver, index=index, chosen=chosen, fallback=fallback,
                       deadline=deadline - WORKER_RESERVE)  # fmt: skip
        return msgspec.msgpack.encode(output)

    child = run_child(work, deadline=deadline, lifetime=deadline - time.monotonic() + 1.0)
    where = {"host": event.host, "native": event.native, "session_id": event.session_id}
    answer = "deny (fail-closed)" if closed else "no opinion (fail-open)"
    if child.status == "ok":
        return msgspec.msgpack.decode(child.data, type=HookOutput)
    if child.status == "timeout":
        diagnostics.emit(
            "watchdog-fired",
            f"no reply within {deadline - started:.3f}s; worker killed, answered {answer}",
            handlers=[e["name"] for e in chosen],
            **where,
        )
    else:
        diagnostics.emit(f"worker-{child.status}", f"the worker gave no reply; answered {answer}",
                         handlers=[e["name"] for e in chosen], **where)  # fmt: skip
    return fallback


def refusal(driver: Driver, native: str, handlers: list[str], why: str) -> HookOutput:
    """The deny a fail-closed guard owes an event hookbus could not read: encoded for a
    minimal event of the same native name (the reply names the event, nothing else)."""
    stub = msgspec.json.encode({"session_id": "", "cwd": "", "tool_name": "", "tool_input": {}})
    try:
        event = driver.decode(stub, native)
    except DecodeError:
        return driver.no_opinion
    reason = f"hookbus {why}, and fail-closed handler {', '.join(handlers)} wants it"
    return driver.encode(event, Reply.deny(reason)).output


def _work(
    event: Event,
    driver: Driver,
    *,
    index: dict[str, Any],
    chosen: list[dict[str, Any]],
    fallback: HookOutput,
    deadline: float,
) -> HookOutput:
    """Run in the forked worker: build the wanted handlers, dispatch, encode."""
    try:
        from hookbus.bus.dispatch import Bus
        from hookbus.config import HandlerRef, Settings
        from hookbus.index import build_handlers
        from hookbus.process import process_event

        settings = msgspec.convert(index["settings"], Settings)
        refs = tuple(msgspec.convert(e, HandlerRef) for e in chosen)
        handlers = build_handlers(
            msgspec.structs.replace(settings, handlers=refs), diagnostics.emit
        )
        loaded = {h.name for h in handlers}
        if fail_closed([e for e in chosen if e["name"] not in loaded]):
            return fallback  # a fail-closed handler could not even be loaded
        bus = Bus(handlers, settings=settings, budget=settings.budget)
        result = process_event(event, driver=driver, bus=bus, emit=diagnostics.emit,
                               deadline=deadline)  # fmt: skip
        return result.output
    except BaseException:
        import traceback

        diagnostics.emit("internal-error", "the worker failed; answering the fallback",
                         host=event.host, error=traceback.format_exc(limit=8))  # fmt: skip
        return fallback
