"""Output for people: colour and compact tables on a terminal, plain text when piped.

Colour follows the common conventions: ``NO_COLOR`` (any value) turns it off,
``FORCE_COLOR`` (any value) turns it on, and otherwise only a terminal gets it
(``TERM=dumb`` does not).
"""

from __future__ import annotations

import os
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
