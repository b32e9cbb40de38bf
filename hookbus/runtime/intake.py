"""The payload, read within a bound of size and time.

Hosts write the payload to the hook's stdin and close it; some never close it (Kiro's
IDE), and Kiro's IDE 0.x passes the payload in an environment variable instead. So the
read stops at end of input, at one complete JSON object once no more bytes are waiting,
at the size limit, or at the deadline, whichever comes first, and says which.

Standard library only.
"""

from __future__ import annotations

import json
import os
import select
import time

from hookbus.hosts.shared.facts import HostFacts

#: Payloads larger than this are not read further (and never decoded).
MAX_INPUT = 1 << 20
_CHUNK = 1 << 16


class Intake:
    """What was read, and how the read ended: ``eof``, ``complete`` (one JSON object on a
    stdin left open), ``too-large``, ``timeout``, ``env`` or ``terminal`` (stdin is a
    terminal: a person, not a host)."""

    __slots__ = ("data", "end")

    def __init__(self, data: bytes, end: str) -> None:
        self.data = data
        self.end = end


def _complete(data: bytes) -> bool:
    if not data.rstrip().endswith(b"}"):
        return False
    try:
        return isinstance(json.loads(data), dict)
    except (ValueError, RecursionError):
        return False


TERMINAL_HINT = b"""\
hookbus run is the hook entrypoint: a host runs it with the event's payload on stdin.
To send an event by hand:  hookbus try --host NAME --event NATIVE
or pipe a payload in:      hookbus run --host NAME < payload.json
"""


def _explain() -> None:
    try:  # noqa: SIM105 (contextlib is not loaded on the cold path)
        os.write(2, TERMINAL_HINT)
    except OSError:
        pass


def read_payload(
    facts: HostFacts, deadline: float, *, fd: int = 0, stdin: Intake | None = None
) -> Intake:
    """Read the payload for ``facts``'s host, by ``deadline`` (``time.monotonic()``);
    ``stdin``: what another reader (the warm server's client) read from stdin already."""
    if facts.payload_env is not None:
        value = os.environ.get(facts.payload_env)
        # Only an object is the payload: Kiro IDE 1.x sets USER_PROMPT empty and writes
        # the payload to stdin (awslabs/aidlc-workflows captures, 1.0.165), and its docs
        # say a prompt hook may find the prompt's own text there.
        if value is not None and value.lstrip().startswith("{"):
            return Intake(value.encode("utf-8", "surrogateescape")[: MAX_INPUT + 1], "env")
    if stdin is not None:
        return stdin
    if os.isatty(fd):
        # A person ran the hook by hand: no host gives a terminal. Say what this is
        # rather than wait silently; the empty payload is answered like any bad input.
        _explain()
        return Intake(b"", "terminal")
    chunks: list[bytes] = []
    size = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return Intake(b"".join(chunks), "timeout")
        try:
            ready = select.select([fd], [], [], left)[0]
        except (OSError, ValueError):  # no stdin at all (closed by the host)
            return Intake(b"".join(chunks), "eof")
        if not ready:
            return Intake(b"".join(chunks), "timeout")
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            continue
        except OSError:
            return Intake(b"".join(chunks), "eof")
        if not chunk:
            return Intake(b"".join(chunks), "eof")
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_INPUT:
            return Intake(b"".join(chunks), "too-large")
        # Nothing more waiting right now, and what we have is a whole object: a host
        # that keeps stdin open has said all it will.
        if chunk.rstrip().endswith(b"}") and not select.select([fd], [], [], 0)[0]:
            data = b"".join(chunks)
            if _complete(data):
                return Intake(data, "complete")
