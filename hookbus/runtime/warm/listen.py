"""The warm server's socket: its folder taken, bound atomically, and proof of life.

The server holds an exclusive ``flock`` of its pid file for its whole life, so a second
one sees a live server without asking it (and ``serve --stop`` sees it gone); it binds a
temporary name, then renames it over a socket only found stale (no lock held, no
answer), so a client never finds a half-made socket and junk in the folder is left
alone. The peer's uid is the kernel's word (``SO_PEERCRED``, read by the client's
:func:`~hookbus.runtime.warm.client.peer_uid`: the client checks the server's as the server checks
the client's).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket

from hookbus.runtime.warm import wire
from hookbus.runtime.warm.client import peer_uid

__all__ = ["AnotherServer", "Listener", "peer_uid", "running"]


def running() -> bool:
    """Whether a server holds this user's pid file lock (alive, or still ending)."""
    try:
        fd = os.open(os.path.join(wire.socket_dir(), wire.pid_name()),
                     os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)  # fmt: skip
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


class AnotherServer(RuntimeError):
    """A live server already holds the socket."""


class Listener:
    """The bound socket and the pid file whose lock says the server is alive."""

    def __init__(self, sock: socket.socket, lock_fd: int, folder: str) -> None:
        self.sock = sock
        self.lock_fd = lock_fd
        self.folder = folder
        # Named once: the server's identity is the environment it started with.
        self.path = os.path.join(folder, wire.socket_name())
        self.pid_file = os.path.join(folder, wire.pid_name())
        st = os.stat(self.path)
        self.identity = (st.st_dev, st.st_ino)
        st = os.fstat(lock_fd)
        self.lock_identity = (st.st_dev, st.st_ino)

    def lost(self) -> str | None:
        """Why this server no longer owns its place (its socket or pid file removed or
        replaced: a cleaned runtime folder), or None. A server that lost it is reached
        by no client, and its lock no longer keeps a second server out."""
        for path, identity in ((self.path, self.identity), (self.pid_file, self.lock_identity)):
            try:
                st = os.stat(path)
            except FileNotFoundError:
                return f"{path} was removed"
            except OSError as exc:
                return f"{path} cannot be checked: {exc.strerror or exc}"
            if (st.st_dev, st.st_ino) != identity:
                return f"{path} was replaced"
        return None

    @classmethod
    def bind(cls) -> Listener:
        """Take the folder and the socket (see the module docstring); :class:`AnotherServer`
        or :class:`~hookbus.runtime.warm.wire.FolderRefused` / OSError saying why not."""
        folder = wire.socket_dir(create=True)
        lock_fd = os.open(os.path.join(folder, wire.pid_name()),
                          os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)  # fmt: skip
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock_fd)
            _start_done(folder)
            raise AnotherServer(f"another hookbus server runs on {folder}") from None
        path = os.path.join(folder, wire.socket_name())
        if _answers(path):
            os.close(lock_fd)
            _start_done(folder)
            raise AnotherServer(f"another server answers on {path}")
        temp = os.path.join(folder, f".server.{os.getpid()}.sock")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        address = wire.Address(temp)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
            sock.bind(address.path)
            os.chmod(temp, 0o600)
            sock.listen(128)
            os.replace(temp, path)  # over a stale socket (or junk): atomically
            _start_done(folder)
        except OSError:
            sock.close()
            os.close(lock_fd)
            raise
        finally:
            address.close()
        os.ftruncate(lock_fd, 0)
        os.pwrite(lock_fd, f"{os.getpid()}\n".encode(), 0)
        return cls(sock, lock_fd, folder)

    @classmethod
    def inherited(cls, sock_fd: int, lock_fd: int) -> Listener:
        """The socket and lock a re-executed server was handed."""
        return cls(socket.socket(fileno=sock_fd), lock_fd, wire.socket_dir())

    def close(self) -> None:
        """Close, removing the socket and pid file if they are still this server's."""
        try:
            st = os.stat(self.path)
            if (st.st_dev, st.st_ino) == self.identity:
                os.unlink(self.path)
                os.unlink(self.pid_file)
        except OSError:
            pass
        self.sock.close()
        os.close(self.lock_fd)


def _start_done(folder: str) -> None:
    """Remove the clients' start lock: a start that finds a server running is done too.
    (A client that lost the race to start one, its lock taken after the winner removed
    its own, would otherwise leave it for 10 s, and no call could start a server then.)"""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(os.path.join(folder, wire.start_lock()))


def _answers(path: str) -> bool:
    try:
        wire.Connection(path, 0.5).sock.close()
    except OSError:
        return False
    return True
