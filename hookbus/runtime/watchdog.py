"""The watchdog: once a handler may want the event, a valid reply still reaches the host
before its deadline, whatever the handlers do.

Per-handler timeouts inside the bus are cooperative: a handler stuck in C code holding
the GIL (a runaway regex) cannot be interrupted from another thread. So this process,
the one the host started and reads, never imports a handler, nor msgspec: it forks the
worker (:mod:`hookbus.runtime.worker`) while its heap is still small, and waits on a pipe
until the deadline. The worker decodes, loads the handlers, dispatches, encodes and sends
the reply. If nothing has arrived by the deadline, the worker is killed and the host
gets the fallback: the no-opinion, or the refusal owed to fail-closed handlers.

The fallback is known before the worker starts, without encoding anything here: the
subscription index holds each host's refusal of each native event, encoded when it was
compiled. The worker sharpens it as soon as it knows more (it sends the exact fallback
for the handlers that really want the event, or, with no usable index, the one its own
compile implies). A handler whose import hung is named by the worker's last note, and
skipped by the calls of the next minute.

Standard library only.
"""

from __future__ import annotations

import time

from hookbus.bus.budgets import DEFAULT_BUDGET, budget
from hookbus.bus.output import HookOutput
from hookbus.bus.subscriptions import fail_closed
from hookbus.local import diagnostics
from hookbus.runtime.call import (
    DIAGNOSTICS,
    FALLBACK,
    IMPORTING,
    WANTED,
    Call,
    answer_owed,
    unpack,
)
from hookbus.runtime.isolate import run_child

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from hookbus.bus.subscriptions import HandlerData
    from hookbus.runtime.isolate import Child

    Run = Callable[..., Child]

#: The worker is gone this long after the deadline, whatever it is doing.
WORKER_AFTERLIFE = 30.0


def candidates(call: Call) -> list[HandlerData]:
    """The index's handlers that may want this call
    (:meth:`hookbus.runtime.index.Lookup.candidates`)."""
    return call.lookup.candidates(call.facts.name, call.native, call.tool)


def configured_budget(files: list[str]) -> float:
    """The ``budget`` the configuration files set (the last valid one), read with the
    standard library when no fresh index says it; invalid values are the compile's to
    report."""
    import tomllib

    from hookbus.local.discover import read_config

    found = DEFAULT_BUDGET
    for path in files:
        try:  # a file in effect may be one not to read, or a FIFO (hookbus.local.discover)
            value = tomllib.loads(read_config(path).decode("utf-8")).get("budget")
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < 1e9:
            found = float(value)
    return found


def precomputed_fallback(call: Call) -> HookOutput:
    """The fallback the index already knows: its refusal of this native event when a
    fail-closed handler may want it, else the host's no-opinion."""
    no_opinion = call.facts.no_opinion_for(call.native)
    if not fail_closed(candidates(call)):
        return no_opinion
    return call.lookup.refusal(call.facts.name, call.native) or no_opinion


def dispatch_guarded(
    call: Call, after_reply: list[Callable[[], None]], run: Run = run_child
) -> HookOutput:
    """Dispatch in a watched worker; see the module docstring. ``run`` runs the worker
    (the warm server, already in a forked child of its own, runs it in that child)."""
    data = call.lookup.data
    if call.lookup.fresh and data is not None:
        own = float(data["settings"].get("budget") or DEFAULT_BUDGET)  # type: ignore[arg-type]
    else:
        own = configured_budget(call.files)
    deadline = call.started + budget(own, call.timeout)
    fallback = precomputed_fallback(call)
    call.emergency.set(fallback)
    notes: dict[str, bytes] = {}
    if not call.lookup.fresh:
        # Without a fresh index only the worker can tell who wants the event: until it
        # says, giving up refuses (a new handler in the configuration may be a guard).
        call.emergency.set_lazy(
            lambda: HookOutput.from_frame(notes[FALLBACK]) if FALLBACK in notes else _refusal(call)
        )
    else:
        call.emergency.set_lazy(
            lambda: HookOutput.from_frame(notes[FALLBACK]) if FALLBACK in notes else fallback
        )

    def work(channel: object) -> object:
        from hookbus.runtime.worker import work as worker

        return worker(call, channel, deadline)  # type: ignore[arg-type]

    child = run(work, deadline=deadline, notes=notes,
                lifetime=deadline - time.monotonic() + WORKER_AFTERLIFE)  # fmt: skip
    if FALLBACK in child.notes:
        fallback = HookOutput.from_frame(child.notes[FALLBACK])
    elif child.status != "ok" and not call.lookup.fresh:
        fallback = _refusal(call)
    if child.status == "ok":
        output, lines = unpack(child.data)
        diagnostics.record(lines)
        return output
    diagnostics.record(child.notes.get(DIAGNOSTICS, b""))
    guarded = fallback != call.facts.no_opinion_for(call.native)
    answer = "the refusal (fail-closed)" if guarded else "no opinion (fail-open)"
    where = {"host": call.facts.name, "native": call.native}
    hung = child.notes.get(IMPORTING, b"").decode("utf-8", "replace") or None
    if child.status == "timeout":
        doing = f" while importing handler {hung}" if hung else ""
        diagnostics.emit("watchdog-fired", f"no reply within {deadline - call.started:.3f}s"
                         f"{doing}; worker killed, answered {answer}",
                         handlers=_wanted(call, child.notes), **where)  # fmt: skip
        if hung:
            why = f"importing its module took longer than {deadline - call.started:.1f}s"
            after_reply.append(lambda: _remember_hang(call.files, hung, why))
    else:
        diagnostics.emit(f"worker-{child.status}", f"the worker gave no reply; answered {answer}",
                         **where)  # fmt: skip
    return fallback


def _wanted(call: Call, notes: dict[str, bytes]) -> list[str] | None:
    """The handlers that wanted the event: as the worker said, else as the index knows."""
    if WANTED in notes:
        import json

        return list(json.loads(notes[WANTED])) or None
    return [h["name"] for h in candidates(call)] or None


def _refusal(call: Call) -> HookOutput:
    """The refusal owed when nothing says who wants the event (the index is not fresh,
    and the worker said nothing before it was stopped)."""
    from hookbus import hosts

    why = "hookbus: no answer in time and no subscription index to say who wants this"
    return answer_owed(hosts.driver(call.facts.name), call.native, None, why)


def _remember_hang(files: list[str], name: str, why: str) -> None:
    from hookbus.runtime.load import write_skip

    write_skip(files, name, why)
