"""The warm server's wire protocol, version 1, and where its socket is.

One place for the protocol's facts. The stdlib-only client (``hookbus/runtime/warm/client.py``) must
not import this module (it would load msgspec): it keeps its own copies of the
constants, and a test holds them equal; the protocol's number it states for everyone
(:data:`PROTO`, taken from it here; the shims read it from its file).

A Unix stream socket; every frame is a 4-byte big-endian length, then that many bytes;
a frame over :data:`MAX_FRAME` is refused.

- client -> server: a JSON :class:`Request`, then (for ``run``) the raw payload;
- server -> client, for ``run``: :class:`Answer`, then stdout, then stderr; or a single
  :class:`Refusal` (the client then runs the cold path itself);
- ``status``: one :class:`ServerStatus`; ``stop``: one :class:`Answer` (``exit`` 0), and
  the server exits once its requests in flight end.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import time
from typing import Literal

import msgspec

from hookbus.runtime.warm import client
from hookbus.runtime.warm.client import server_file

#: The protocol's number: the client states it (it can import nothing), the rest read it.
PROTO = client.PROTO
#: The largest frame either side sends or accepts.
MAX_FRAME = 4 << 20
LENGTH_BYTES = 4
#: The folder under ``$XDG_RUNTIME_DIR``; under the state root it is :data:`STATE_SUBDIR`.
RUNTIME_SUBDIR = "hookbus"
STATE_SUBDIR = "run"

Op = Literal["run", "status", "stop"]
#: Why a request gets no answer from this server. All but one send the client to its own
#: cold path; ``unanswered`` (the call's worker ended without an answer: past its
#: deadline, or it died) does not: the call must not run twice, so the client answers
#: its installed fallback, as the cold path's watchdog does for a worker of its own.
Refused = Literal["version", "proto", "busy", "bad-request", "unanswered"]


class Request(msgspec.Struct, frozen=True, kw_only=True):
    """The client's first frame."""

    proto: int
    version: str
    op: Op
    host: str = ""
    event: str | None = None
    timeout: float | None = None
    cwd: str = "/"
    #: The calling hook's whole environment, which its handlers see exactly (see
    #: docs/server.md).
    env: dict[str, str] = {}


class Answer(msgspec.Struct, frozen=True, kw_only=True):
    """A ``run`` answered (stdout and stderr follow), or a ``stop`` taken."""

    ok: Literal[True] = True
    exit: int = 0


class Refusal(msgspec.Struct, frozen=True, kw_only=True):
    """A request the server will not serve: the client runs the cold path itself."""

    ok: Literal[False] = False
    refused: Refused
    message: str


class Workers(msgspec.Struct, frozen=True, kw_only=True):
    """The server's persistent workers (docs/server.md): how many, how many in a call."""

    count: int = 0
    busy: int = 0


class ServerStatus(msgspec.Struct, frozen=True, kw_only=True):
    """What ``status`` answers (and ``hookbus doctor`` shows)."""

    ok: Literal[True] = True
    pid: int
    version: str
    #: When it started, in seconds since the epoch (a reload keeps it).
    started: float
    #: Requests served (``run``, answered or not).
    served: int
    rss_kb: int
    socket: str
    #: Handler modules kept warm (imported by the server after a child proved them).
    warm: int = 0
    workers: Workers = Workers()


class FolderRefused(OSError):
    """The socket's folder is not this user's private folder; no server there."""


def frame(data: bytes) -> bytes:
    if len(data) > MAX_FRAME:
        raise ValueError(f"a frame of {len(data)} bytes is over {MAX_FRAME}")
    return len(data).to_bytes(LENGTH_BYTES, "big") + data


def socket_dir(*, create: bool = False) -> str:
    """The folder of the socket: ``$XDG_RUNTIME_DIR/hookbus`` when ``XDG_RUNTIME_DIR`` is
    an absolute path to a folder of this user's, else ``<state root>/run``. Created
    ``0700`` with ``create``; :class:`FolderRefused` when it is not this user's or is
    writable by group or others, FileNotFoundError when it is missing."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    base = None
    if os.path.isabs(runtime):
        try:
            st = os.stat(runtime)
        except OSError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid():
            base = os.path.join(runtime, RUNTIME_SUBDIR)
    if base is None:
        from hookbus.local import state

        if create:
            state.root(create=True)
        base = state.path(STATE_SUBDIR)
    if create:
        with contextlib.suppress(FileExistsError):
            os.mkdir(base, 0o700)
    check_dir(base)
    return base


def check_dir(path: str) -> None:
    """:class:`FolderRefused` unless ``path`` is a real folder of this user's that no one
    else may write to, on a path no one else can change: the client's rule
    (:func:`hookbus.runtime.warm.client.dir_problem`, one rule for both ends); FileNotFoundError
    when it is missing."""
    from hookbus.runtime.warm.client import dir_problem

    problem = dir_problem(path)
    if problem is not None:
        raise FolderRefused(f"socket folder {path}: {problem}")
    os.lstat(path)  # absent: FileNotFoundError, as the callers expect


def socket_name() -> str:
    """The socket's name for this process's configuration identity
    (:func:`hookbus.runtime.warm.client.identity`): a server serves one, and calls of another reach
    another server."""
    return server_file("sock")


def pid_name() -> str:
    """The pid file's name, beside the socket (its lock says the server is alive)."""
    return server_file("pid")


def start_lock() -> str:
    """The client's start lock (an ``O_EXCL`` file): the server removes it once it
    listens, so that a client finding it dead later may start the next one at once."""
    return server_file("lock")


def socket_path() -> str:
    return os.path.join(socket_dir(), socket_name())


#: sockaddr_un holds 108 bytes: a longer path is reached through its folder's descriptor.
ADDRESS_MAX = 100


class Address:
    """A socket path as ``bind``/``connect`` can take it: the path itself when short,
    else ``/proc/self/fd/N/NAME`` through a descriptor of its folder (held until
    :meth:`close`)."""

    def __init__(self, path: str) -> None:
        self.fd: int | None = None
        self.path = path
        if len(os.fsencode(path)) > ADDRESS_MAX:
            folder, name = os.path.split(path)
            self.fd = os.open(folder, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            self.path = f"/proc/self/fd/{self.fd}/{name}"

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class Connection:
    """A blocking client connection, for ``serve --status/--stop``, doctor and tests."""

    def __init__(self, path: str, timeout: float = 2.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.deadline = time.monotonic() + timeout
        self.sock.settimeout(timeout)
        address = Address(path)
        try:
            self.sock.connect(address.path)
        except OSError:
            self.sock.close()
            raise
        finally:
            address.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.sock.close()

    def send(self, *frames: bytes) -> None:
        self.sock.sendall(b"".join(frame(f) for f in frames))

    def receive(self) -> bytes:
        size = int.from_bytes(self._exactly(LENGTH_BYTES), "big")
        if size > MAX_FRAME:
            raise ValueError(f"the server sent a frame of {size} bytes")
        return self._exactly(size)

    def _exactly(self, size: int) -> bytes:
        chunks = []
        while size:
            self.sock.settimeout(max(0.001, self.deadline - time.monotonic()))
            chunk = self.sock.recv(min(size, 1 << 20))
            if not chunk:
                raise ConnectionError("the server closed the connection")
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)


def request(op: Op, **fields: object) -> bytes:
    from hookbus import __version__

    return msgspec.json.encode(Request(proto=PROTO, version=__version__, op=op, **fields))  # type: ignore[arg-type]


def ask(op: Literal["status", "stop"], timeout: float = 2.0) -> ServerStatus | Answer | Refusal:
    """Send ``op`` to the server of this user; OSError when none answers."""
    with Connection(socket_path(), timeout) as conn:
        conn.send(request(op))
        data = conn.receive()
    kind: type[ServerStatus] | type[Answer] = ServerStatus if op == "status" else Answer
    reply = msgspec.json.decode(data)
    if isinstance(reply, dict) and reply.get("ok") is False:
        return msgspec.convert(reply, Refusal)
    return msgspec.convert(reply, kind)
