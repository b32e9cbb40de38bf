"""Diagnostics: one JSON line per thing that went wrong, in the state directory.

This module is on the cold path of every hook, so it uses the standard library only.
Lines have structlog's JSON shape (``event``, ``level``, ``timestamp`` plus fields), and
handlers' own ``ctx.log`` lines (through structlog) land in the same file.

A diagnostic must never break a hook: when the file cannot be written, the line goes
to stderr instead, which hosts keep out of the conversation on a successful exit.
"""

from __future__ import annotations

import json
import os
import sys
import time

from hookbus.locations import ensure_state_dir

LOG_NAME = "diagnostics.jsonl"


def timestamp(now: float | None = None) -> str:
    now = time.time() if now is None else now
    millis = int(now * 1000) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{millis:03d}Z"


def append_line(line: bytes) -> bool:
    """Append one line to the diagnostics log in a single write; False when impossible."""
    try:
        fd = os.open(
            os.path.join(ensure_state_dir(), LOG_NAME),
            os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
            0o600,
        )
        try:
            os.write(fd, line)
        finally:
            os.close(fd)
        return True
    except OSError:
        return False


def emit(code: str, message: str, *, level: str = "warning", **fields: object) -> None:
    """Record diagnostic ``code`` (``input-invalid``, ``handler-timeout``...) with ``fields``."""
    record: dict[str, object] = {
        "event": code,
        "level": level,
        "timestamp": timestamp(),
        "message": message,
        "pid": os.getpid(),
    }
    record.update({k: v for k, v in fields.items() if v is not None})
    line = (json.dumps(record, default=str, ensure_ascii=False) + "\n").encode("utf-8", "replace")
    if not append_line(line):
        try:
            sys.stderr.write(f"hookbus: {code}: {message}\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
