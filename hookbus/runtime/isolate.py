"""Run untrusted work (handler modules, handlers) in a forked child, under a deadline.

The child's stdin, stdout and stderr are /dev/null: nothing it prints can reach the
host, whose stdout is the reply channel, and it holds none of the host's pipes open (a
host waits for those to close). It talks back through a pipe in length-prefixed frames,
notes first and one result last, so a grandchild that keeps the pipe open (a handler
that forks) cannot hold the reply, and a child killed at the deadline still leaves what
it last said (the handler it was importing, the fallback it computed). An interval
timer, armed in the child, ends it by the kernel's hand once its lifetime is over,
whatever the parent does; a Python-level timeout could not fire while the child is stuck
in C code holding the GIL.

The child is the leader of a process group of its own: a handler that signals its own
group (``os.killpg(0, ...)``, ``os.kill(0, ...)``) ends the child and what it started,
never the process the host waits on, nor the shell around it (which share the host's
group), so the parent still answers: the refusal a fail-closed handler is owed when the
child died. The parent kills the whole group (the handlers' own children too) when the
child is late or dies without a result, and when the parent itself must give up at once
(:func:`kill_waited`: a signal, the hook's last-resort timer), as a signal the host sent
to the hook's group once did.

The parent never waits for a child that has answered: it may go on writing the index
or diagnostics after its reply, on its own time.

Standard library only.
"""

from __future__ import annotations

import _thread
import gc
import os
import re
import select
import signal
import time
import warnings
from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    Status = Literal["ok", "timeout", "died", "fork-failed"]

_HEADER = 9  # one byte of frame kind, eight of length
#: Signals the child takes back to their default action (the parent answers the host).
_RESET = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM)
_RESULT = b"="


class Channel:
    """The child's end: ``note`` sends a note of some kind (the parent keeps the last of
    each kind), ``result`` the one result."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.sent = False

    def note(self, kind: str, payload: bytes) -> None:
        _send(self.fd, kind.encode()[:1], payload)

    def result(self, data: bytes) -> None:
        if not self.sent:
            self.sent = True
            _send(self.fd, _RESULT, b"+" + data)


#: What runs in the child: it sends its result on the channel (or returns it), and may
#: return work to do once the result is sent (the reply must not wait for it).
Work = Callable[[Channel], "bytes | Callable[[], None] | None"]


class Child:
    """The result of :func:`run_child`: ``status``, ``data`` when it is ``ok``, and the
    last note of each kind the child sent."""

    __slots__ = ("data", "notes", "pid", "status")

    def __init__(
        self,
        status: Status,
        data: bytes = b"",
        pid: int = 0,
        notes: dict[str, bytes] | None = None,
    ) -> None:
        self.status = status
        self.data = data
        self.pid = pid
        self.notes = notes or {}


def run_child(
    work: Work,
    *,
    deadline: float,
    lifetime: float,
    kill_late: bool = True,
    notes: dict[str, bytes] | None = None,
) -> Child:
    """Fork, run ``work(channel)`` in the child and return its result, if it came by
    ``deadline`` (a ``time.monotonic()`` value). The child's notes are put in ``notes`` as
    they arrive (a signal handler may read them while this waits).

    A late child is killed (``kill_late``) or left to finish in the background; either
    way it is gone ``lifetime`` seconds after the fork.
    """
    read_end, write_end = os.pipe()
    # Signals wait across the fork: the parent's handlers (which answer the host) must
    # never run in the child, which resets them before it lets signals in.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _RESET)
    try:
        with _fork_warning_off():
            pid = os.fork()
    except OSError:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        os.close(read_end)
        os.close(write_end)
        return Child("fork-failed")
    if pid == 0:
        os.close(read_end)
        _child(work, write_end, lifetime, blocked)
    # Here as well as in the child: whichever runs first, the group exists before the
    # parent may kill it, and before a handler may signal its own.
    _own_group(pid)
    _waited.add(pid)
    signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    os.close(write_end)
    if notes is None:
        notes = {}
    try:
        data = _receive(read_end, deadline, notes)
    finally:
        os.close(read_end)
        _waited.discard(pid)
    if data is None:
        if kill_late:
            _kill(pid)
        return Child("timeout", pid=pid, notes=notes)
    if not data:  # it closed the pipe without a result: make sure it is gone
        _kill(pid)
        return Child("died", pid=pid, notes=notes)
    _reap_later(pid)
    return Child("ok", data[1:], pid, notes)


# Python 3.12 warns when a process with threads forks: the child may deadlock on a lock
# another thread held. Acceptable here: the child runs only hookbus and the handlers,
# touches none of the parent's other objects, reports through its own pipe and ends with
# os._exit, and a child that does block is ended at its deadline like any other. One
# filter entry, matching only this module's fork, present only while some thread may be
# forking (warnings.catch_warnings would restore the whole list, losing other threads'
# changes, so it is not used).
_FORK_WARNING = ("ignore", re.compile(r"This process .* is multi-threaded, use of fork\(\)"),
                 DeprecationWarning, re.compile(r"hookbus\.runtime\.isolate\Z"), 0)  # fmt: skip
_forking = [0]
_forking_lock = _thread.allocate_lock()


def _filters() -> list[object]:
    return warnings.filters  # type: ignore[return-value]  # a list, typed as a Sequence


class _fork_warning_off:
    def __enter__(self) -> None:
        with _forking_lock:
            _forking[0] += 1
            if _forking[0] == 1:
                _filters().insert(0, _FORK_WARNING)

    def __exit__(self, *exc: object) -> None:
        with _forking_lock:
            _forking[0] -= 1
            if _forking[0] == 0 and _FORK_WARNING in _filters():
                _filters().remove(_FORK_WARNING)


#: The children a :func:`run_child` is waiting for (forked, no result yet).
_waited: set[int] = set()


def _own_group(pid: int) -> None:
    try:  # noqa: SIM105 (contextlib is not loaded on the cold path)
        os.setpgid(pid, pid)
    except OSError:
        pass  # the child has made it already, or is gone


def kill_waited() -> None:
    """Kill the children still owing a result, with their groups: this process must end
    now (a signal, its last-resort timer), and they would run on without it."""
    for pid in list(_waited):
        _kill_group(pid)


def _kill_group(pid: int) -> None:
    for kill in (os.killpg, os.kill):  # the group, else the child alone
        try:
            kill(pid, signal.SIGKILL)
            return
        except ProcessLookupError:
            continue


def _kill(pid: int) -> None:
    # (try/except, not contextlib.suppress: contextlib is not loaded on the cold path)
    _kill_group(pid)
    try:  # noqa: SIM105
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _reap_later(pid: int) -> None:
    # Reap it now if it is done, else from a daemon thread: a hook process exits without
    # waiting (init reaps the child), a long-lived one (an in-process host) keeps no zombie.
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return
    if not done:
        import _thread

        _thread.start_new_thread(_wait_quietly, (pid,))


def _wait_quietly(pid: int) -> None:
    try:  # noqa: SIM105
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _send(fd: int, kind: bytes, payload: bytes) -> None:
    view = memoryview(kind + len(payload).to_bytes(_HEADER - 1, "big") + payload)
    while view:
        view = view[os.write(fd, view) :]


def _child(work: Work, fd: int, lifetime: float, mask: set[int | signal.Signals]) -> None:
    try:
        _own_group(0)
        for sig in _RESET:
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        signal.setitimer(signal.ITIMER_REAL, lifetime)
        # A short-lived process, whose memory is returned at exit; and a collection here
        # would touch, and so copy, every page of the heap it shares with its parent.
        gc.disable()
        try:  # noqa: SIM105 (contextlib is not loaded on the cold path)
            signal.set_wakeup_fd(-1)  # a host's event loop must not hear the child's signals
        except (ValueError, OSError):
            pass
        null = os.open(os.devnull, os.O_RDWR)
        for std in (0, 1, 2):
            os.dup2(null, std)
        os.close(null)
        channel = Channel(fd)
        then = work(channel)
        if isinstance(then, bytes):
            channel.result(then)
            then = None
        os.close(fd)
        if then is not None:
            then()
    finally:
        os._exit(0)


def _receive(fd: int, deadline: float, notes: dict[str, bytes]) -> bytes | None:
    """The child's result (b"" when it died without one, None at the deadline), with a
    leading byte the caller strips; its notes land in ``notes``."""
    buffer = bytearray()
    while True:
        while len(buffer) >= _HEADER:
            size = int.from_bytes(buffer[1:_HEADER], "big")
            if len(buffer) < _HEADER + size:
                break
            kind, payload = bytes(buffer[:1]), bytes(buffer[_HEADER : _HEADER + size])
            del buffer[: _HEADER + size]
            if kind == _RESULT:
                return payload
            notes[kind.decode("latin-1")] = payload
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 65536)
        if not chunk:
            return b""
        buffer += chunk
