"""What the warm server's client (``hookbus/runtime/warm/client.py``) does when no server answers:
the full cold path in its own process, then a server started for the next call.

The client imports this only once it has made hookbus importable (``site``, the
package's folder), and only on that path: every byte of the client itself is read and
unmarshalled on every warm call, so what only a call without a server needs lives here.
"""

from __future__ import annotations

import os
import time

from hookbus.local import diagnostics
from hookbus.runtime import hook
from hookbus.runtime.intake import Intake

#: The call as ``hookbus run`` takes it, which the client makes of its own options.
Call = hook.Options
#: A start lock older than this is from a start that failed: take it over.
LOCK_STALE = 10.0


def cold(
    call: list[str] | Call,
    data: bytes,
    end: str,
    started: float,
    why: tuple[str, str] | None,
) -> int:
    """``hookbus run`` in this process for ``call`` (the client's options, or its
    arguments when it could not read them), given the payload the client read (``end`` is how
    its read ended; ``unread``: it read nothing, and the cold path reads stdin itself);
    ``why``: the socket and the reason a server there did not answer (a
    ``client-fallback`` diagnostic, written after the reply as the cold path's own are)."""
    if why is not None:
        diagnostics.defer()
        where, reason = why
        message = f"the warm server at {where} did not answer ({reason}); the cold path answered"
        diagnostics.emit("client-fallback", message, socket=where, reason=reason)
    intake = None if end == "unread" else Intake(data, end)
    return hook.main(call, intake=intake, started=started)


def start_server(lock: str, package: str) -> None:
    """Start ``hookbus serve`` for the next call, unless a start is under way (``lock``,
    next to the socket: made ``O_EXCL``, taken over after :data:`LOCK_STALE` seconds):
    in its own session, from ``/``, with none of this call's folder, import path or
    variables but the few it keeps (:func:`hookbus.local.interpreter.spawn_server`). The
    caller has checked the socket's folder (the client's ``dir_problem``)."""
    from hookbus.local.interpreter import spawn_server

    try:
        if not take_lock(lock):
            return
        spawn_server(os.path.join(package, "__main__.py"))
    except OSError:
        pass  # the next call tries again; this one is answered already


def take_lock(path: str) -> bool:
    """True when this process may start the server (it created the lock)."""
    for _ in range(2):
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
            return True
        except FileExistsError:
            try:
                age = time.time() - os.lstat(path).st_mtime
            except FileNotFoundError:
                continue
            if age < LOCK_STALE:
                return False
            try:  # noqa: SIM105 (contextlib is not loaded on this path)
                os.unlink(path)  # a start that failed long ago: take it over
            except FileNotFoundError:
                pass
    return False
