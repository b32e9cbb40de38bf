"""Decode -> dispatch -> encode, in this process: the path of one hook call once its
handlers are loaded.

``hookbus run`` runs it in a watched worker; :mod:`hookbus.testing` and the in-process
runtime run it directly. Whatever goes wrong, the result is a valid native reply plus
diagnostics, never an exception: unreadable input answers the host's no-opinion (or the
refusal of a fail-closed handler), a failing handler contributes nothing (or a deny,
when it is fail-closed).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import msgspec

from hookbus.bus.budgets import budget
from hookbus.bus.dispatch import Bus, Dispatch
from hookbus.bus.errors import DecodeError
from hookbus.bus.events import Event
from hookbus.bus.host import Driver
from hookbus.bus.output import HookOutput
from hookbus.runtime.call import answer_owed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import HandlerData

Emit = Callable[..., None]


class Result(msgspec.Struct, frozen=True, kw_only=True):
    """One hook call's output, with the decoded event and the dispatch when there was one."""

    output: HookOutput
    event: Event | None = None
    dispatch: Dispatch | None = None


def decode(driver: Driver, data: bytes, native: str | None, emit: Emit) -> Event:
    """Decode strictly; if that fails only because of text msgspec will not take (lone
    surrogates, which JSON can spell and Python's json reads), decode the payload again
    with such characters replaced, so that a guard still sees the rest of the command.
    Raises :class:`DecodeError` when the payload is wrong in any other way."""
    try:
        return driver.decode(data, native)
    except DecodeError as first:
        import json

        try:
            repaired = json.dumps(json.loads(data), ensure_ascii=False)
            event = driver.decode(repaired.encode("utf-8", "replace"), native)
        except (ValueError, RecursionError, DecodeError):
            raise first from None
        emit("input-repaired", f"{first}; decoded with bad characters replaced",
             host=driver.name, native=native)  # fmt: skip
        return event


def report(dispatch: Dispatch, emit: Emit) -> None:
    """Turn every failed handler and every dropped reply part into a diagnostic."""
    event = dispatch.event
    where = {"host": event.host, "native": event.native, "session_id": event.session_id}
    for outcome in dispatch.outcomes:
        if outcome.status == "ok":
            continue
        closed = " (fail-closed: denied)" if outcome.fail_closed else " (fail-open)"
        what = "timed out" if outcome.status == "timeout" else "failed"
        emit(
            f"handler-{outcome.status}",
            f"handler {outcome.handler} {what} after {outcome.seconds:.3f}s{closed}",
            handler=outcome.handler,
            error=outcome.error,
            **where,
        )
    for part in dispatch.dropped:
        emit("reply-dropped", f"{part.field} from {part.handler} dropped: {part.why}",
             handler=part.handler, **where)  # fmt: skip


def process_event(
    event: Event, *, driver: Driver, bus: Bus, emit: Emit, deadline: float | None = None
) -> Result:
    """Dispatch a decoded event and encode the reply. Without an explicit ``deadline``
    the bus's budget applies, capped below the host's timeout for this event."""
    if deadline is None:
        deadline = time.monotonic() + budget(bus.budget, driver.timeout(event.native))
    dispatch = bus.dispatch_sync(
        event,
        derived=driver.derive(event),
        capabilities=driver.capabilities(event.native),
        deadline=deadline,
        readers=driver,
    )
    report(dispatch, emit)
    encoded = driver.encode(event.native, dispatch.reply)
    for part in encoded.dropped:
        emit("reply-degraded", f"{part.field} not sent: {part.why}", host=event.host,
             native=event.native)  # fmt: skip
    return Result(output=encoded.output, event=event, dispatch=dispatch)


def unreadable(
    driver: Driver, native: str | None, guards: Sequence[HandlerData | str]
) -> HookOutput:
    """The answer to input hookbus could not read: the refusal ``guards`` (fail-closed
    handlers that may want the event) owe it, else the host's no-opinion."""
    return answer_owed(driver, native, guards, "could not read this event")


def process(
    data: bytes,
    *,
    driver: Driver,
    bus: Bus,
    emit: Emit,
    native: str | None = None,
    deadline: float | None = None,
) -> Result:
    """Run one payload through the whole path; never raises."""
    try:
        event = decode(driver, data, native, emit)
    except DecodeError as exc:
        guards = [h.name for h in bus.handlers if h.subscription.fail_closed]
        emit("input-invalid", str(exc), host=driver.name, path=exc.path, bytes=len(data),
             denied_for=guards or None)  # fmt: skip
        return Result(output=unreadable(driver, native or _named(driver, data), guards))
    try:
        return process_event(event, driver=driver, bus=bus, emit=emit, deadline=deadline)
    except Exception:
        import traceback

        emit("internal-error", "hookbus failed; answering no opinion",
             host=driver.name, error=traceback.format_exc(limit=8))  # fmt: skip
        return Result(output=driver.no_opinion(event.native), event=event)


def _named(driver: Driver, data: bytes) -> str | None:
    """The event name an unreadable payload still spells, if any."""
    from hookbus.runtime.peek import sniff

    return sniff(data, driver.facts)
