"""The warm server's persistent workers: pre-forked children answering calls in turn.

A fork per call costs more than the call (the page-table copy, copy-on-write faults on
a 20 MB process, per-process caches cold again), so the server keeps a few children
(``HOOKBUS_SERVE_WORKERS``, 2) forked from itself once warm. Each waits on its end of a
socketpair; the server hands it a call there: the connection's descriptor
(``SCM_RIGHTS``) with the header and payload it already read. The worker answers with
:func:`hookbus.runtime.warm.served.answer_one`, the one-shot child's own code, puts back what
the call changed (environment, working folder, ``sys.path``, the modules it imported
from a project's folder, signal handlers and timer, diagnostics deferral), and writes
one byte: idle again.

Isolation is the one-shot child's: the server never runs handler code, and a worker
that executed a project's module (:func:`hookbus.runtime.project_imports.ran`), or that
imported any module the server had not loaded from outside the installed places (the
interpreter's prefixes, its site-packages, hookbus's own folder: :func:`installed_places`),
ends after that call instead of waiting for the next one: no code a call's own
configuration picked (a project's, or one an agent named with ``HOOKBUS_CONFIG``) runs in
a process that will serve another call (a handler can change anything in its process,
hookbus's own dispatch included). The user's own handlers the server keeps warm are
loaded before the fork, so the common call keeps its worker. A call finding
no idle worker (one is stuck in a handler) gets a one-shot fork; a worker busy past its
call's deadline by :data:`~hookbus.runtime.warm.server.KILL_AFTER` is killed with its group;
a worker that dies, or ends itself after :func:`calls` calls, :data:`MAX_GROWTH_KB`
more memory (no leak lives forever) or a call whose handler's thread outlived it, is
replaced. When the server
keeps new modules warm, idle workers are replaced so the next ones share them.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # (no stubs)
import _thread
import os
import selectors
import signal
import socket
import sys
import time
from collections.abc import Callable
from typing import NoReturn

import msgspec

from hookbus.local import diagnostics, state
from hookbus.runtime.project_imports import ran as ran_project_code
from hookbus.runtime.warm import served, wire

#: Workers kept (``$HOOKBUS_SERVE_WORKERS``; 0: a fork per call, as without a pool).
DEFAULT_SIZE = 2
SIZE_ENV = "HOOKBUS_SERVE_WORKERS"
#: A worker ends itself after this many calls, or once it grew by this much memory.
MAX_CALLS = 1000
CALLS_ENV = "HOOKBUS_SERVE_WORKER_CALLS"
MAX_GROWTH_KB = 128 * 1024
#: How long the server waits for an idle worker to take a call.
HAND_WITHIN = 2.0
#: After a failed fork, the next try waits this long (one diagnostic, not one per loop).
RETRY_AFTER = 5.0
_SIZES = 8  # the first message: the header's and the payload's length


def calls(value: str | None = None) -> int:
    """``$HOOKBUS_SERVE_WORKER_CALLS``: the calls a worker answers before it is replaced,
    when an integer from 1 to 1 000 000, else :data:`MAX_CALLS`."""
    return _count(CALLS_ENV, value, 1, 1_000_000, MAX_CALLS)


def size(value: str | None = None) -> int:
    """``$HOOKBUS_SERVE_WORKERS`` when an integer from 0 to 16, else 2."""
    return _count(SIZE_ENV, value, 0, 16, DEFAULT_SIZE)


def _count(name: str, value: str | None, low: int, high: int, default: int) -> int:
    """``value`` (else the variable ``name``) as an integer from ``low`` to ``high``;
    ``default`` for anything else."""
    text = value if value is not None else os.environ.get(name, "")
    try:
        count = int(text)
    except ValueError:
        return default
    return count if low <= count <= high else default


class Worker:
    """The server's view of one worker: its pid, its end of the socketpair, its call."""

    __slots__ = ("conn", "generation", "host", "kill_at", "native", "pid", "sock")

    def __init__(self, pid: int, sock: socket.socket | None, generation: int) -> None:
        self.pid = pid
        #: None once it ended (its end closed); kept until reaped.
        self.sock = sock
        #: The server's own copy of the busy call's connection: should the worker end
        #: without answering, the server tells the client (``server.unanswered``).
        self.conn: socket.socket | None = None
        self.generation = generation
        self.kill_at: float | None = None  # None: idle
        self.host = ""
        self.native: str | None = None


class Pool:
    """The workers of one server process (the server's loop calls every method)."""

    def __init__(self, count: int, selector: selectors.BaseSelector,
                 in_child: Callable[[], None], report_fd: int,
                 warm: Callable[[], served.Warm]) -> None:  # fmt: skip
        self.count = count
        self.selector = selector
        self.in_child = in_child
        self.report_fd = report_fd
        self.warm = warm
        self.workers: dict[int, Worker] = {}
        self.generation = 0
        self.closing = False
        self.retry_at = 0.0

    @property
    def busy(self) -> int:
        return sum(1 for w in self.workers.values() if w.sock and w.kill_at is not None)

    @property
    def live(self) -> int:
        return sum(1 for w in self.workers.values() if w.sock)

    def fill(self) -> None:
        """Fork workers up to the count (none while closing)."""
        if self.live >= self.count or time.monotonic() < self.retry_at:
            return
        while not self.closing and self.live < self.count:
            if not self._fork():
                self.retry_at = time.monotonic() + RETRY_AFTER
                return

    def idle(self) -> Worker | None:
        return next((w for w in self.workers.values()
                     if w.sock and w.kill_at is None and w.generation == self.generation),
                    None)  # fmt: skip

    def hand(self, worker: Worker, conn: socket.socket, header: bytes, payload: bytes,
             req: wire.Request, *, kill_at: float) -> bool:  # fmt: skip
        """Give ``worker`` the call; False (the worker is ended) when it cannot take it."""
        assert worker.sock is not None
        sizes = len(header).to_bytes(4, "big") + len(payload).to_bytes(4, "big")
        try:
            worker.sock.settimeout(HAND_WITHIN)
            socket.send_fds(worker.sock, [sizes], [conn.fileno()])
            worker.sock.sendall(header + payload)
        except OSError:
            self._kill(worker)
            return False
        worker.kill_at, worker.host, worker.native = kill_at, req.host, req.event
        worker.conn = conn
        return True

    def ready(self, worker: Worker) -> None:
        """``worker``'s end is readable: idle again, or gone (ended, or killed)."""
        assert worker.sock is not None
        try:
            said = worker.sock.recv(16)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            said = b""
        if said:  # it answered: the call is over
            worker.kill_at = None
            if worker.conn is not None:
                worker.conn.close()
                worker.conn = None
        if not said or self.closing or worker.generation != self.generation:
            self._end(worker)

    def reaped(self, pid: int) -> Worker | None:
        """Forget the worker ``pid`` (None when it was not one); its ``conn`` is the call
        it ended in without answering, if any."""
        worker = self.workers.pop(pid, None)
        if worker is None:
            return None
        self._end(worker)
        return worker

    def late(self, now: float) -> list[Worker]:
        """Kill the workers busy past their call's deadline (and a second); those."""
        killed = [w for w in self.workers.values()
                  if w.sock and w.kill_at is not None and now >= w.kill_at]  # fmt: skip
        for worker in killed:
            self._kill(worker)
        return killed

    def renew(self) -> None:
        """Replace the workers (idle ones now, busy ones once done): the server keeps
        new modules warm, which the next workers share."""
        self.generation += 1
        for worker in list(self.workers.values()):
            if worker.sock and worker.kill_at is None:
                self._end(worker)

    def close(self) -> None:
        """End every worker (a busy one after its call): the server stops or reloads."""
        self.closing = True
        self.renew()

    def close_in_child(self) -> None:
        for worker in self.workers.values():
            if worker.sock:
                worker.sock.close()
            if worker.conn:
                worker.conn.close()

    def _end(self, worker: Worker) -> None:
        """Close the server's end: an idle worker reads the end and exits."""
        if worker.sock is None:
            return
        try:  # noqa: SIM105
            self.selector.unregister(worker.sock)
        except (KeyError, ValueError):
            pass
        worker.sock.close()
        worker.sock = None

    def _kill(self, worker: Worker) -> None:
        for kill in (os.killpg, os.kill):  # before its setpgid, the worker alone
            try:
                kill(worker.pid, signal.SIGKILL)
                break
            except ProcessLookupError:
                continue
        self._end(worker)

    def _fork(self) -> bool:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            pid = os.fork()
        except OSError as exc:
            ours.close()
            theirs.close()
            diagnostics.emit("server-worker-failed", f"cannot fork a worker: {exc}; calls "
                             "are answered by one-shot children")  # fmt: skip
            return False
        if pid == 0:
            ours.close()
            self.in_child()
            self.close_in_child()
            work(theirs, self.report_fd, self.warm())
        theirs.close()
        ours.setblocking(False)
        worker = Worker(pid, ours, self.generation)
        self.workers[pid] = worker
        self.selector.register(ours, selectors.EVENT_READ, worker)
        return True


def rss_kb() -> int:
    """This process's resident memory, in KiB (0 when unknown)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    return pages * os.sysconf("SC_PAGE_SIZE") // 1024


# -- in the worker ---------------------------------------------------------------------


def work(sock: socket.socket, report_fd: int, warm: served.Warm) -> NoReturn:
    """The worker's life: answer the calls handed on ``sock`` until its end closes."""
    code = 0
    try:
        served.prepare()
        sock.setblocking(True)
        clean = _Clean(warm)
        grown_past = rss_kb() + MAX_GROWTH_KB
        last = calls()
        for done in range(1, last + 1):
            call = _receive(sock)
            if call is None:
                break
            conn, req, payload = call
            foreign = True
            try:
                served.answer_one(conn, req, payload, report_fd, warm)
            finally:
                conn.close()
                foreign = clean.restore()
            # A sync handler abandoned at its deadline still runs on its thread: it must
            # not run on into the next call, so this worker ends (os._exit ends the
            # thread, as it does in a one-shot child) and the server forks another.
            # Ending, it must not say it is idle: a call handed to it then would be lost
            # with its end of the socket pair (the client would see its connection close).
            if done == last or foreign or ran_project_code() or threads_outlived() or \
                    rss_kb() > grown_past:  # fmt: skip
                break
            sock.sendall(b".")
    except BaseException:
        code = 70
    finally:
        os._exit(code)


#: How long a worker waits, after its answer is out, for its call's threads to end.
THREADS_GRACE = 0.5


def threads_outlived(grace: float = THREADS_GRACE) -> bool:
    """Whether a thread of the call is still running ``grace`` seconds on. A handler's
    thread that returned hands its result over before the interpreter has ended it,
    so one that finished is still counted for a moment (longer on a loaded machine);
    one left behind at its deadline is asleep or stuck, and still there. (Each handler
    gets a thread of its own, never one that ran another call's: a thread's locals and
    context would outlive their call.)"""
    until = time.monotonic() + grace
    while _thread._count():
        if time.monotonic() >= until:
            return True
        time.sleep(0.0005)
    return False


def _receive(sock: socket.socket) -> tuple[socket.socket, wire.Request, bytes] | None:
    """The next call: its connection, header and payload; None once the server left."""
    sizes, fds, _, _ = socket.recv_fds(sock, _SIZES, 1)
    if len(sizes) < _SIZES or len(fds) != 1:
        for fd in fds:
            os.close(fd)
        return None
    conn = socket.socket(fileno=fds[0])
    head, body = int.from_bytes(sizes[:4], "big"), int.from_bytes(sizes[4:], "big")
    data = bytearray()
    while len(data) < head + body:
        chunk = sock.recv(head + body - len(data))
        if not chunk:
            conn.close()
            return None
        data += chunk
    req = msgspec.json.decode(bytes(data[:head]), type=wire.Request)
    return conn, req, bytes(data[head:])


class _Clean:
    """What a worker had before its first call, put back after each one."""

    def __init__(self, warm: served.Warm) -> None:
        self.environ = dict(os.environ)
        raw = served.raw_environ()
        self.raw_environ = None if raw is None else dict(raw)
        self.path = list(warm.base_path)
        self.modules = dict(sys.modules)
        # _signal's own getsignal: signal's wraps each answer in an enum, 60 times a call.
        self.handlers = {}
        for sig in signal.valid_signals():
            handler = _signal.getsignal(sig)
            if handler is not None:
                self.handlers[sig] = handler
        #: Where modules shared by every configuration come from (not a project's folder).
        self.shared = tuple(os.path.join(p, "") for p in self.path
                            if os.path.isabs(p) and p != "/")  # fmt: skip
        self.installed = installed_places()

    def restore(self) -> bool:
        """Put the worker back as it was; whether the call imported a module from outside
        the installed places, which the worker must not keep for another call."""
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in self.handlers.items():
            if _signal.getsignal(sig) is not handler:
                try:
                    signal.signal(sig, handler)
                except (OSError, ValueError):
                    continue
        diagnostics.take()  # deferral ends with the call
        self._restore_environ()
        state.forget()
        os.chdir("/")
        sys.path[:] = self.path
        served.drop_later()
        foreign = False
        for name in [n for n in sys.modules if n not in self.modules]:
            module = sys.modules[name]
            foreign = foreign or not _within(module, self.installed)
            if not _within(module, self.shared):
                del sys.modules[name]
        for name, module in self.modules.items():  # dropped, or replaced, by a call
            if sys.modules.get(name) is not module:
                sys.modules[name] = module
        return foreign

    def _restore_environ(self) -> None:
        """Put back the variables the call set, changed or unset, and only those: clearing
        and refilling the whole environment costs a call a quarter of a millisecond."""
        now, then = served.raw_environ(), self.raw_environ
        if now is None or then is None:
            os.environ.clear()
            os.environ.update(self.environ)
            return
        served.become(now, then)


def _within(module: object, places: tuple[str, ...]) -> bool:
    """Whether every file of ``module`` (its ``__file__``, a package's ``__path__``) lies
    in ``places`` (a built-in module has none)."""
    where = getattr(module, "__file__", None)
    files = [where] if isinstance(where, str) else []
    files += [p for p in getattr(module, "__path__", None) or () if isinstance(p, str)]
    return all(p.startswith(places) for p in files)


def installed_places() -> tuple[str, ...]:
    """Where installed code lives (each ending in ``/``, as given and as its real path):
    the interpreter's prefixes (its standard library, a virtual environment's
    site-packages), the site-packages ``site`` added, and hookbus's own folder (an
    editable install). Not the user's configuration folder: which one a call uses is the
    call's to choose."""
    import site

    import hookbus

    package = os.path.dirname(os.path.abspath(hookbus.__file__ or ""))
    places = [sys.prefix, sys.base_prefix, sys.exec_prefix, package, *site.getsitepackages()]
    if site.ENABLE_USER_SITE and site.USER_SITE:
        places.append(site.USER_SITE)
    return tuple(sorted({os.path.join(f(p), "") for p in places if p
                         for f in (os.path.abspath, os.path.realpath)}))  # fmt: skip
