"""Output for people: colour and compact tables on a terminal, plain text when piped.

Colour follows the common conventions: ``NO_COLOR`` (any value) turns it off,
``FORCE_COLOR`` (any value) turns it on, and otherwise only a terminal gets it
(``TERM=dumb`` does not).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import TextIO

CODES = {
    "bold": "1",
    "dim": "2",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "cyan": "36",
}


def use_colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


class Style:
    """Paints text for one stream: with ANSI colour on a terminal, unchanged otherwise."""

    def __init__(self, stream: TextIO, colour: bool | None = None) -> None:
        self.colour = use_colour(stream) if colour is None else colour

    def __call__(self, text: str, *names: str) -> str:
        if not self.colour or not names:
            return text
        codes = ";".join(CODES[n] for n in names)
        return f"\033[{codes}m{text}\033[0m"


def table(rows: Sequence[Sequence[str]], *, gap: int = 2) -> list[str]:
    """``rows`` as lines with aligned columns (the last column is not padded). Widths are
    measured on the text without colour codes."""
    if not rows:
        return []
    widths = [0] * max(len(r) for r in rows)
    for row in rows:
        for i, cell in enumerate(row[:-1]):
            widths[i] = max(widths[i], visible_len(cell))
    lines = []
    for row in rows:
        cells = [
            cell + " " * (widths[i] - visible_len(cell) + gap) if i < len(row) - 1 else cell
            for i, cell in enumerate(row)
        ]
        lines.append("".join(cells).rstrip())
    return lines


def visible_len(text: str) -> int:
    """The length of ``text`` as shown: ANSI colour codes take no room."""
    import re

    return len(re.sub(r"\033\[[0-9;]*m", "", text))


def widths(rows: Sequence[Sequence[str]]) -> list[int]:
    """The visible width of each column of ``rows`` (for lines printed as they come,
    which :func:`table` cannot measure in advance: see :func:`aligned`)."""
    found: list[int] = []
    for row in rows:
        found.extend([0] * (len(row) - len(found)))
        for i, cell in enumerate(row):
            found[i] = max(found[i], visible_len(cell))
    return found


def aligned(row: Sequence[str], widths: list[int], *, gap: int = 2) -> str:
    """``row`` as one line padded to ``widths`` (the last column is not padded), which
    grow in place to fit it: lines printed one by one stay aligned once widths settle."""
    widths.extend([0] * (len(row) - len(widths)))
    cells = []
    for i, cell in enumerate(row):
        width = visible_len(cell)
        widths[i] = max(widths[i], width)
        cells.append(cell if i == len(row) - 1 else cell + " " * (widths[i] - width + gap))
    return "".join(cells).rstrip()


def printable(text: str) -> str:
    """``text`` safe to print on a terminal, on one line: control characters (an escape
    sequence in a logged payload could rewrite the screen), line separators and bidi
    overrides shown escaped, as ``\\n``, ``\\x1b``, ``\\u202e``..."""
    return text.translate(_UNPRINTABLE)


_BIDI = (*range(0x202A, 0x202F), *range(0x2066, 0x206A))
_UNPRINTABLE = {
    c: ascii(chr(c))[1:-1] for c in (*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, *_BIDI)
}


def exact(data: bytes) -> list[str]:
    """``data`` shown exactly, one literal per line it holds (the newline included): a
    quoted string whose escapes (``\\n``, ``\\t``, ``\\x1b``) leave nothing hidden, or
    a bytes literal for a line that is not UTF-8. No lines for no bytes."""
    lines = []
    for line in data.splitlines(keepends=True):
        try:
            lines.append(repr(line.decode("utf-8")))
        except UnicodeDecodeError:
            lines.append(repr(line))
    return lines


def section(title: str | None, rows: Sequence[Sequence[str]], *, indent: str = "  ") -> list[str]:
    """A block of output: ``title`` (when given), ``rows`` as an indented :func:`table`,
    then a blank line."""
    return [*([title] if title else []), *(indent + line for line in table(rows)), ""]


def failure(error: str) -> str:
    """A handler's failure on one line: where it failed and the exception, as
    ``/path/guards.py:8 in helper: RuntimeError: handler bug``. ``error`` is a traceback
    as Python prints it (the outcome's ``error``, a diagnostic's ``error`` field); text
    that is not one is shown by its last line (a message such as ``returned int, not
    Reply or None``).

    Where: the innermost line of the user's own code, which is the line a person edits:
    neither hookbus's (its own handlers are user code here) nor the standard library's
    nor an installed package's. A handler that called ``json.loads`` on bad input, or
    ``Reply.deny`` wrongly, is shown at its call. Without such a line (a handler of an
    installed package), the first frame below hookbus's call of the handler, the handler
    function's own; without that (hookbus failed itself), the innermost frame. Of a
    chained exception, the last traceback is the one shown: it ends in the exception
    raised last."""
    lines = error.strip().splitlines()
    if not lines:
        return ""
    exception = lines[-1].strip()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent")]
    if not starts:
        return exception
    frames = [m.groups() for line in lines[starts[-1] :] if (m := _FRAME.match(line))]
    where = _handler_frame(frames)
    if where is None:
        return exception
    path, number, function = where
    return f"{path}:{number} in {function}: {exception}"


#: A frame's line in a traceback: its file, line number and function.
_FRAME = re.compile(r'\s+File "(.*)", line (\d+), in (.*)$')


def _handler_frame(frames: list[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The frame :func:`failure` names (see there); None for no frames."""
    import hookbus
    from hookbus.local.diagnostics import innermost_own

    mine = innermost_own([f[0] for f in frames])
    if mine is not None:
        return frames[mine]
    own = os.path.join(os.path.dirname(os.path.abspath(hookbus.__file__)), "")
    handlers = os.path.join(own, "handlers", "")
    calls = [
        i for i, f in enumerate(frames) if f[0].startswith(own) and not f[0].startswith(handlers)
    ]
    below = frames[calls[-1] + 1 :] if calls else frames
    return below[0] if below else (frames[-1] if frames else None)
