"""Diagnostics: one JSON line per thing that went wrong, in ``diagnostics.jsonl`` in the
state root.

Lines have structlog's JSON shape (``event``, ``level``, ``timestamp`` plus fields), and
handlers' own ``ctx.log`` lines land in the same file.

A diagnostic must never delay or break a reply. ``hookbus run`` therefore *defers* them
(:func:`defer`): they are kept in memory while the hook works and written only after the
reply is out, by a forked writer the hook waits for a short grace at most, so a slow or
hung state folder costs the host nothing. Every other caller
writes at once. When the log cannot be written (a refused or read-only state root), the
line goes to stderr, which hosts keep out of the conversation on a successful exit.

The log is rotated so it cannot grow without end: once it reaches :data:`LOG_MAX_BYTES`
(1 MiB; ``$HOOKBUS_LOG_MAX_BYTES`` overrides it, for tests and for people who want more)
it becomes ``diagnostics.jsonl.1``, older generations shift up to ``.3``
(:data:`LOG_KEEP`) and the oldest is dropped. Many hooks append at once; how they share
the rotation without losing or tearing a line is :func:`hookbus.local.state.rotate`'s.
``hookbus log`` reads the generations oldest first (:func:`log_files`).

Standard library only: this is on every hook's cold path.
"""

from __future__ import annotations

import json
import os
import time

from hookbus.local import state

LOG_NAME = "diagnostics.jsonl"
#: The size at which the log is rotated (``$HOOKBUS_LOG_MAX_BYTES`` overrides it).
LOG_MAX_BYTES = 1 << 20
#: How many rotated generations are kept besides the log itself.
LOG_KEEP = 3
#: A field longer than this is cut in its middle: a diagnostic must not carry a payload
#: whole.
FIELD_LIMIT = 2000

_pending: list[bytes] | None = None


def timestamp(now: float | None = None) -> str:
    now = time.time() if now is None else now
    millis = int(now * 1000) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{millis:03d}Z"


def _bounded(value: object) -> object:
    if isinstance(value, str | int | float | bool) or value is None:
        text = value
    elif isinstance(value, list | tuple) and len(value) <= 50:
        return [_bounded(v) for v in value]
    else:
        text = repr(value)
    if isinstance(text, str) and len(text) > FIELD_LIMIT:
        # Both ends kept: a traceback ends in its exception, and its handler's frames.
        half = FIELD_LIMIT // 2
        return f"{text[:half]}... ({len(text) - 2 * half} characters left out) ...{text[-half:]}"
    return text


def line(code: str, message: str, *, level: str = "warning", **fields: object) -> bytes:
    """The JSON line of one diagnostic."""
    record: dict[str, object] = {
        "event": code,
        "level": level,
        "timestamp": timestamp(),
        "message": _bounded(message),
        "pid": os.getpid(),
    }
    record.update({k: _bounded(v) for k, v in fields.items() if v is not None})
    text = json.dumps(record, ensure_ascii=False) + "\n"
    return text.encode("utf-8", "replace")


def emit(code: str, message: str, *, level: str = "warning", **fields: object) -> None:
    """Record diagnostic ``code`` (``input-invalid``, ``handler-timeout``...) with ``fields``."""
    record(line(code, message, level=level, **fields))


def record(data: bytes) -> None:
    """Log ``data`` (whole JSON lines): now, or after the reply when deferred."""
    if not data:
        return
    if _pending is not None:
        _pending.append(data)
    else:
        write(data)


def write(data: bytes) -> None:
    """Append ``data`` (whole lines) to the log now, rotating it when it is full; to
    stderr when that is impossible."""
    try:
        size = state.append(LOG_NAME, data=data)
    except OSError as exc:
        _to_stderr(data, exc)
        return
    limit = max_bytes()
    if size < limit:
        return
    try:
        state.rotate(LOG_NAME, at=limit, keep=LOG_KEEP)
    except OSError as exc:
        # The lines are in the log; only the bound is not kept. Said in the log itself,
        # where the person looking at an ever-growing file will find it.
        why = line("log-unrotated", f"cannot rotate {state.path(LOG_NAME)}: {exc}",
                   level="error")  # fmt: skip
        try:  # noqa: SIM105 (contextlib is not loaded on the cold path)
            state.append(LOG_NAME, data=why)
        except OSError:
            pass


def max_bytes() -> int:
    """The size at which the log is rotated: ``$HOOKBUS_LOG_MAX_BYTES`` when it is a
    positive whole number, else :data:`LOG_MAX_BYTES`."""
    value = os.environ.get("HOOKBUS_LOG_MAX_BYTES", "")
    if value.isascii() and value.isdigit() and int(value) > 0:
        return int(value)
    return LOG_MAX_BYTES


def log_files() -> list[str]:
    """The names of the log's generations in the state root, oldest first."""
    return [state.generation(LOG_NAME, age) for age in range(LOG_KEEP, -1, -1)]


def _to_stderr(data: bytes, exc: OSError) -> None:
    note = f"hookbus: cannot write {state.path(LOG_NAME)} ({exc}); diagnostics follow\n"
    for chunk in (note.encode(), data):
        try:
            os.write(2, chunk)
        except OSError:  # no stderr either (fd 2 closed): nothing more can be done
            return


def defer() -> None:
    """Keep diagnostics in memory until :func:`take` (``hookbus run`` does this first)."""
    global _pending
    if _pending is None:
        _pending = []


def take() -> bytes:
    """The deferred lines, taken (and deferring stopped): the caller writes them, see
    :func:`hookbus.runtime.hook.flush_diagnostics`."""
    global _pending
    lines, _pending = _pending, None
    return b"".join(lines or ())


def usable() -> OSError | None:
    """Why the log cannot be written now (None when it can): the state root's problem."""
    try:
        state.root(create=True)
    except OSError as exc:
        return exc
    return None


def to_stderr(data: bytes, why: OSError) -> None:
    """Write ``data`` to stderr, saying why the log did not take it."""
    _to_stderr(data, why)


def error_line(exc: BaseException) -> str:
    """``exc`` in one line, as a compiler says where it stopped: ``path:line:col:
    message``. Every place that shows why a handler's module did not load (the
    diagnostics, ``doctor``, ``try``, a fail-closed stand-in's deny) shows this line.

    A :class:`SyntaxError` (and its :class:`IndentationError`) names its own place and
    message (``guards.py:22:12: invalid syntax``). Any other error (an ImportError, a
    NameError at import...) is placed at the innermost line of the traceback that is the
    user's own: not hookbus's, not the import system's, and not an installed package's
    when a line of the user's is on the way (the ``import`` that reached a broken
    package); its message keeps the error's type (``guards.py:3:1: ModuleNotFoundError:
    No module named 'requestz'``). Without a traceback it is the type and message only.
    """
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{_place(exc.filename, exc.lineno, exc.offset)}: {_one_line(exc.msg)}"
    try:
        said = _one_line(str(exc))
    except Exception:
        said = "(its message could not be read)"
    message = f"{type(exc).__name__}: {said}" if said else type(exc).__name__
    if exc.__traceback__ is None:
        return message
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    found = innermost_own([f.filename for f in frames])
    if found is None:
        # No line of the user's on the way: the innermost that is neither hookbus's nor
        # the import system's machinery (frozen, or importlib's package): an installed
        # package's own line.
        import importlib

        folders = (_hookbus_folder(), os.path.dirname(importlib.__file__ or ""))
        machinery = ("<", *(os.path.join(folder, "") for folder in folders))
        others = [i for i, f in enumerate(frames) if not f.filename.startswith(machinery)]
        found = others[-1] if others else None
    if found is None:
        return message
    frame = frames[found]
    col = frame.colno + 1 if frame.colno is not None else None
    return f"{_place(frame.filename, frame.lineno, col)}: {message}"


def innermost_own(paths: list[str]) -> int | None:
    """The index in ``paths`` (a traceback's files, outermost first) of the innermost one
    that is the user's own code, the line a person edits; None when none is. Not the
    user's: hookbus's machinery (its built-in handlers are handlers like the user's), the
    standard library's, an installed package's, frozen code (``<frozen ...>``). The one
    rule for every place a failure is shown (:func:`error_line`, ``try``, ``log``)."""
    import sysconfig

    own = os.path.join(_hookbus_folder(), "")
    handlers = os.path.join(own, "handlers", "")
    found = sysconfig.get_paths()
    libraries = tuple({os.path.join(found[k], "") for k in ("stdlib", "platstdlib", "purelib",
                                                           "platlib")})  # fmt: skip
    for index in range(len(paths) - 1, -1, -1):
        path = paths[index]
        if path.startswith(handlers) or not path.startswith(("<", own, *libraries)):
            return index
    return None


def _hookbus_folder() -> str:
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _place(path: str, line: int | None, col: int | None) -> str:
    return ":".join([path, *(str(n) for n in (line, col) if n is not None and line)])


def _one_line(text: object) -> str:
    return " ".join(str(text).split())
