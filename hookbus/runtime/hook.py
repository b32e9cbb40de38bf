"""``hookbus run --host NAME [--event NATIVE] [--timeout SECONDS]``: the hook entrypoint.

This is the cold path every tool call pays for, so it imports the standard library only
until it knows a handler may want the event:

1. arguments (by hand: argparse costs milliseconds), then the host's facts;
2. the payload, read within a bound of size and time (:mod:`~hookbus.runtime.intake`);
3. a peek at the event and tool names (:mod:`~hookbus.runtime.peek`);
4. the configuration files and the subscription index (:mod:`~hookbus.runtime.index`):
   a fresh index that routes the event to nobody is answered "no opinion" at once;
   another host's payload whose own hookbus install has the event is answered "no
   opinion" too (:mod:`~hookbus.hosts.shared.native_install`: handled once, by that install);
5. otherwise :mod:`hookbus.runtime.worker` decodes, dispatches in a watched worker and
   encodes.

Guarantees on every path: the host's own reply (no opinion, or the deny a fail-closed
handler owes) before the deadline, never a traceback; an event a fail-closed handler
could want is never let through because the index was missing, stale or unreadable;
diagnostics are written only after the reply (:mod:`hookbus.local.diagnostics`), and the last
resort (:mod:`~hookbus.runtime.emergency`) answers a signal or a hung system call.
When ``--host`` names a host this hookbus does not know (a command written by another
version), no reply can be right: the hook says so on stderr and exits 1. (The installed
command's shell fallback answers for a missing interpreter or package, not for this.)
"""

from __future__ import annotations

import os
import time

from hookbus.bus.budgets import DEFAULT_BUDGET, budget
from hookbus.bus.output import HookOutput
from hookbus.bus.subscriptions import fail_closed
from hookbus.hosts import HOSTS
from hookbus.hosts.shared.facts import HostFacts
from hookbus.local import diagnostics
from hookbus.local.discover import config_paths
from hookbus.runtime import index
from hookbus.runtime.call import Call, answer_owed
from hookbus.runtime.emergency import Emergency
from hookbus.runtime.intake import Intake, read_payload
from hookbus.runtime.peek import peek, sniff

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    #: Runs a call someone may want; its reply (diagnostics recorded, after-reply work
    #: appended to the list).
    Dispatch = Callable[[Call, list[Callable[[], None]]], HookOutput]
    #: Told the configuration files in effect as soon as they are found, before any
    #: handler may be imported.
    Found = Callable[[list[str]], None]

USAGE = "usage: hookbus run --host NAME [--event NATIVE] [--timeout SECONDS]"
#: The last resort fires this long before the host would kill the hook.
LAST_RESORT_MARGIN = 0.25
#: After the reply, how long the hook may wait for its diagnostics to be written (a
#: healthy state folder takes milliseconds; a hung one costs this, within the host's
#: timeout, and the writer goes on alone).
FLUSH_GRACE = 2.0


class Options:
    """One call as its caller names it: the host, the native event its command names
    (None: the payload says), the seconds the host gives it (None: the host's default).
    ``hookbus run`` parses it from its arguments (:func:`parse`); the warm server's child
    takes it from the client's request, and the client's own cold path from the client's
    options, with no arguments written and parsed again."""

    __slots__ = ("event", "host", "timeout")

    def __init__(
        self, host: str = "", event: str | None = None, timeout: float | None = None
    ) -> None:
        self.host = host
        self.event = event
        self.timeout = timeout


#: A timeout beyond this is not a host's (and overflows the interval timer).
MAX_TIMEOUT = 86_400.0


def seconds(value: float | None) -> float | None:
    """``value`` when it is a timeout a host can give (above 0, up to :data:`MAX_TIMEOUT`),
    else None (the host's default)."""
    return value if value is not None and 0 < value <= MAX_TIMEOUT else None


def timeout_problem(given: object) -> str:
    """What is said of a timeout :func:`seconds` refused."""
    return (f"--timeout takes seconds up to {MAX_TIMEOUT:g}, not {str(given)[:40]!r}; "
            "the host's default used")  # fmt: skip


def parse(argv: list[str]) -> tuple[Options, list[str]]:
    """Parse ``run``'s few options, leniently: an argument this hookbus does not know (a
    command written by another version) or a bad value is a problem to report, not a
    reason to skip the hook's handlers. ValueError only when no ``--host`` is given."""
    opts = Options()
    problems = []
    args = iter(argv)
    for arg in args:
        name, eq, value = arg.partition("=")
        if name not in ("--host", "--event", "--timeout"):
            problems.append(f"unknown argument {arg[:80]!r} ignored; {USAGE}")
            continue
        if not eq:
            value = next(args, "")
        if not value:
            problems.append(f"{name} needs a value; ignored")
        elif name == "--host":
            opts.host = value
        elif name == "--event":
            opts.event = value
        else:
            try:
                opts.timeout = seconds(float(value))
            except ValueError:
                opts.timeout = None
            if opts.timeout is None:
                problems.append(timeout_problem(value))
    if not opts.host:
        raise ValueError(f"--host is required; {USAGE}")
    return opts, problems


def main(
    call: list[str] | Options, *, intake: Intake | None = None, started: float | None = None
) -> int:
    """Run one hook call (``hookbus run``'s arguments, or the call already parsed); the
    process's exit code (its reply is written already).

    The warm server's client (:mod:`hookbus.runtime.warm.client`) falling back to this cold path in
    its own process passes its call, the payload it read already (``intake``) and when it
    started (a ``time.monotonic()`` value): the deadline is the same call's."""
    started = time.monotonic() if started is None else started
    diagnostics.defer()
    emergency = Emergency()
    emergency.install()
    emergency.on_fire = lambda signal: _gave_up(signal, started)
    after_reply: list[Callable[[], None]] = []
    code = answer(call, started, emergency, after_reply, intake=intake)
    emergency.disarm()
    # The host waits for the process, not only the reply: the writer's grace ends before
    # the host's own timeout would (Claude's SessionEnd hooks get 1.5 s in all).
    grace = FLUSH_GRACE
    if emergency.deadline is not None:
        grace = max(0.0, min(grace, emergency.deadline - time.monotonic()))
    # The reply is out: a failure now must not add to it (the command's fallback answers
    # an exit 1, which would be a second reply).
    try:  # noqa: SIM105 (contextlib is not loaded on the cold path)
        flush_diagnostics(grace, after_reply)
    except Exception:
        pass
    return code


def answer(
    call: list[str] | Options,
    started: float,
    emergency: Emergency,
    after: list[Callable[[], None]],
    *,
    intake: Intake | None = None,
    dispatch: Dispatch | None = None,
    found: Found | None = None,
) -> int:
    """Answer one call (its arguments, or the call already parsed) through ``emergency``
    (which writes the reply, once); the exit code. ``intake`` is the payload when the
    caller has read it; ``dispatch`` runs a call someone may want (default: the watched
    worker, :mod:`~hookbus.runtime.watchdog`); ``found`` is told the configuration in
    effect once found (the call finds it once). The warm server's child
    (:mod:`hookbus.runtime.warm.served`) passes all four."""
    try:
        return _run(call, started, emergency, after, intake, dispatch, found)
    except Exception as exc:  # a bug of ours must not become the host's problem
        import traceback

        diagnostics.emit("internal-error", repr(exc), error=traceback.format_exc(limit=8))
        return emergency.answer(emergency.current())


def _gave_up(signal: str, started: float) -> None:
    reason = "the hook's deadline" if signal == "SIGALRM" else signal
    diagnostics.emit("emergency-answer", f"answered at {reason}, after "
                     f"{time.monotonic() - started:.3f}s", signal=signal)  # fmt: skip
    flush_diagnostics(0.0)


def flush_diagnostics(grace: float, actions: list[Callable[[], None]] | None = None) -> None:
    """After the reply: write the deferred diagnostics and do the state writes that
    waited for it (``actions``), waiting ``grace`` seconds at most."""
    data = diagnostics.take()
    if not data and not actions:
        return
    problem = diagnostics.usable()
    if problem is not None:
        diagnostics.to_stderr(data, problem)
        return
    from hookbus.runtime.isolate import run_child

    def write(channel: object) -> bytes:
        diagnostics.write(data)
        for action in actions or ():
            action()
        return b"written"

    child = run_child(write, deadline=time.monotonic() + grace, lifetime=30.0, kill_late=False)
    if child.status == "fork-failed":
        diagnostics.write(data)
        for action in actions or ():
            action()


def _run(  # noqa: PLR0917
    named: list[str] | Options,
    started: float,
    emergency: Emergency,
    after: list[Callable[[], None]],
    given: Intake | None = None,
    dispatch: Dispatch | None = None,
    found: Found | None = None,
) -> int:
    if isinstance(named, Options):
        opts = named
    else:
        try:
            opts, problems = parse(named)
        except ValueError as exc:
            diagnostics.emit("usage-invalid", str(exc), argv=named)
            return _unknown_host(str(exc))
        for problem in problems:
            diagnostics.emit("usage-invalid", problem, argv=named)
    facts = HOSTS.get(opts.host)
    if facts is None:
        known = ", ".join(sorted(HOSTS))
        message = f"unknown host {opts.host[:80]!r}; known: {known}"
        diagnostics.emit("usage-invalid", message)
        return _unknown_host(message)
    emergency.set(facts.no_opinion_for(opts.event))
    if opts.event is not None:
        # A signal while the payload is still being read: the answer a guard would want.
        host, event = facts, opts.event
        emergency.set_lazy(lambda: _guarded_answer(host, event, None))
    timeout = opts.timeout or facts.timeout_for(opts.event)
    emergency.arm(started + max(0.05, timeout - LAST_RESORT_MARGIN))
    # The read gets most of the budget, not all: what follows must still have time to
    # refuse an event a guard wants when its payload never arrives whole.
    own = budget(DEFAULT_BUDGET, timeout)
    intake = read_payload(facts, started + own - min(1.0, own / 4), stdin=given)
    try:
        peeked = peek(intake.data, facts, opts.event)
    except ValueError as exc:
        return _unreadable(intake, facts, opts, str(exc), started, emergency, after, dispatch,
                           found)  # fmt: skip
    command, (facts, native, tool) = facts, (peeked.facts, peeked.native, peeked.tool)
    no_opinion = facts.no_opinion_for(native)
    if facts is not command:
        # Another host's payload (Copilot, Grok running .claude/settings.json): its own
        # install, when it has this event, is the one that answers.
        from hookbus.hosts.shared.native_install import stands_aside

        aside = stands_aside(command, facts, native=native, tool=tool,
                             payload=peeked.payload, environ=os.environ)  # fmt: skip
        if aside:
            emergency.set(no_opinion)
            code = emergency.answer(no_opinion)
            _stood_aside(facts, native, tool, peeked.payload, aside)
            return code
    # Until the index says who wants this event, a hook that must give up (a signal, a
    # bug of ours, a hung read of the state folder) refuses it if a guard may want it.
    emergency.set_lazy(lambda: _guarded_answer(facts, native, peeked.payload))
    if intake.end == "timeout":
        # A whole object arrived but stdin stayed open: read as complete, say so.
        diagnostics.emit("input-unclosed", "stdin stayed open after the payload",
                         host=facts.name, native=native)  # fmt: skip
    timeout = opts.timeout or facts.timeout_for(native)
    files = config_paths(facts.project_dir(os.environ, peeked.payload))
    if found is not None:
        found(files)
    if not files:
        emergency.set(no_opinion)
        return emergency.answer(no_opinion)
    lookup = index.read(files)
    if lookup.nobody(facts.name, native, tool):
        emergency.set(no_opinion)
        return emergency.answer(no_opinion)
    call = Call(facts, native, tool, intake.data, peeked.payload, timeout=timeout,
                started=started, files=files, lookup=lookup, emergency=emergency)  # fmt: skip
    return emergency.answer(_dispatcher(dispatch)(call, after))


def _stood_aside(
    facts: HostFacts, native: str, tool: str | None, payload: dict[str, object], file: str
) -> None:
    """After the no-opinion of a command that stood aside for ``facts``'s own install
    (``file``): when a fail-closed handler may want the event, or no index can say,
    a diagnostic naming them and that file. The guard's answer is then that install's
    to give; a log that says nothing would leave a guard's silence unexplained (a
    payload read as another host's by a key it carries)."""
    files = config_paths(facts.project_dir(os.environ, payload))
    if not files:
        return
    lookup = index.read(files)
    guards = None
    if lookup.data is not None:
        guards = fail_closed(lookup.candidates(facts.name, native, tool))
        if not guards:
            return
    who = f"fail-closed {', '.join(guards)}" if guards else "any fail-closed handler"
    diagnostics.emit("stood-aside", f"answered no opinion: a {facts.name} payload, and "
                     f"{facts.name}'s own hookbus install ({file}) runs for {native}; "
                     f"{who} is answered there", level="info", host=facts.name,
                     native=native, file=file, handlers=guards)  # fmt: skip


def _unknown_host(message: str) -> int:
    """No reply is right for a host hookbus does not know: say so to a person, exit 1."""
    try:  # noqa: SIM105 (contextlib is not loaded on the cold path)
        os.write(2, f"hookbus run: {message}\n".encode())
    except OSError:
        pass
    return 1


def _unreadable(  # noqa: PLR0917
    intake: Intake,
    facts: HostFacts,
    opts: Options,
    problem: str,
    started: float,
    emergency: Emergency,
    after: list[Callable[[], None]],
    dispatch: Dispatch | None,
    found: Found | None,
) -> int:
    """Input that cannot be read: the host's no-opinion, or the deny of a fail-closed
    handler that may want the event (a guard is not bypassed by a payload made too large,
    malformed or never finished)."""
    if intake.end == "timeout":
        problem = f"{problem} (stdin still open when the read's time ran out)"
    # The installed command names its event (--event), and nothing in the payload may
    # overrule it: a name found inside the tool's input, which the model writes, would
    # let a guard be skipped. Only a command without --event reads the name the payload
    # gives at its top level (:func:`~hookbus.runtime.peek.sniff`).
    native = opts.event or sniff(intake.data, facts)
    # The tool name is not trusted from a payload that cannot be read either: every
    # handler of the event counts, whatever its tools.
    tool = None
    if intake.end == "terminal":
        problem = "stdin is a terminal: no payload (a person ran the hook by hand)"
    diagnostics.emit("input-invalid", problem, host=facts.name, native=native,
                     bytes=len(intake.data))  # fmt: skip
    if native is not None:
        known: str = native
        emergency.set_lazy(lambda: _guarded_answer(facts, known, None))
    files = config_paths(facts.project_dir(os.environ, None))
    if found is not None:
        found(files)
    lookup = index.read(files) if files else None
    if native is None and lookup is not None and intake.end != "terminal":
        # No --event and no name at the payload's top level: it may be any event, so it
        # is refused as one a fail-closed handler wants, if there is one.
        left = started + budget(DEFAULT_BUDGET, opts.timeout or facts.timeout_for(None))
        native = _owed_event(facts, lookup, left - time.monotonic())
        if native is not None:
            owed: str = native
            emergency.set_lazy(lambda: _guarded_answer(facts, owed, None))
            if lookup.data is None:  # compiled just now
                lookup = index.read(files)
    no_opinion = facts.no_opinion_for(native)
    if native is None or lookup is None:
        emergency.set(no_opinion)
        return emergency.answer(no_opinion)
    if lookup.nobody(facts.name, native, tool):
        return emergency.answer(no_opinion)
    call = Call(facts, native, tool, intake.data, None,
                timeout=opts.timeout or facts.timeout_for(native), started=started,
                files=files, lookup=lookup, emergency=emergency)  # fmt: skip
    return emergency.answer(_dispatcher(dispatch)(call, after))


def _owed_event(facts: HostFacts, lookup: index.Lookup, seconds: float) -> str | None:
    """For a payload whose event is unknown: the first of the host's events a fail-closed
    handler may want (its refusal is the answer), or None when no handler is fail-closed.
    With no index yet, it is compiled first (within ``seconds``); should that fail, the
    host's first event that has a refusal at all."""
    data = lookup.data
    if data is None:
        from hookbus.runtime.compile import compile_in_child

        data = compile_in_child(lookup.files, timeout=max(0.5, seconds))
    if data is None:
        from hookbus import hosts

        driver = hosts.driver(facts.name)
        reason = "a fail-closed handler may want it"
        return next((n for n in driver.events
                     if driver.refusal(n, reason) != driver.no_opinion(n)), None)  # fmt: skip
    found = index.Lookup(lookup.files, "stale", data)
    return next((native for native in data["refusals"].get(facts.name, {})
                 if found.candidates(facts.name, native, None)), None)  # fmt: skip


def _dispatcher(dispatch: Dispatch | None) -> Dispatch:
    if dispatch is not None:
        return dispatch
    from hookbus.runtime.watchdog import dispatch_guarded

    return dispatch_guarded


def _guarded_answer(facts: HostFacts, native: str, payload: dict[str, object] | None) -> HookOutput:
    """The answer to give up with, for ``native`` (any tool): the host's no-opinion when
    no configuration, or a fresh index, says nobody may want it; else the refusal (from
    the index when it has one encoded, else from the driver)."""
    no_opinion = facts.no_opinion_for(native)
    files = config_paths(facts.project_dir(os.environ, payload))
    if not files:
        return no_opinion
    lookup = index.read(files)
    if lookup.nobody(facts.name, native, None):
        return no_opinion
    found = lookup.refusal(facts.name, native)
    if found is not None:
        return found
    from hookbus import hosts

    return answer_owed(hosts.driver(facts.name), native, None, "hookbus could not answer in time")
