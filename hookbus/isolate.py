"""Run untrusted work (handler modules, handlers) in a forked child, under a deadline.

The child's stdin, stdout and stderr are /dev/null: nothing it prints can reach the
host, whose stdout is the reply channel. It sends its result back through a pipe as one
length-prefixed message, so a grandchild that keeps the pipe open (a handler that forks)
cannot hold the reply. An interval timer, armed in the child, ends it by the kernel's
hand if the parent is gone; a Python-level timeout could not fire while the child is
stuck in C code holding the GIL.
"""

from __future__ import annotations

import contextlib
import gc
import os
import select
import signal
import time
from collections.abc import Callable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    Status = Literal["ok", "timeout", "died", "fork-failed"]

_HEADER = 8


class Child:
    """The result of :func:`run_child`: ``status`` and, when it is ``ok``, ``data``."""

    __slots__ = ("data", "pid", "status")

    def __init__(self, status: Status, data: bytes = b"", pid: int = 0) -> None:
        self.status = status
        self.data = data
        self.pid = pid


def run_child(
    work: Callable[[], bytes], *, deadline: float, lifetime: float, kill_late: bool = True
) -> Child:
    """Fork, run ``work`` in the child and return what it returned, if it did by
    ``deadline`` (a ``time.monotonic()`` value).

    A late child is killed (``kill_late``) or left to finish in the background; either
    way it is gone after ``lifetime`` seconds.
    """
    read_end, write_end = os.pipe()
    # Keep the collector away from what both processes share: a collection in the
    # child would touch, and so copy, every page of the parent's heap.
    gc.freeze()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return Child("fork-failed")
    if pid == 0:
        os.close(read_end)
        _child(work, write_end, lifetime)
    os.close(write_end)
    try:
        data = _receive(read_end, deadline)
    finally:
        os.close(read_end)
    if data is None:
        if not kill_late:
            return Child("timeout", pid=pid)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return Child("timeout", pid=pid)
    if not data:  # it closed the pipe without a reply: it may still be running
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return Child("ok", data, pid) if data else Child("died", pid=pid)


def _child(work: Callable[[], bytes], fd: int, lifetime: float) -> None:
    try:
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.setitimer(signal.ITIMER_REAL, lifetime)
        gc.disable()  # a short-lived process: memory is returned at exit
        null = os.open(os.devnull, os.O_RDWR)
        for std in (0, 1, 2):
            os.dup2(null, std)
        os.close(null)
        result = work()
        message = len(result).to_bytes(_HEADER, "big") + result
        view = memoryview(message)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os._exit(0)


def _receive(fd: int, deadline: float) -> bytes | None:
    """The child's message: b"" when it died without one, None at the deadline."""
    buffer = bytearray()
    expected: int | None = None
    while expected is None or len(buffer) < expected:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 65536)
        if not chunk:
            return b""
        buffer += chunk
        if expected is None and len(buffer) >= _HEADER:
            expected = _HEADER + int.from_bytes(buffer[:_HEADER], "big")
    return bytes(buffer[_HEADER:expected])
