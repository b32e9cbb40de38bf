"""The warm servers a test's hooks started, found and stopped at teardown.

Install's default command is the warm server's client: with no server answering, the
client runs the cold path itself and starts ``hookbus serve`` in the state
folder the hook was given, in a session of its own (outside the process group a host
is killed with). Left running, each would idle for 900 s and CI would pile them up, so
a test's teardown stops every one of them: a server and its workers are the processes
whose command line runs ``serve`` and whose environment names the test's state folder
(``HOOKBUS_STATE_DIR``, which the server keeps), found through ``/proc`` so that one
still starting (before its pid file is written) is found too. A start
the client just made may not be visible there yet: the client resumes (and the hook
ends) while its child is still inside ``execve``, whose ``/proc`` command line reads
empty until it is done. So the start locks the client takes first (``run/server-*.lock``,
which the server removes once it listens, stale after 10 s) is waited out before
looking. A test's teardown looks only at the processes started since the test began
(:func:`last_pid`): a scan of every process of the machine at each of thousands of
teardowns was a tenth of the unit suite's time.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path

#: How long a server being started may take to show up as gone (several rounds of kills).
SETTLE = 30.0
#: The client's start locks, in the socket folder (``hookbus.runtime.warm.wire.start_lock``:
#: one per configuration identity).
START_LOCKS = "run/server-*.lock"
#: A lock older than this is a start that failed (``hookbus.runtime.warm.fallback.LOCK_STALE``).
LOCK_STALE = 10.0


def is_server(argv: Sequence[bytes]) -> bool:
    """True for the command line of ``hookbus serve`` (its workers, forks, share it)."""
    return b"serve" in argv and any(word.endswith(b"__main__.py") for word in argv)


def last_pid() -> int:
    """The pid the kernel handed out last, 0 where it does not say: a process started
    after this is read gets a higher one, unless the pids wrap around meanwhile."""
    try:
        return int(Path("/proc/sys/kernel/ns_last_pid").read_text())
    except (OSError, ValueError):
        return 0


def servers(state: Path, since: int = 0) -> list[int]:
    """The pids of the ``hookbus serve`` processes (and their workers) whose state folder
    is ``state``; with ``since`` (a :func:`last_pid` read before any of them started),
    of those started after it only, unless the pids have wrapped around since."""
    if last_pid() < since:  # wrapped around: a new process may have any pid
        since = 0
    wanted = b"HOOKBUS_STATE_DIR=" + os.fsencode(state)
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) <= since or int(name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if not is_server(Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")):
                continue
            if wanted in Path(f"/proc/{name}/environ").read_bytes().split(b"\0"):
                found.append(int(name))
    return found


def stop_servers(state: Path, since: int = 0) -> int:
    """Kill every server (and worker) of ``state`` until none is left; how many were.
    ``since``: as for :func:`servers`.

    SIGKILL, not ``serve --stop``: a server still detaching has no pid file to be asked
    through, and the test's folder is thrown away with whatever the server leaves in it.
    """
    give_up = time.monotonic() + SETTLE
    while time.monotonic() < give_up:
        try:
            locks = [lock.lstat().st_mtime for lock in state.glob(START_LOCKS)]
        except OSError:  # gone meanwhile (or the state folder is a file a test made)
            continue
        if all(time.time() - mtime >= LOCK_STALE for mtime in locks):
            break  # none (no start), or failed starts only
        time.sleep(0.05)  # a start under way: its server removes the lock once it listens
    killed: set[int] = set()
    while pids := servers(state, since):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        killed.update(pids)
        if time.monotonic() > give_up:
            raise AssertionError(f"servers of {state} still running: {pids}")
        time.sleep(0.05)  # a zombie until its parent reaps it: it stays in /proc meanwhile
    return len(killed)
