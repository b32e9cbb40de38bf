"""One ``run`` request, answered in a forked child of the warm server.

The child runs the cold path's own call (:func:`hookbus.runtime.hook.answer`: peek,
index, decode, bus, encode, the deadline and the fail-open/fail-closed rules) on the
payload the client sent, with two differences only:

- the reply is captured (:class:`Capture`) and sent as frames, not written to fd 1/2
  (the child's stdio is /dev/null, so a handler's prints reach no one, as in the
  worker);
- the worker runs in this child itself (:func:`run_inline`), not in a fork of it: the
  child is already a disposable process the server kills once past its deadline.

Then it tells the server which handler modules it imported within its time (the server
may keep them warm), writes its diagnostics and the index it compiled, and ends with
``os._exit``.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import NoReturn

from hookbus.bus.output import HookOutput
from hookbus.local import diagnostics, state
from hookbus.runtime import hook
from hookbus.runtime.call import Call
from hookbus.runtime.emergency import Emergency
from hookbus.runtime.index import Lookup
from hookbus.runtime.intake import MAX_INPUT, Intake
from hookbus.runtime.isolate import Channel, Child, Work
from hookbus.runtime.warm import wire

#: The child ends by the kernel's hand this long after its deadline, should the server
#: be gone (the server itself kills it one second after).
BACKSTOP = 2.0
#: A warm report longer than this is dropped (one write to a pipe is atomic up to it).
REPORT_MAX = 4096
#: The call's worker ends by the kernel's hand this long after the dispatch's deadline:
#: a handler holding the GIL (spinning in C) keeps every thread of this process from
#: answering, where the cold path's watchdog would kill its worker at the deadline. The
#: server then tells the client that nobody will answer (``unanswered``).
OVERRUN_GRACE = 0.25


class Capture(Emergency):
    """The call's answer, kept for the frames instead of written to fd 1 and 2; never
    installed (the server's child has no host to answer on a signal), and its timer is
    the kernel's backstop only."""

    def __init__(self) -> None:
        super().__init__()
        self.reply: HookOutput | None = None

    def answer(self, output: HookOutput) -> int:
        if not self.answered:
            self.answered = True
            self.reply = output
            self.exit_code = output.exit_code
        return self.exit_code

    def arm(self, deadline: float) -> None:
        self.deadline = deadline
        signal.setitimer(signal.ITIMER_REAL, max(0.001, deadline - time.monotonic() + BACKSTOP))

    def disarm(self) -> None:
        pass


class _Inline(Channel):
    def __init__(self, notes: dict[str, bytes]) -> None:
        super().__init__(-1)
        self.notes = notes
        self.data = b""

    def note(self, kind: str, payload: bytes) -> None:
        self.notes[kind] = payload

    def result(self, data: bytes) -> None:
        if not self.sent:
            self.sent = True
            self.data = data


#: Work the inline worker left for after the reply (the index it compiled).
_later: list[Callable[[], None]] = []


def run_inline(
    work: Work, *, deadline: float, lifetime: float, notes: dict[str, bytes] | None = None
) -> Child:
    """:func:`hookbus.runtime.isolate.run_child`'s contract, in this process."""
    notes = {} if notes is None else notes
    saved = diagnostics.take()  # the worker takes what is pending as its parent's
    channel = _Inline(notes)
    # SIGALRM's default action: past the deadline the kernel ends this process, whatever
    # holds the GIL. The backstop it replaces is put back after.
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    began = time.monotonic()
    backstop, _ = signal.setitimer(signal.ITIMER_REAL, max(0.001, deadline - began + OVERRUN_GRACE))
    try:
        then = work(channel)
    except BaseException:
        then = None
    finally:
        left = backstop - (time.monotonic() - began)
        signal.setitimer(signal.ITIMER_REAL, max(0.001, left) if backstop else 0)
        diagnostics.take()
        diagnostics.defer()
        diagnostics.record(saved)
    if isinstance(then, bytes):
        channel.result(then)
    elif then is not None:
        _later.append(then)
    if not channel.sent:
        return Child("died", pid=os.getpid(), notes=notes)
    return Child("ok", channel.data, os.getpid(), notes)


def drop_later() -> None:
    """Forget what a call left for after its reply (a worker's call that failed)."""
    _later.clear()


class Dispatch:
    """Runs a call someone wants in this child (:func:`run_inline`); keeps the call,
    whose configuration and index tell the server what to keep warm (:func:`_report`)."""

    __slots__ = ("call", "lookup")

    def __init__(self) -> None:
        self.call: Call | None = None
        #: The index as the call found it (the worker replaces the call's own when it
        #: compiles one: saved only after the reply, so not the server's to trust yet).
        self.lookup: Lookup | None = None

    def __call__(self, call: Call, after: list[Callable[[], None]]) -> HookOutput:
        from hookbus.runtime.watchdog import dispatch_guarded

        self.call, self.lookup = call, call.lookup
        return dispatch_guarded(call, after, run=run_inline)


class Warm:
    """What the server imported from the user's configuration folders (a call with other
    configuration files must not see it), and its path before it did."""

    __slots__ = ("base_path", "origin")

    def __init__(self, origin: dict[str, tuple[str, ...]], base_path: list[str]) -> None:
        self.origin = origin
        self.base_path = base_path

    def keep_only(self, files: list[str]) -> None:
        """Drop the modules warmed from the folders of a configuration not among ``files``
        (the user's, when ``HOOKBUS_CONFIG`` names another), and the folders calls added
        to ``sys.path``."""
        sys.path[:] = self.base_path
        for name, configs in self.origin.items():
            if not set(configs) <= set(files):
                sys.modules.pop(name, None)


def set_environment(req: wire.Request) -> None:
    """The request's environment, exactly (the calling hook's: not a variable of the
    server's, nor of an earlier call's, is left), and its working folder. The call's
    configuration is found once, by the call itself (:func:`hookbus.runtime.hook.answer`)."""
    exactly(req.env)
    state.forget()  # the request's state root, not the server's
    os.chdir(req.cwd)


def exactly(env: dict[str, str]) -> None:
    """Make ``os.environ`` hold ``env`` and nothing else, changing only the variables
    that differ (each change is a ``putenv``; a worker's environment is put back after
    the call, :class:`hookbus.runtime.warm.pool._Clean`)."""
    raw = raw_environ()
    if raw is None:
        os.environ.clear()
        os.environ.update(env)
        return
    # os.fsencode's own rule, without its call per string (a third of the time here).
    encoding, errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    wanted = {name.encode(encoding, errors): value.encode(encoding, errors)
              for name, value in env.items()}  # fmt: skip
    become(raw, wanted)


def become(raw: dict[bytes, bytes], wanted: dict[bytes, bytes]) -> None:
    """Make the environment whose bytes are ``raw`` (:func:`raw_environ`) hold exactly
    ``wanted``, setting or unsetting only the variables that differ."""
    if wanted == raw:
        return
    zone = raw.get(b"TZ")
    for name in [name for name in raw if name not in wanted]:
        del os.environb[name]
    for name, value in wanted.items():
        if raw.get(name) != value:
            try:
                os.environb[name] = value
            except ValueError:  # no variable can be so named ("=" in it, empty)
                continue
    if raw.get(b"TZ") != zone:  # ``raw`` is the live environment: it holds the new TZ
        time.tzset()  # local time as the caller's: the C library read TZ at its start


def raw_environ() -> dict[bytes, bytes] | None:
    """The bytes behind ``os.environ`` (CPython's ``os._Environ`` keeps them in ``_data``,
    shared with ``os.environb``), which can be scanned and compared without decoding
    every variable as ``os.environ``'s own iteration does; None elsewhere."""
    data = getattr(os.environ, "_data", None)
    if isinstance(data, dict) and os.supports_bytes_environ:
        return data
    return None


def call_of(req: wire.Request) -> hook.Options:
    """The call the request names, as ``hookbus run`` takes it (a timeout no host gives
    is said, and the host's default used, as ``hookbus run`` does with its argument)."""
    timeout = hook.seconds(req.timeout)
    if req.timeout is not None and timeout is None:
        diagnostics.emit("usage-invalid", hook.timeout_problem(req.timeout))
    return hook.Options(req.host, req.event, timeout)


def prepare() -> None:
    """Once per process: default signal handlers, a process group of its own (the
    server kills the whole group: grandchildren too), stdio on /dev/null."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM,
                signal.SIGCHLD):  # fmt: skip
        signal.signal(sig, signal.SIG_DFL)
    os.setpgid(0, 0)
    null = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(null, std)
    os.close(null)


def answer_one(
    conn: socket.socket, req: wire.Request, payload: bytes, report_fd: int, warm: Warm
) -> None:
    """Answer ``req`` on ``conn``, then do what the call left for after its reply."""
    started = time.monotonic()
    diagnostics.take()
    diagnostics.defer()
    try:
        set_environment(req)
    except OSError as exc:
        refusal = wire.Refusal(refused="bad-request", message=f"cannot serve here: {exc}")
        _send(conn, [_encode(refusal)])
        return
    # Modules imported from here on come after these (sys.modules keeps insertion
    # order): counted, not copied, as nothing is imported on most calls.
    before = len(sys.modules)
    capture = Capture()
    after: list[Callable[[], None]] = []
    intake = Intake(payload[: MAX_INPUT + 1], "eof")
    dispatch = Dispatch()
    hook.answer(call_of(req), started, capture, after, intake=intake, dispatch=dispatch,
                found=warm.keep_only)  # fmt: skip
    output = capture.reply or HookOutput()
    _send(conn, [_encode(wire.Answer(exit=output.exit_code)), output.stdout, output.stderr])
    conn.close()
    if dispatch.call is not None and dispatch.lookup is not None:
        _report(report_fd, before, dispatch.call.files, dispatch.lookup)
    data = diagnostics.take()
    if data:
        diagnostics.write(data)
    actions = [*after, *_later]
    _later.clear()
    for action in actions:
        action()


def serve(
    conn: socket.socket, req: wire.Request, payload: bytes, report_fd: int, warm: Warm
) -> NoReturn:
    """In a one-shot forked child: answer ``req`` on ``conn`` and end the process."""
    code = 0
    try:
        prepare()
        gc.disable()  # short-lived: a collection would copy every page shared with the server
        answer_one(conn, req, payload, report_fd, warm)
    except BaseException:
        code = 70
    finally:
        os._exit(code)


def _encode(obj: object) -> bytes:
    import msgspec

    return msgspec.json.encode(obj)


def _send(conn: socket.socket, frames: list[bytes]) -> None:
    conn.setblocking(True)
    conn.settimeout(5.0)
    try:  # noqa: SIM105 (a client that left wants nothing more)
        conn.sendall(b"".join(wire.frame(f) for f in frames))
    except OSError:
        pass


def _report(fd: int, before: int, files: list[str], lookup: Lookup) -> None:
    """Tell the server the handler modules this child imported (the targets of the index
    the call read, in time: the reply is out) with the configuration files and the
    handlers' path; ``before`` is how many modules were loaded when the call began."""
    if len(sys.modules) <= before:
        return  # imported nothing (the usual case once the server is warm)
    from itertools import islice

    from hookbus.runtime import index

    data = lookup.data
    if data is None:
        return
    imported = set(islice(sys.modules, before, None))
    targets = sorted({h["target"] for h in data["handlers"]
                      if h["target"].partition(":")[0] in imported})  # fmt: skip
    if not targets:
        return
    line = json.dumps({"targets": targets, "python_path": data["settings"].get("python_path", []),
                       "configs": [index.stat(p) for p in files]}).encode() + b"\n"  # fmt: skip
    if len(line) <= REPORT_MAX:
        try:  # noqa: SIM105
            os.write(fd, line)
        except OSError:
            pass
