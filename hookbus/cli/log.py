"""``hookbus log``: the diagnostics as readable lines.

One line per diagnostic, aligned: the local time, level, code, host, host event
(``native``), handler and message, then the fields left over as ``key=value``. A
traceback is shown by where the handler failed and the exception
(:func:`~hookbus.cli.render.failure`: ``guards.py:8 in helper: RuntimeError: ...``),
another multi-line value by its last line; ``--traceback`` prints such values whole
under their line, and ``--json`` keeps the lines as written.
Handlers' own ``ctx.log`` lines are structlog's shape, with their message as ``event``
and neither ``message`` nor ``pid``: they show the code ``log`` and that message. A line
that is not a JSON object (torn, or written by something else) is shown as
``unreadable``, escaped, and never stops the command. Everything printed from the log
goes through :func:`~hookbus.cli.render.printable`: a payload quoted in a diagnostic
cannot send the terminal an escape sequence.

The generations are read oldest first (``diagnostics.jsonl.3`` ... the log itself), so
the history is in order. ``--follow`` then polls the log by name: when the name holds
another file (rotated) it reads what is left of the old one, then the new one from its
start; when the file shrank (truncated) it starts again from the top.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from hookbus.cli.render import Style

#: Level ranks for ``--level``; a level not named here is shown at every ``--level``.
LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40, "critical": 50}
#: structlog's other names for them.
_ALIASES = {"warn": "warning", "exception": "error", "fatal": "critical"}
_LEVEL_STYLE = {"debug": ("dim",), "info": ("green",), "warning": ("yellow",),
                "error": ("red", "bold"), "critical": ("red", "bold")}  # fmt: skip
#: The code shown (and matched by ``--code``) for a handler's own ``ctx.log`` line.
HANDLER_LOG = "log"
#: Fields with a column of their own, or on every line and no help reading one
#: (``--json`` has them all).
_COLUMNS = frozenset({"event", "level", "timestamp", "message", "host", "native", "handler"})
_NOISE = frozenset({"pid", "session_id"})
#: Seconds between two looks at the log under ``--follow``.
POLL = 0.25
#: Column widths ``--follow`` starts from, so the first lines that come need not widen them.
_FOLLOW_WIDTHS = [15, 7, 16, 6, 16, 16]
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
#: Local time, short, one width for every line (``Jun 01 14:03:07``).
_TIME = "%b %d %H:%M:%S"


def add_arguments(commands: Any) -> None:
    from hookbus.local import diagnostics

    sub: argparse.ArgumentParser = commands.add_parser(
        "log", help="show the diagnostics",
        description=f"Show the diagnostics: {diagnostics.LOG_NAME} in the state folder "
        "($HOOKBUS_STATE_DIR, else $XDG_STATE_HOME/hookbus) and the generations it was "
        f"rotated into, oldest first. It is rotated at {diagnostics.LOG_MAX_BYTES >> 20} MiB "
        f"(or $HOOKBUS_LOG_MAX_BYTES bytes); {diagnostics.LOG_KEEP} generations are kept.",
        epilog="A line that is not JSON is shown as 'unreadable' unless --level, --code or "
        "--host asks for a field it does not have.",
    )  # fmt: skip
    sub.add_argument("-f", "--follow", action="store_true",
                     help="keep printing lines as they are written, until Ctrl-C")  # fmt: skip
    sub.add_argument("--since", type=since, metavar="WHEN",
                     help="only lines from then on: 30s, 10m, 2h or 1d ago, or an ISO time "
                     "(local time unless it names its zone)")  # fmt: skip
    sub.add_argument("--level", choices=list(LEVELS),
                     help="only lines of this level and above")  # fmt: skip
    sub.add_argument("--json", action="store_true",
                     help="the JSON lines as written, for tools (unreadable ones are left "
                     "out, with a note on stderr)")  # fmt: skip
    sub.add_argument("--host", action="append", metavar="HOST",
                     help="only this host's lines (repeatable)")  # fmt: skip
    sub.add_argument("--code", action="append", metavar="CODE",
                     help=f"only this code (repeatable; wildcards as in 'handler-*'; "
                     f"handlers' own lines are '{HANDLER_LOG}')")  # fmt: skip
    sub.add_argument("-n", "--lines", type=_count, metavar="N",
                     help="only the last N lines (default: all; 10 with --follow)")  # fmt: skip
    sub.add_argument("-v", "--traceback", action="store_true",
                     help="print each traceback (and other multi-line value) whole, under "
                     "its line")  # fmt: skip
    sub.set_defaults(main=main)


def since(text: str) -> float:
    """``--since``: ``30s``, ``10m``, ``2h``, ``1d`` ago, or an ISO time, as an epoch."""
    import time
    from datetime import datetime

    amount, unit = text[:-1], text[-1:]
    if unit in _UNITS and amount.isascii() and amount.isdigit():
        return time.time() - int(amount) * _UNITS[unit]
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is neither a span (30s, 10m, 2h, 1d) nor an ISO time"
        ) from None
    if moment.tzinfo is None:
        moment = moment.astimezone()  # as the times are shown: local
    return moment.timestamp()


def _count(text: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of lines")
    return int(text)


class Entry(NamedTuple):
    """One line of the log, read."""

    text: str
    #: None when the line is not a JSON object.
    record: dict[str, Any] | None
    #: Its ``timestamp``, in seconds since the epoch (None when it has none readable).
    when: float | None


def parse(raw: bytes) -> Entry:
    import json

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Entry(raw.decode("utf-8", "replace"), None, None)
    try:
        record = json.loads(text)
    except (ValueError, RecursionError):  # a foreign line may nest deeper than json goes
        return Entry(text, None, None)
    if not isinstance(record, dict):
        return Entry(text, None, None)
    return Entry(text, record, _when(record.get("timestamp")))


def _when(value: object) -> float | None:
    from datetime import UTC, datetime

    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)  # hookbus and structlog write UTC
    return moment.timestamp()


def _is_diagnostic(record: dict[str, Any]) -> bool:
    """hookbus's own line (:func:`hookbus.local.diagnostics.line`), not a handler's."""
    return "message" in record and "pid" in record


def _code(record: dict[str, Any]) -> str:
    return str(record.get("event")) if _is_diagnostic(record) else HANDLER_LOG


def _level(record: dict[str, Any]) -> str:
    level = str(record.get("level", "")).lower()
    return _ALIASES.get(level, level)


class Selection:
    """Which lines ``--since``, ``--level``, ``--code`` and ``--host`` let through."""

    def __init__(self, opts: argparse.Namespace) -> None:
        self.since: float | None = opts.since
        self.rank = LEVELS[opts.level] if opts.level else None
        self.codes: list[str] = opts.code or []
        self.hosts: list[str] = opts.host or []
        self.by_field = bool(self.rank is not None or self.codes or self.hosts)
        self._in_window = self.since is None

    def __call__(self, entry: Entry) -> bool:
        from fnmatch import fnmatchcase

        record = entry.record
        if record is None:
            # Nothing to judge it by but its place: inside the --since window when the
            # line before it was; left out when a field is asked for.
            return self._in_window and not self.by_field
        if self.since is not None:
            self._in_window = entry.when is not None and entry.when >= self.since
            if not self._in_window:
                return False
        rank = LEVELS.get(_level(record))
        if self.rank is not None and rank is not None and rank < self.rank:
            return False
        if self.codes and not any(fnmatchcase(_code(record), c) for c in self.codes):
            return False
        return not self.hosts or record.get("host") in self.hosts


def row(entry: Entry, paint: Style) -> list[str]:
    """The cells of ``entry``'s line: time, level, code, host, event, handler, message."""
    import time

    from hookbus.cli.render import printable

    record = entry.record
    if record is None:
        unknown = paint("-", "dim")
        return [unknown, paint("?", "red"), paint("unreadable", "red", "bold"), unknown,
                unknown, unknown, printable(entry.text)]  # fmt: skip
    when = "-" if entry.when is None else time.strftime(_TIME, time.localtime(entry.when))
    level = _level(record)
    if _is_diagnostic(record):
        text, skip = record["message"], _COLUMNS | _NOISE
    else:
        text, skip = record.get("event", ""), (_COLUMNS - {"message"}) | _NOISE
    extras = [f"{key}={_value(value)}" for key, value in record.items() if key not in skip]
    message = " ".join([printable(_value(text, bare=True)),
                        *(paint(printable(extra), "dim") for extra in extras)])  # fmt: skip

    def cell(name: str) -> str:
        value = record.get(name)
        return paint("-", "dim") if value is None else printable(str(value))

    return [paint(when, "dim"), paint(printable(level or "-"), *_LEVEL_STYLE.get(level, ())),
            paint(printable(_code(record)), "bold"), cell("host"), cell("native"),
            cell("handler"), message]  # fmt: skip


def _value(value: object, *, bare: bool = False) -> str:
    """A field's value for the line: a word as it is, other text quoted, a multi-line
    text by one line (a traceback by where it failed and its exception, any other by its
    last line), the rest as JSON; a ``bare`` text (the message) whole and unquoted."""
    import json

    if isinstance(value, str):
        if bare:
            return value
        if "\n" in value.strip():
            from hookbus.cli.render import failure

            shown = failure(value)
            value = shown if value.lstrip().startswith("Traceback") else f"…{shown}"
        if value and not any(c.isspace() or c in "\"'=" for c in value):
            return value
    return json.dumps(value, ensure_ascii=False)


def whole(entry: Entry, paint: Style) -> list[str]:
    """``entry``'s multi-line fields (tracebacks) in full, indented under its line, each
    line made :func:`~hookbus.cli.render.printable`."""
    from hookbus.cli.render import printable

    lines = []
    for key, value in (entry.record or {}).items():
        if isinstance(value, str) and "\n" in value.strip():
            lines.append(paint(f"    {printable(key)}:", "dim") + "\n")
            lines += [f"      {printable(line)}\n" for line in value.strip().splitlines()]
    return lines


class Printer:
    """Writes entries to stdout: aligned lines for people, the JSON as written for tools."""

    def __init__(self, opts: argparse.Namespace, widths: list[int]) -> None:
        from hookbus.cli.render import Style

        self.json: bool = opts.json
        self.whole: bool = opts.traceback
        self.paint = Style(sys.stdout)
        self.widths = widths

    def show(self, entries: Iterable[Entry]) -> None:
        from hookbus.cli import render

        if self.json:
            for entry in entries:
                if entry.record is None:
                    note = render.printable(entry.text[:80])
                    sys.stderr.write(f"hookbus log: not JSON, left out: {note}\n")
                else:
                    sys.stdout.write(entry.text + "\n")
        else:
            from itertools import zip_longest

            entries = list(entries)
            rows = [row(entry, self.paint) for entry in entries]
            # Measured on the whole batch first, so its first lines align with its last.
            measured = zip_longest(self.widths, render.widths(rows), fillvalue=0)
            self.widths[:] = [max(pair) for pair in measured]
            for entry, cells in zip(entries, rows, strict=True):
                sys.stdout.write(render.aligned(cells, self.widths) + "\n")
                if self.whole:
                    sys.stdout.writelines(whole(entry, self.paint))
        sys.stdout.flush()


def main(opts: argparse.Namespace) -> int:
    try:
        return _show(opts)
    except KeyboardInterrupt:
        return 0  # how --follow is stopped, not a failure
    except BrokenPipeError:
        # `hookbus log | head` has what it wanted; nothing more must be written to it,
        # not even by the interpreter's final flush.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # a refused state root or log: StateRefused says why
        print(f"hookbus log: {exc}", file=sys.stderr)
        return 1


def _show(opts: argparse.Namespace) -> int:
    from collections import deque

    from hookbus.local import diagnostics, state

    raws: list[bytes] = []
    refused: list[str] = []
    try:
        state.root()
    except FileNotFoundError:
        tail = Tail(None)
    else:
        raws, tail = read_generations(refused)
    for why in refused:  # a generation that fails its check: the others are still shown
        print(f"hookbus log: {why}", file=sys.stderr)
    if not raws and tail.fd is None and not refused:
        print(f"no diagnostics yet: {state.path(diagnostics.LOG_NAME)}", file=sys.stderr)
        if not opts.follow:
            return 0
    count = opts.lines if opts.lines is not None else 10 if opts.follow else None
    selected = Selection(opts)
    printer = Printer(opts, list(_FOLLOW_WIDTHS) if opts.follow else [])
    shown = deque((e for e in map(parse, raws) if selected(e)), maxlen=count)
    printer.show(shown)
    if not opts.follow:
        return 1 if refused else 0
    import time

    while True:
        time.sleep(POLL)
        printer.show([e for e in map(parse, tail.lines()) if selected(e)])


def read_generations(refused: list[str]) -> tuple[list[bytes], Tail]:
    """The lines of every generation of the log, oldest first, and the log itself to
    follow from where they end; why a file was refused goes into ``refused``.

    The files are opened newest first, skipping any already open: a rotation between
    two opens then shows a file under its new name again (skipped) rather than moving
    it past the next open (missed); reading in the reverse order keeps it in order."""
    from hookbus.local import diagnostics, state

    opened: list[tuple[str, int]] = []
    seen: set[tuple[int, int]] = set()
    try:
        for name in reversed(diagnostics.log_files()):
            try:
                fd = state.open_read(name)
            except FileNotFoundError:
                continue
            except state.StateRefused as exc:
                refused.append(str(exc))
                continue
            st = os.fstat(fd)
            if (st.st_dev, st.st_ino) in seen:
                os.close(fd)
                continue
            seen.add((st.st_dev, st.st_ino))
            opened.append((name, fd))
    except BaseException:
        for _, fd in opened:
            os.close(fd)
        raise
    live = opened.pop(0)[1] if opened and opened[0][0] == diagnostics.LOG_NAME else None
    lines: list[bytes] = []
    for _, fd in reversed(opened):
        try:
            lines.extend(_split(_read_all(fd), last=True)[0])
        finally:
            os.close(fd)
    tail = Tail(live)
    lines.extend(tail.lines(reopen=False))
    return lines, tail


class Tail:
    """The log as it grows: the whole lines appended since the last look, across
    rotations (the name then holds a new file) and truncations."""

    def __init__(self, fd: int | None) -> None:
        self.fd = fd
        self.pending = b""  # a line whose newline is not written yet

    def lines(self, *, reopen: bool = True) -> list[bytes]:
        from hookbus.local import diagnostics, state

        found = self._more()
        if not reopen:
            return found
        try:
            fresh = state.open_read(diagnostics.LOG_NAME)
        except FileNotFoundError:
            return found  # between a rotation's rename and the next line, or no log yet
        if self.fd is not None:
            now, new = os.fstat(self.fd), os.fstat(fresh)
            if (now.st_dev, now.st_ino) == (new.st_dev, new.st_ino):
                os.close(fresh)
                if now.st_size < os.lseek(self.fd, 0, os.SEEK_CUR):
                    os.lseek(self.fd, 0, os.SEEK_SET)  # truncated: its lines start again
                    found += self._rest()
                return found
            # Rotated: what late writers still put into the old file, then the new one.
            found += self._more() + self._rest()
            os.close(self.fd)
        self.fd = fresh
        return found + self._more()

    def _more(self) -> list[bytes]:
        if self.fd is None:
            return []
        whole, self.pending = _split(self.pending + _read_all(self.fd), last=False)
        return whole

    def _rest(self) -> list[bytes]:
        """The unfinished line of a file that will grow no more, as a line of its own."""
        rest, self.pending = self.pending, b""
        return [rest] if rest else []


def _split(data: bytes, *, last: bool) -> tuple[list[bytes], bytes]:
    """The lines of ``data`` (blank ones dropped) and what follows the last newline;
    ``last``: that too is a line (the file is complete)."""
    *whole, rest = data.split(b"\n")
    if last and rest:
        whole, rest = [*whole, rest], b""
    return [line for line in whole if line.strip()], rest


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)
