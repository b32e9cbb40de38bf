"""The guarded dispatch: once a handler may want the event, a valid reply still reaches
the host before its deadline, whatever the handlers do.

Per-handler timeouts inside the bus are cooperative: a handler stuck in C code holding
the GIL (a runaway regex) cannot be interrupted from another thread. So the dispatch
runs in a forked worker (:mod:`hookbus.runtime.isolate`) that imports the handlers,
dispatches and sends back the encoded reply, while this process, which imports no
handler, waits on a pipe until the deadline. If nothing has arrived by then it kills the
worker and answers the fallback it encoded *before* forking: the host's no-opinion, or
the refusal owed to the fail-closed handlers that may want the event.

With a fresh index the worker imports only the wanted handlers. Without one (first call,
after an upgrade, a configuration edit, a refused or read-only state root) it compiles
the index itself, dispatches to every handler that wants the event, sends the reply,
and only then caches the index; its fallback counts every handler whose declaration is
unknown as fail-closed. A handler whose import hung is named by the worker's last
progress note and skipped by later calls for a minute (a fail-closed one is stood in
for by a refusal that says why).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import msgspec

from hookbus import diagnostics, drivers
from hookbus.bus.dispatch import DEFAULT_BUDGET, Bus, budget
from hookbus.bus.events import Event
from hookbus.bus.marks import Subscription, subscribed
from hookbus.config import HandlerRef, Settings
from hookbus.config import load as load_config
from hookbus.errors import DecodeError
from hookbus.output import HookOutput
from hookbus.runtime import compile as compiler
from hookbus.runtime.call import Call
from hookbus.runtime.index import Lookup, fail_closed
from hookbus.runtime.isolate import Progress, run_child
from hookbus.runtime.process import decode, process_event, unreadable
from hookbus.types import Driver

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.runtime.index import HandlerData

#: Time the worker keeps, inside the budget, to merge, encode and send its reply.
WORKER_RESERVE = 0.1
#: The worker is gone this long after its deadline, whatever it is doing.
WORKER_AFTERLIFE = 30.0
_IMPORTING = "importing "


class Candidates:
    """The handlers that may want an event, as far as the cold path can tell."""

    __slots__ = ("budget", "entries", "guards", "settings")

    def __init__(self, entries: list[HandlerData], settings: Settings) -> None:
        self.entries = entries
        self.settings = settings
        self.budget = settings.budget
        #: Fail-closed among them (unknown declarations counted as fail-closed).
        self.guards = fail_closed(entries)


def candidates(call: Call) -> Candidates:
    """From a fresh index: the handlers it routes the event to, plus those it could not
    load. From a stale one: every handler of the configuration as it is now, with the
    declaration the old index knew (unknown for new ones)."""
    lookup = call.lookup
    data = lookup.data
    wanted = lookup.wanted(call.facts.name, call.native, call.tool)
    if lookup.fresh and data is not None:
        chosen = [data["handlers"][i] for i in wanted]
        chosen += [h for h in lookup.unknown_handlers() if h not in chosen]
        return Candidates(chosen, msgspec.convert(data["settings"], Settings))
    loaded = load_config(call.files)
    previous = {h["name"]: h for h in (data["handlers"] if data else [])}
    routed = {data["handlers"][i]["name"] for i in wanted} if data else set()
    entries: list[HandlerData] = []
    for ref in loaded.settings.handlers:
        last = previous.get(ref.name)
        known = last is not None and last["target"] == ref.target
        if known and last is not None and last["subscription"] is not None:
            if ref.name not in routed:
                continue
            subscription = last["subscription"]
        else:
            subscription = None
        entries.append(_entry(ref, subscription))
    return Candidates(entries, loaded.settings)


def _entry(ref: HandlerRef, subscription: object) -> HandlerData:
    return {
        "name": ref.name,
        "target": ref.target,
        "settings": msgspec.to_builtins(ref.settings),
        "subscription": subscription,  # type: ignore[typeddict-item]
        "unavailable": None,
    }


def _refusal(driver: Driver, native: str, guards: list[str], why: str) -> HookOutput:
    return driver.refusal(native, f"hookbus: {why}; fail-closed {', '.join(guards)} wants it")


def known_candidates(call: Call) -> Candidates:
    """:func:`candidates`, after compiling the index (in a watched child, within the
    budget) when it is not fresh: with nothing to dispatch, what the handlers declare is
    all that decides, and "unknown" must mean "could not load", not "not loaded yet"."""
    if not call.lookup.fresh:
        left = call.started + budget(DEFAULT_BUDGET, call.timeout) - time.monotonic()
        data = compiler.compile_in_child(call.files, timeout=max(0.05, left))
        if data is not None:
            call.lookup = Lookup(call.files, "fresh", data)
    return candidates(call)


def refuse_unreadable(call: Call) -> HookOutput:
    """Input the peek could not read: the refusal its possible guards owe, or no opinion."""
    found = known_candidates(call)
    return unreadable(drivers.load(call.facts.name), call.native, found.guards)


def dispatch_guarded(call: Call, after_reply: list[Callable[[], None]]) -> HookOutput:
    """Decode, dispatch in a watched worker, encode; see the module docstring."""
    driver = drivers.load(call.facts.name)
    found = candidates(call)
    native = call.native
    where = {"host": driver.name, "native": native}
    try:
        event = decode(driver, call.data, native, diagnostics.emit)
    except DecodeError as exc:
        found = known_candidates(call)
        diagnostics.emit("input-invalid", str(exc), path=exc.path, bytes=len(call.data),
                         denied_for=found.guards or None, **where)  # fmt: skip
        return unreadable(driver, native, found.guards)
    where["session_id"] = event.session_id
    if call.lookup.fresh:
        found = _exactly(found, (event, *driver.derive(event)))
        if not found.entries:
            return driver.no_opinion(native)
    if found.guards:
        fallback = _refusal(driver, native, found.guards, "no answer in time")
    else:
        fallback = driver.no_opinion(native)
    call.emergency.set(fallback)
    if not call.lookup.fresh:
        level = "info" if call.lookup.freshness in ("missing", "stale") else "warning"
        diagnostics.emit(f"index-{call.lookup.freshness}",
                         f"{call.lookup.problem}; compiling it in the worker", level=level,
                         **where)  # fmt: skip
    deadline = call.started + budget(found.budget, call.timeout)
    names = [e["name"] for e in found.entries]
    if time.monotonic() >= deadline:
        diagnostics.emit("watchdog-fired", "the budget was spent before dispatch",
                         handlers=names, **where)  # fmt: skip
        return fallback

    worker = _Worker(call, driver, event, found, deadline - WORKER_RESERVE, fallback)
    child = run_child(worker.work, deadline=deadline, after=worker.after,
                      lifetime=deadline - time.monotonic() + WORKER_AFTERLIFE)  # fmt: skip
    answer = "the refusal (fail-closed)" if found.guards else "no opinion (fail-open)"
    if child.status == "ok":
        output, lines = _unpack(child.data)
        diagnostics.record(lines)
        return output
    hung = child.progress[len(_IMPORTING) :] if child.progress.startswith(_IMPORTING) else None
    if child.status == "timeout":
        doing = f" while importing handler {hung}" if hung else ""
        diagnostics.emit("watchdog-fired", f"no reply within {deadline - call.started:.3f}s"
                         f"{doing}; worker killed, answered {answer}", handlers=names,
                         **where)  # fmt: skip
        if hung:
            files = call.files
            why = f"importing its module took longer than {deadline - call.started:.1f}s"
            after_reply.append(lambda: compiler.write_skip(files, hung, why))
    else:
        diagnostics.emit(f"worker-{child.status}", f"the worker gave no reply; answered {answer}",
                         handlers=names, **where)  # fmt: skip
    return fallback


def _exactly(found: Candidates, events: tuple[Event, ...]) -> Candidates:
    """Narrow to the handlers whose declaration wants one of ``events`` (unknown ones stay)."""
    chosen = []
    for entry in found.entries:
        declared = entry["subscription"]
        if declared is None:
            chosen.append(entry)
            continue
        sub = msgspec.convert(declared, Subscription)
        if any(subscribed(sub, ev) for ev in events):
            chosen.append(entry)
    return Candidates(chosen, found.settings)


def _pack(output: HookOutput, lines: bytes) -> bytes:
    frame = output.to_frame()
    return len(frame).to_bytes(8, "big") + frame + lines


def _unpack(data: bytes) -> tuple[HookOutput, bytes]:
    size = int.from_bytes(data[:8], "big")
    return HookOutput.from_frame(data[8 : 8 + size]), data[8 + size :]


class _Worker:
    """What runs in the forked worker (``work``), then after its reply is sent (``after``)."""

    def __init__(  # noqa: PLR0917
        self,
        call: Call,
        driver: Driver,
        event: Event,
        found: Candidates,
        deadline: float,
        fallback: HookOutput,
    ) -> None:
        self.call = call
        self.driver = driver
        self.event = event
        self.found = found
        self.deadline = deadline
        self.fallback = fallback
        self.compiled: compiler.Compiled | None = None

    def work(self, progress: Progress) -> bytes:
        diagnostics.take()  # the parent's lines, inherited by the fork: the parent's to write
        diagnostics.defer()
        try:
            output = self._dispatch(progress)
        except BaseException:
            import traceback

            error = traceback.format_exc(limit=8)
            diagnostics.emit("internal-error", "the worker failed; answering the fallback",
                             host=self.driver.name, error=error)  # fmt: skip
            output = self.fallback
        return _pack(output, diagnostics.take())

    def _dispatch(self, progress: Progress) -> HookOutput:
        call = self.call
        if call.lookup.fresh:
            settings = self.found.settings
            handlers = []
            entries = []
            for entry in self.found.entries:
                entries.append(entry)
                if entry["unavailable"] is not None or entry["subscription"] is None:
                    continue  # not loadable now: stood in for below when fail-closed
                ref = msgspec.convert(entry, HandlerRef)
                progress(_IMPORTING + ref.name)
                try:
                    handlers.append(compiler.build_handler(ref, settings, diagnostics.emit))
                except compiler.Unavailable as exc:
                    entries[-1] = {**entry, "unavailable": str(exc)}
                    diagnostics.emit("handler-unavailable", str(exc), handler=ref.name)
        else:
            self.compiled = compiler.compile_index(
                call.files,
                call.lookup.data,
                skip=compiler.read_skip(call.files),
                progress=lambda name: progress(_IMPORTING + name),
            )
            settings = self.compiled.settings
            handlers = list(self.compiled.handlers)
            entries = self.compiled.data["handlers"]
        handlers += compiler.stand_ins(entries, {h.name for h in handlers})
        bus = Bus(handlers, settings=settings, budget=settings.budget)
        result = process_event(self.event, driver=self.driver, bus=bus, emit=diagnostics.emit,
                               deadline=self.deadline)  # fmt: skip
        return result.output

    def after(self) -> None:
        if self.compiled is not None:
            compiler.save(self.call.files, self.compiled.data)
