"""The worker: the forked child of :mod:`hookbus.runtime.watchdog` that does the work of a
hook call someone may want. Its stdio is /dev/null; it talks back only through its
channel (:mod:`hookbus.runtime.isolate`).

1. Decode strictly. Input that cannot be read is answered with the refusal its possible
   guards owe, or the host's no-opinion.
2. Know the handlers: with a fresh index, those it routes the event to, narrowed exactly
   by their declarations; without one, compile the index here (importing every enabled
   handler), counting as fail-closed each handler that could not load and has no known
   declaration.
3. Send the watchdog the exact fallback, then each handler's name before its import (a
   hang is then blamed on the right module).
4. Dispatch, encode, send the reply with the diagnostics it raised; only then cache the
   index it compiled.

When ``HOOKBUS_TRACE`` names a file (``hookbus try`` sets it, to a path in a private
folder of its own), the worker also writes there, before its reply, a :class:`Trace` of
what it did. The variable is read here, in the worker, never on the cold path: a hook
nobody traces pays one dictionary lookup in a process that is already decoding.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import msgspec

from hookbus import hosts
from hookbus.bus.dispatch import Bus, Handler, Outcome
from hookbus.bus.errors import DecodeError
from hookbus.bus.events import Event
from hookbus.bus.host import Dropped
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import Reply
from hookbus.bus.subscriptions import guards
from hookbus.local import diagnostics
from hookbus.runtime import load
from hookbus.runtime.call import DIAGNOSTICS, FALLBACK, IMPORTING, WANTED, Call, answer_owed, pack
from hookbus.runtime.config import Settings
from hookbus.runtime.index import Lookup, Unloaded
from hookbus.runtime.isolate import Channel
from hookbus.runtime.process import Result, decode, process_event, unreadable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import HandlerData
    from hookbus.runtime.compile import Compiled

#: Time the worker keeps, inside the budget, to merge, encode and send its reply.
RESERVE = 0.1
#: Names the file the worker writes its :class:`Trace` to (created, never overwritten).
TRACE = "HOOKBUS_TRACE"


class Trace(msgspec.Struct, frozen=True, kw_only=True):
    """What the worker did with one call, for ``hookbus try``."""

    #: The decoded event without its raw payload; None when it could not be decoded.
    event: dict[str, Any] | None = None
    #: The handlers that wanted the event, those imported, and the stand-ins denying for
    #: fail-closed ones that could not be.
    wanted: list[str] = []
    loaded: list[str] = []
    stand_ins: list[str] = []
    #: What each wanted handler that is not loaded is told, by handler name (why, where,
    #: the fix: :attr:`hookbus.runtime.index.Unloaded.detail`): a stand-in's, or a
    #: fail-open one's left out of the dispatch.
    unavailable: dict[str, str] = {}
    outcomes: tuple[Outcome, ...] = ()
    #: The merged reply; None when nothing was dispatched.
    reply: Reply | None = None
    #: Reply parts the merge, or the host, could not take.
    dropped: tuple[Dropped, ...] = ()
    #: The diagnostics of the call, as the log will have them.
    diagnostics: list[dict[str, Any]] = []
    #: The answer the worker sent (the watchdog's differs when it came too late).
    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int = 0
    #: The process the worker was forked from: the hook's own on the cold path (the
    #: watchdog, or the client running it), the warm server's on the warm path.
    parent: int = 0


class Candidates:
    """The handlers that may want an event, with the settings in effect."""

    __slots__ = ("entries", "guards", "settings")

    def __init__(self, entries: list[HandlerData], settings: Settings) -> None:
        self.entries = entries
        self.settings = settings
        #: Fail-closed among them (unknown declarations counted as fail-closed).
        self.guards = guards(entries)


def candidates(call: Call) -> Candidates:
    """From a fresh index: the handlers it routes the event to, plus those it could not
    load. From a stale one: every handler of the configuration as it is now, with the
    declaration the old index knew (unknown for new ones)."""
    lookup = call.lookup
    data = lookup.data
    if lookup.fresh and data is not None:
        chosen = lookup.candidates(call.facts.name, call.native, call.tool)
        return Candidates(chosen, msgspec.convert(data["settings"], Settings))
    wanted = lookup.wanted(call.facts.name, call.native, call.tool)
    routed = {data["handlers"][i]["name"] for i in wanted} if data else set()
    entries, settings = load.configured(call.files, data, routed)
    return Candidates(entries, settings)


def _unloaded(entries: list[HandlerData], loaded: list[Handler]) -> dict[str, str]:
    """What each of ``entries`` not among ``loaded`` is told, by name (:class:`Unloaded`)."""
    names = {h.name for h in loaded}
    return {e["name"]: Unloaded(e).detail for e in entries if e["name"] not in names}


def work(call: Call, channel: Channel, deadline: float) -> Callable[[], None] | None:
    """Run in the worker: answer the call on ``channel``; what to do after the reply."""
    diagnostics.take()  # the parent's lines, inherited by the fork: the parent's to write
    diagnostics.defer()
    job = _Job(call, channel, deadline - RESERVE)
    try:
        output = job.run()
    except BaseException:
        import traceback

        error = traceback.format_exc(limit=8)
        diagnostics.emit("internal-error", "the worker failed; the watchdog answers",
                         host=call.facts.name, error=error)  # fmt: skip
        # No reply of its own: the watchdog's fallback (its refusal, when it is not sure
        # that no guard wants the event) is the answer. The diagnostics go as a note.
        channel.note(DIAGNOSTICS, diagnostics.take())
        return None
    lines = diagnostics.take()
    trace = os.environ.get(TRACE)
    if trace:
        lines += job.write_trace(trace, output, lines)
    channel.result(pack(output, lines))
    return job.after


class _Job:
    def __init__(self, call: Call, channel: Channel, deadline: float) -> None:
        self.call = call
        self.channel = channel
        self.deadline = deadline
        self.driver = hosts.driver(call.facts.name)
        self.fallback = self.driver.no_opinion(call.native)
        self.compiled: Compiled | None = None
        # What a trace tells (see write_trace).
        self.event: Event | None = None
        self.wanted: list[str] = []
        self.handlers: list[Handler] = []
        self.unavailable: dict[str, str] = {}
        self.result: Result | None = None

    def after(self) -> None:
        if self.compiled is not None:
            from hookbus.runtime.compile import save

            save(self.call.files, self.compiled.data)

    def refine(self, found: Candidates) -> None:
        """Tell the watchdog the exact fallback (and who wants the event) as soon as known."""
        self.fallback = answer_owed(self.driver, self.call.native, found.guards,
                                    "no answer in time")  # fmt: skip
        self.channel.note(FALLBACK, self.fallback.to_frame())
        self.wanted = [e["name"] for e in found.entries]
        self.channel.note(WANTED, msgspec.json.encode(self.wanted))

    def compile(self) -> Candidates:
        """Compile the index here; the candidates it routes the event to."""
        from hookbus.runtime.compile import compile_index

        call = self.call
        self.compiled = compile_index(
            call.files,
            call.lookup.data,
            skip=load.read_skip(call.files),
            progress=self.announce,
        )
        self.announce("")
        call.lookup = Lookup(call.files, "fresh", self.compiled.data)
        return candidates(call)

    def run(self) -> HookOutput:
        call, driver, native = self.call, self.driver, self.call.native
        found = candidates(call)
        if call.lookup.fresh:
            self.refine(found)
        else:
            # A stale index's declarations may be the old ones (a handler edited into a
            # guard): until this worker's own compile says, any handler may be a guard.
            everyone = [ref.name for ref in found.settings.handlers]
            why = "no answer in time while its handlers were being loaded"
            self.fallback = answer_owed(driver, native, everyone, why)
            self.channel.note(FALLBACK, self.fallback.to_frame())
        where = {"host": driver.name, "native": native}
        if not call.lookup.fresh:
            level = "info" if call.lookup.freshness in ("missing", "stale") else "warning"
            diagnostics.emit(f"index-{call.lookup.freshness}",
                             f"{call.lookup.problem}; compiling it in the worker", level=level,
                             **where)  # fmt: skip
        event: Event | None = None
        if call.payload is not None:  # None: the peek could not read it (and said so)
            try:
                event = decode(driver, call.data, native, diagnostics.emit)
            except DecodeError as exc:
                problem = exc
        self.event = event
        if event is None:
            if not call.lookup.fresh:
                found = self.compile()
            if call.payload is not None:
                denied = [g["name"] for g in found.guards]
                diagnostics.emit("input-invalid", str(problem), path=problem.path,
                                 bytes=len(call.data), denied_for=denied or None,
                                 **where)  # fmt: skip
            return unreadable(driver, native, found.guards)
        if call.lookup.fresh:
            skip = load.read_skip(call.files)  # imports that hung a moment ago: not again
            wanting: list[HandlerData] = []
            for entry in load.wanting(
                found.entries, (event, *driver.derive(event)), driver.capabilities(event.native)
            ):
                config = entry.get("config") or entry["name"]
                if config in skip:
                    entry = {**entry, "unavailable": skip[config]}  # noqa: PLW2901
                wanting.append(entry)
            found = Candidates(wanting, found.settings)
            if not found.entries:
                self.wanted = []
                return driver.no_opinion(native)
            self.refine(found)
            handlers = load.load_wanted(found.entries, found.settings, diagnostics.emit,
                                        self.announce, self.unavailable)  # fmt: skip
        else:
            found = self.compile()
            self.refine(found)
            assert self.compiled is not None
            entries = self.compiled.data["handlers"]
            handlers = list(self.compiled.handlers)
            handlers += load.stand_ins(entries, {h.name for h in handlers})
            self.unavailable = _unloaded(found.entries, self.compiled.handlers)
        settings = found.settings
        self.handlers = handlers
        bus = Bus(handlers, settings=settings, budget=settings.budget)
        self.result = process_event(event, driver=driver, bus=bus, emit=diagnostics.emit,
                                    deadline=self.deadline)  # fmt: skip
        return self.result.output

    def write_trace(self, path: str, output: HookOutput, lines: bytes) -> bytes:
        """Write the :class:`Trace` to ``path``, a new file (never one already there, nor
        through a link); a failure is a diagnostic line (returned), never a change of the
        answer."""
        try:
            data = msgspec.json.encode(self.trace(output, lines))
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
            with open(fd, "wb") as f:
                f.write(data)
        except Exception as exc:  # tracing is for a person: it must not break the hook
            return diagnostics.line("trace-failed", f"cannot write the trace to {path}: "
                                    f"{exc!r}", file=path)  # fmt: skip
        return b""

    def trace(self, output: HookOutput, lines: bytes) -> Trace:
        event = None
        if self.event is not None:
            event = msgspec.json.decode(msgspec.json.encode(self.event))
            event.pop("raw", None)
        stand_ins = [h.name for h in self.handlers if h.fn.__module__ == load.__name__]
        dispatch = self.result.dispatch if self.result is not None else None
        dropped: tuple[Dropped, ...] = ()
        if dispatch is not None:
            encoded = self.driver.encode(dispatch.event.native, dispatch.reply)
            dropped = dispatch.dropped + encoded.dropped
        return Trace(
            event=event,
            wanted=self.wanted,
            loaded=[h.name for h in self.handlers if h.name not in stand_ins],
            stand_ins=stand_ins,  # made by load.stand_in, whose function lives there
            unavailable=self.unavailable,
            outcomes=dispatch.outcomes if dispatch is not None else (),
            reply=dispatch.reply if dispatch is not None else None,
            dropped=dropped,
            diagnostics=[msgspec.json.decode(line) for line in lines.splitlines() if line],
            stdout=output.stdout,
            stderr=output.stderr,
            exit_code=output.exit_code,
            parent=os.getppid(),
        )

    def announce(self, name: str) -> None:
        self.channel.note(IMPORTING, name.encode())
