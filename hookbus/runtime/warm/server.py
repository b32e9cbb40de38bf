"""``hookbus serve``: the warm server, one per user, on a Unix socket (docs/server.md).

The server is one thread running a selectors loop: accept, check the peer's uid
(``SO_PEERCRED``), read the request within a bound, check its protocol and version. It
never runs handler code for a request: each ``run`` is answered by a forked child
(:mod:`hookbus.runtime.warm.served`), so a handler that hangs, or holds the GIL in C code,
stalls its own child only; the server kills the child's whole process group once it
outlives its deadline (the host's timeout) by one second, and reaps children without
blocking. Forking from a single-threaded process is safe, and from a warm one cheap:
msgspec, the bus and every driver are imported once, here, and so are the user's own
handler modules a child has proved to import within its time (a module whose import hung
or failed is never imported here). A project's code is never imported here: this process
serves every project, and a worker that ran a project's code ends after its call
(:mod:`hookbus.runtime.warm.pool`).

When a configuration file or a file of a module imported here changes, the server stops
accepting (clients wait in the listen queue), lets its children end, and re-executes
itself on the same socket. It exits after ``HOOKBUS_SERVE_IDLE`` seconds (900) without
a request, on ``stop``, or on SIGTERM.

Its socket and the lock that says it is alive are :mod:`hookbus.runtime.warm.listen`'s.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import selectors
import signal
import socket
import sys
import time

import msgspec

import hookbus
from hookbus import __version__
from hookbus.hosts import HOSTS
from hookbus.local import diagnostics
from hookbus.local.interpreter import python_argv
from hookbus.runtime.warm import pool, served, wire
from hookbus.runtime.warm.client import IDENTITY_ENV
from hookbus.runtime.warm.listen import AnotherServer, Listener, peer_uid, running
from hookbus.runtime.warm.pool import rss_kb

__all__ = ["AnotherServer", "Listener", "Server", "peer_uid", "running", "server_status"]

#: How long a client has to send its header, and then its payload.
HEADER_WITHIN = 1.0
PAYLOAD_WITHIN = 1.0
#: Children at once; one more request is refused ``busy`` (its client runs cold).
MAX_CHILDREN = 128
#: A child still alive this long past its deadline is killed.
KILL_AFTER = 1.0
DEFAULT_IDLE = 900.0
IDLE_ENV = "HOOKBUS_SERVE_IDLE"
#: The loop wakes at least this often (reaping, kills, stat checks, idle).
TICK = 0.2
#: While requests keep it awake, the loop does that housekeeping at most this often:
#: a request wakes it two or three times (accept, a worker's "idle"), and a waitpid and
#: a stat of every watched file each time cost a warm call a fifth of a millisecond.
#: (Each request still checks the watched files before it is handed on: ``_fork``.)
HOUSEKEEPING = 0.05
#: How often the server checks that its socket and pid file are still its own.
PLACE_CHECK = 2.0


def idle_seconds(value: str | None = None) -> float:
    """``--idle`` or ``$HOOKBUS_SERVE_IDLE`` when a positive number, else 900."""
    text = value if value is not None else os.environ.get(IDLE_ENV, "")
    try:
        seconds = float(text)
    except ValueError:
        return DEFAULT_IDLE
    return seconds if 0 < seconds < 1e9 else DEFAULT_IDLE


def server_status(timeout: float = 2.0) -> wire.ServerStatus | None:
    """The status of this user's server; None when none answers (for ``hookbus doctor``)."""
    try:
        found = wire.ask("status", timeout)
    except (OSError, ValueError, msgspec.MsgspecError):
        return None
    return found if isinstance(found, wire.ServerStatus) else None


class _Conn:
    __slots__ = ("buffer", "deadline", "header", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = bytearray()
        self.header: wire.Request | None = None
        self.deadline = time.monotonic() + HEADER_WITHIN


class _Child:
    __slots__ = ("conn", "host", "kill_at", "native")

    def __init__(self, host: str, native: str | None, kill_at: float,
                 conn: socket.socket) -> None:  # fmt: skip
        self.host = host
        self.native = native
        self.kill_at = kill_at
        #: The server's copy of its call's connection (see :func:`unanswered`).
        self.conn = conn


class Server:
    def __init__(self, listener: Listener, *, idle: float, started: float | None = None,
                 served: int = 0) -> None:  # fmt: skip
        self.listener = listener
        self.idle = idle
        self.started = started or time.time()
        self.served = served
        self.last_request = time.monotonic()
        self.children: dict[int, _Child] = {}
        self.conns: dict[int, _Conn] = {}
        #: path -> [path, mtime_ns, size] as last seen, for the files whose change reloads.
        self.watched: dict[str, list[object]] = {}
        self.warm: set[str] = set()
        #: The modules those imports brought in.
        self.warm_modules: set[str] = set()
        #: Those found on the user's configuration's own path (its folder): module name ->
        #: the user's configuration files. A call with other files (``HOOKBUS_CONFIG``
        #: naming another) must not see them, so its child drops them.
        self.warm_origin: dict[str, tuple[str, ...]] = {}
        self.base_path = list(sys.path)
        #: The configuration identity this server serves (its own starting environment's:
        #: :data:`hookbus.runtime.warm.client.IDENTITY_ENV`); a call with other values is refused.
        self.identity = {name: os.environ.get(name) for name in IDENTITY_ENV}
        self.stopping: str | None = None
        self.place_checked = time.monotonic()
        self.reloading: str | None = None
        self.report_r, self.report_w = os.pipe()
        os.set_blocking(self.report_r, False)
        self.reports = bytearray()
        self.selector = selectors.DefaultSelector()
        listener.sock.setblocking(False)
        self.selector.register(listener.sock, selectors.EVENT_READ, "accept")
        self.selector.register(self.report_r, selectors.EVENT_READ, "report")
        self.pool = pool.Pool(pool.size(), self.selector, self._in_child, self.report_w,
                              self._warm_state)  # fmt: skip

    # -- the loop ----------------------------------------------------------------------

    def run(self) -> int:
        """Serve until stopped (or re-execute); the exit code."""
        try:
            return self._run()
        except BaseException as exc:
            import traceback

            diagnostics.emit("server-stopped", f"hookbus server {os.getpid()} failed: {exc!r}",
                             level="error", error=traceback.format_exc(limit=8))  # fmt: skip
            self.listener.close()
            return 70

    def _run(self) -> int:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._on_signal)
        warm_up()
        import gc

        gc.freeze()  # what is warm now is shared with every child, never copied by a collection
        self.pool.fill()
        where = self.listener.path
        diagnostics.emit("server-started", f"hookbus server {os.getpid()} listening on {where}",
                         level="info", socket=where)  # fmt: skip
        due = 0.0
        while True:
            ready = self.selector.select(TICK)
            for key, _ in ready:
                if key.data == "accept":
                    self._accept()
                elif key.data == "report":
                    self._read_reports()
                elif isinstance(key.data, pool.Worker):
                    self.pool.ready(key.data)
                else:
                    self._read(key.data)
            now = time.monotonic()
            if not ready or now >= due or self.stopping or self.reloading:
                due = now + HOUSEKEEPING
                self._housekeeping(now)
            if self.stopping or self.reloading:
                self.pool.close()  # workers end first, a busy one after its call
                if not self.children and not self.conns and not self.pool.workers:
                    break
            else:
                self.pool.fill()  # at once: a worker that just ended is replaced
        if self.reloading is not None and self.stopping is None:
            self._exec()
        diagnostics.emit("server-stopped", f"hookbus server {os.getpid()} stopped: "
                         f"{self.stopping}; served {self.served}", level="info")  # fmt: skip
        self.listener.close()
        return 0

    def _housekeeping(self, now: float) -> None:
        """Reap and kill children, drop slow clients, stop when idle, reload on a change,
        check that the socket is still this server's."""
        self._reap()
        self._kill_late(now)
        self._drop_slow(now)
        if not self.stopping and not self.children and not self.conns and \
                not self.pool.busy and now - self.last_request >= self.idle:  # fmt: skip
            self._stop(f"idle for {self.idle:g}s")
        if self.reloading is None and self.stopping is None:
            self._check_watched()
        if self.stopping is None and now >= self.place_checked + PLACE_CHECK:
            self.place_checked = now
            lost = self.listener.lost()
            if lost is not None:
                self._stop(lost)  # the next client starts a server that can be reached

    def _on_signal(self, signum: int, frame: object) -> None:
        self._stop(signal.Signals(signum).name)

    def _stop(self, why: str) -> None:
        if self.stopping is None:
            self.stopping = why
            self._stop_accepting()

    def _stop_accepting(self) -> None:
        try:  # noqa: SIM105
            self.selector.unregister(self.listener.sock)
        except (KeyError, ValueError):
            pass

    # -- connections -------------------------------------------------------------------

    def _accept(self) -> None:
        try:
            sock, _ = self.listener.sock.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            if exc.errno in (errno.EMFILE, errno.ENFILE):
                time.sleep(0.01)
            return
        try:
            pid, uid = peer_uid(sock)
        except OSError:
            pid, uid = 0, -1
        if uid != os.geteuid():
            sock.close()
            diagnostics.emit("server-refused", f"a connection from uid {uid} (pid {pid}) "
                             "closed: only this user's processes are served",
                             uid=uid, peer=pid)  # fmt: skip
            return
        sock.setblocking(False)
        conn = _Conn(sock)
        self.conns[sock.fileno()] = conn
        self.selector.register(sock, selectors.EVENT_READ, conn)
        # A client sends its request as soon as it is connected: usually here already,
        # and read now rather than on the loop's next turn.
        self._read(conn)

    def _read(self, conn: _Conn) -> None:
        try:
            chunk = conn.sock.recv(1 << 20)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._close(conn)
            return
        conn.buffer += chunk
        frames = self._frames(conn)
        if frames is None:
            return
        if conn.header is None:
            return self._refuse(conn, "bad-request", "a frame over the limit")
        self._handle(conn, frames)

    def _frames(self, conn: _Conn) -> list[bytes] | None:
        """The request's frames once all have arrived (None: not yet); parses the header
        as soon as it is whole."""
        found = []
        at = 0
        buf = conn.buffer
        while len(buf) - at >= wire.LENGTH_BYTES:
            size = int.from_bytes(buf[at : at + wire.LENGTH_BYTES], "big")
            if size > wire.MAX_FRAME:
                conn.header = None
                return []
            if len(buf) - at - wire.LENGTH_BYTES < size:
                break
            found.append(bytes(buf[at + wire.LENGTH_BYTES : at + wire.LENGTH_BYTES + size]))
            at += wire.LENGTH_BYTES + size
        if found and conn.header is None:
            header = self._header(conn, found[0])
            if header is None:
                return None
            conn.header = header
            conn.deadline = time.monotonic() + PAYLOAD_WITHIN
        if conn.header is None:
            return None
        wanted = 2 if conn.header.op == "run" else 1
        return found if len(found) >= wanted else None

    def _header(self, conn: _Conn, data: bytes) -> wire.Request | None:
        try:
            raw = msgspec.json.decode(data)
        except msgspec.DecodeError:
            raw = None
        if not isinstance(raw, dict):
            self._refuse(conn, "bad-request", "the header is not a JSON object")
            return None
        if raw.get("proto") != wire.PROTO:
            self._refuse(conn, "proto", f"this server speaks protocol {wire.PROTO}")
            return None
        if raw.get("version") != __version__:
            self._refuse(conn, "version", f"this server is hookbus {__version__}, not "
                         f"{str(raw.get('version'))[:40]}")  # fmt: skip
            return None
        try:
            header = msgspec.convert(raw, wire.Request)
        except msgspec.ValidationError as exc:
            self._refuse(conn, "bad-request", f"bad header: {exc}")
            return None
        if header.op == "run" and header.host not in HOSTS:
            self._refuse(conn, "bad-request", f"unknown host {header.host[:80]!r}")
            return None
        if header.op == "run":
            # Its socket's name already keeps calls of another identity away (it is a
            # digest: one can be forged); a call whose configuration or state is not this
            # server's would load code picked by its own caller into a process that
            # serves this user's every call: its cold path answers it.
            other = [n for n, v in self.identity.items() if header.env.get(n) != v]
            if other:
                self._refuse(conn, "bad-request", "another configuration identity than "
                             f"this server's ({', '.join(other)}): not served here")  # fmt: skip
                return None
        return header

    def _handle(self, conn: _Conn, frames: list[bytes]) -> None:
        header = conn.header
        assert header is not None
        if header.op == "status":
            self._reply(conn, msgspec.json.encode(self.status()))
        elif header.op == "stop":
            self._reply(conn, msgspec.json.encode(wire.Answer()))
            self._stop("asked to stop")
        elif len(self.children) + self.pool.busy >= MAX_CHILDREN:
            in_flight = len(self.children) + self.pool.busy
            self._refuse(conn, "busy", f"{in_flight} requests in flight")
        else:
            self._fork(conn, header, frames[0], frames[1])

    def _reply(self, conn: _Conn, data: bytes) -> None:
        try:
            conn.sock.setblocking(True)
            conn.sock.settimeout(1.0)
            conn.sock.sendall(wire.frame(data))
        except OSError:
            pass
        self._close(conn)

    def _refuse(self, conn: _Conn, refused: wire.Refused, message: str) -> None:
        if refused == "bad-request":
            diagnostics.emit("server-refused", f"a request refused: {message}", refused=refused)
        self._reply(conn, msgspec.json.encode(wire.Refusal(refused=refused, message=message)))

    def _close(self, conn: _Conn) -> None:
        self._release(conn)
        conn.sock.close()

    def _release(self, conn: _Conn) -> None:
        """Stop reading ``conn``: a child or worker answers it now."""
        self.conns.pop(conn.sock.fileno(), None)
        try:  # noqa: SIM105
            self.selector.unregister(conn.sock)
        except (KeyError, ValueError):
            pass

    def _drop_slow(self, now: float) -> None:
        for conn in [c for c in self.conns.values() if now > c.deadline]:
            what = "header" if conn.header is None else "payload"
            self._refuse(conn, "bad-request", f"the {what} did not arrive in time")

    # -- children ----------------------------------------------------------------------

    def _fork(self, conn: _Conn, header: wire.Request, raw: bytes, payload: bytes) -> None:
        if self.reloading is None:
            self._check_watched()
        self.served += 1
        self.last_request = time.monotonic()
        facts = HOSTS[header.host]
        timeout = header.timeout if header.timeout and 0 < header.timeout <= 86_400 else None
        timeout = timeout or facts.timeout_for(header.event)
        kill_at = time.monotonic() + timeout + KILL_AFTER
        worker = self.pool.idle() if self.reloading is None else None
        if worker is not None and self.pool.hand(worker, conn.sock, raw, payload, header,
                                                 kill_at=kill_at):  # fmt: skip
            self._release(conn)  # the worker's now; the server keeps its copy
            return
        try:
            pid = os.fork()
        except OSError as exc:
            self._refuse(conn, "busy", f"cannot fork: {exc}")
            return
        if pid == 0:
            self._in_child(conn)
            if self.reloading is not None:
                # Changed since it was imported here: the child imports it afresh.
                for name in self.warm_modules:
                    sys.modules.pop(name, None)
                import importlib

                importlib.invalidate_caches()
            served.serve(conn.sock, header, payload, self.report_w, self._warm_state())
        self.children[pid] = _Child(header.host, header.event, kill_at, conn.sock)
        self._release(conn)

    def _in_child(self, keep: _Conn | None = None) -> None:
        """Drop what the child must not hold: the listener, the lock (a child outliving
        the server must not keep a new one from starting), others' connections, the
        workers' ends."""
        self.selector.close()
        self.listener.sock.close()
        os.close(self.listener.lock_fd)
        os.close(self.report_r)
        for conn in self.conns.values():
            if conn is not keep:
                conn.sock.close()
        for child in self.children.values():
            child.conn.close()
        self.pool.close_in_child()

    def _warm_state(self) -> served.Warm:
        return served.Warm(self.warm_origin, self.base_path)

    def _reap(self) -> None:
        while self.children or self.pool.workers:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:  # someone else reaped them: their clients must not wait
                for child in self.children.values():
                    child.conn.close()
                for pid in list(self.pool.workers):
                    worker = self.pool.reaped(pid)
                    if worker is not None and worker.conn is not None:
                        worker.conn.close()
                self.children.clear()
                return
            if pid == 0:
                return
            worker = self.pool.reaped(pid)
            ended = worker or self.children.pop(pid, None)
            if ended is not None and ended.conn is not None:
                unanswered(ended.conn, status, ended.host, ended.native)
                ended.conn = None

    def _kill_late(self, now: float) -> None:
        for worker in self.pool.late(now):
            self._killed(worker.pid, worker.host, worker.native)
        for pid, child in list(self.children.items()):
            if now < child.kill_at:
                continue
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                try:  # noqa: SIM105 (it had not yet made its own group)
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            child.kill_at = float("inf")
            self._killed(pid, child.host, child.native)

    def _killed(self, pid: int, host: str, native: str | None) -> None:
        diagnostics.emit("server-child-killed", f"the child answering {host} "
                         f"{native or 'event'} outlived its deadline by {KILL_AFTER:g}s; "
                         "killed (its client, told, or past its own deadline, answers "
                         "its installed fallback)", host=host, native=native,
                         child=pid)  # fmt: skip

    # -- warm modules and reload ------------------------------------------------------

    def _read_reports(self) -> None:
        try:
            while chunk := os.read(self.report_r, 65536):
                self.reports += chunk
        except BlockingIOError:
            pass
        *lines, rest = self.reports.split(b"\n")
        self.reports = bytearray(rest)
        for line in lines:
            try:
                report = json.loads(line)
            except ValueError:
                continue
            self._warm(report)

    def _warm(self, report: dict[str, list[object]]) -> None:
        """Import, here, the handler modules a child imported within its time: only the
        user's own and built-in ones, with the user's own path. A project's code never
        runs in this process, which serves every project (and a report is only a hint: a
        project's handler, running in the child, could have written it)."""
        from hookbus.handlers import BUILTIN
        from hookbus.local.discover import config_paths
        from hookbus.runtime.config import HandlerRef
        from hookbus.runtime.config import load as load_config
        from hookbus.runtime.index import stat
        from hookbus.runtime.load import Unavailable, build_handlers, import_target

        for seen in report.get("configs", []):
            if isinstance(seen, list) and seen:
                self.watched.setdefault(str(seen[0]), seen)
        user_files = config_paths(user_only=True)
        users = load_config(user_files).settings
        own = {r.target for r in users.handlers} | set(BUILTIN.values())
        for target in report.get("targets", []):
            if not isinstance(target, str) or target in self.warm or target not in own:
                continue
            self.warm.add(target)
            before = set(sys.modules)
            try:
                import_target(target, users)
            except (Unavailable, Exception) as exc:
                why = str(exc) if isinstance(exc, Unavailable) else diagnostics.error_line(exc)
                diagnostics.emit("server-warm-failed", f"cannot keep {target} warm: {why}; "
                                 "its children import it themselves", target=target)  # fmt: skip
            else:
                # Built too, not only imported: what the bus checks of a handler (its
                # signature) is then known to every child. Built here without the
                # options the configuration gives it, so a handler that requires some
                # cannot be; each child builds it with them and reports what is wrong.
                ref = HandlerRef(name=target, target=target)
                with contextlib.suppress(Unavailable, Exception):
                    build_handlers(ref, users, lambda *a, **k: None)
            places = tuple(os.path.join(p, "") for p in users.python_path)
            added = set(sys.modules) - before
            if added:
                self.pool.renew()  # the next workers share them
            for name in added:
                self.warm_modules.add(name)
                origin = getattr(sys.modules[name], "__file__", None)
                if isinstance(origin, str) and os.path.isfile(origin):
                    self.watched[origin] = stat(origin)
                    if origin.startswith(places):
                        self.warm_origin[name] = tuple(user_files)

    def _check_watched(self) -> None:
        from hookbus.runtime.index import stat

        for path, seen in self.watched.items():
            if stat(path) != seen:
                self.reloading = f"{path} changed"
                self._stop_accepting()
                return

    def _exec(self) -> None:
        diagnostics.emit("server-reloading", f"hookbus server {os.getpid()} re-executes: "
                         f"{self.reloading}", level="info")  # fmt: skip
        sock_fd, lock_fd = self.listener.sock.fileno(), self.listener.lock_fd
        os.set_inheritable(sock_fd, True)
        os.set_inheritable(lock_fd, True)
        main = os.path.join(os.path.dirname(os.path.abspath(hookbus.__file__)), "__main__.py")
        os.execv(sys.executable, python_argv(sys.executable, main, "serve", "--idle",
                                             repr(self.idle), f"--inherit={sock_fd},{lock_fd},"
                                             f"{self.started!r},{self.served}"))  # fmt: skip

    def status(self) -> wire.ServerStatus:
        return wire.ServerStatus(pid=os.getpid(), version=__version__, started=self.started,
                                 served=self.served, rss_kb=rss_kb(),
                                 socket=self.listener.path, warm=len(self.warm),
                                 workers=wire.Workers(count=self.pool.live,
                                                      busy=self.pool.busy))  # fmt: skip


def unanswered(conn: socket.socket, status: int, host: str, native: str | None) -> None:
    """A call's child or worker ended, ``status`` being how: unless it exited 0 (having
    answered) or its client has gone (it had its answer, or gave up at its deadline),
    tell the client that nobody will answer (a refusal ``unanswered``: it answers its
    fallback, and must not run the call again, as it would after a connection merely
    cut). A process that answered and then died (killed in its after-reply work) leaves
    a client that has closed its end: nothing is said, nothing logged."""
    try:
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            return
        if _gone(conn):
            return
        signum = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        if signum == signal.SIGALRM:
            code, why = "watchdog-fired", "its deadline passed (its handlers still running)"
        elif signum == signal.SIGKILL:
            code, why = "", "it was killed"
        else:
            code, why = "worker-died", f"it ended ({_how(status)})"
        if code:
            diagnostics.emit(code, f"the worker answering {host} {native or 'event'} gave no "
                             f"answer: {why}; its client answers the installed fallback",
                             host=host, native=native)  # fmt: skip
        refusal = wire.Refusal(refused="unanswered", message=f"the call's worker ended: {why}")
        conn.setblocking(True)
        conn.settimeout(1.0)
        with contextlib.suppress(OSError):
            conn.sendall(wire.frame(msgspec.json.encode(refusal)))
    finally:
        conn.close()


def _gone(conn: socket.socket) -> bool:
    """Whether the client closed its end (a read would find the stream's end)."""
    try:
        return conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False  # open, and waiting
    except OSError:
        return True


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit {os.WEXITSTATUS(status)}"


def warm_up() -> None:
    """Import what every child needs (msgspec, the bus, the worker, every driver), and
    build what each would build on first use: every driver's decoder and encoding of
    each of its events (on its own sample payloads: hookbus's code only, no handler's),
    and msgspec's view of the configuration's types."""
    from hookbus import hosts
    from hookbus.bus.marks import Subscription
    from hookbus.bus.replies import Reply
    from hookbus.runtime import compile, process, watchdog, worker  # noqa: F401
    from hookbus.runtime.config import Settings

    msgspec.convert({}, Settings)
    with contextlib.suppress(msgspec.ValidationError):
        msgspec.convert({}, Subscription)
    for name in HOSTS:
        try:
            driver = hosts.driver(name)
        except Exception:  # a host without a driver of its own
            continue
        for native in getattr(driver, "events", ()):
            try:
                driver.decode(driver.sample(native, cwd="/", session_id="warm"), native)
                driver.encode(native, Reply())
            except Exception:
                continue
