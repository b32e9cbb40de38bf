"""Transcript readers: the latest assistant turn's model, and whether one exists, from a
bounded tail of a session's JSON-lines transcript.

A transcript grows for the whole session (a long Claude Code session writes hundreds of
megabytes), and a hook must answer in milliseconds, so a reader never reads a whole
file: it opens without blocking (a FIFO at the path must not hang the hook), accepts a
regular file only, seeks to at most :data:`~hookbus.bus.host.TRANSCRIPT_TAIL` bytes before
its end, skips the partial first line there, and parses lines from the last one back,
stopping at the first that decides. Only a file read from its very first byte can say
"no assistant turn yet"; a longer one without an assistant turn in its tail is unknown.
Every failure (missing, refused, binary junk, a line that is not JSON) is unknown or a
skipped line, never an exception.

The formats, as the real programs write them (fixtures in ``tests/transcripts/``):

- ``claude`` (Claude Code 2.1.x, ``~/.claude/projects/<slug>/<session>.jsonl``): one
  object per line; an assistant turn is ``{"type": "assistant", "message": {"model":
  ...}}``. Claude Code writes turns of its own with the model ``<synthetic>`` (an API
  error shown as a reply): they are neither the model nor an assistant turn.
- ``codex`` (Codex CLI 0.171, ``$CODEX_HOME/sessions/.../rollout-*.jsonl``): each turn
  starts with ``{"type": "turn_context", "payload": {"model": ...}}``; the model's own
  output is ``{"type": "response_item", "payload": {...}}`` with a ``message`` of role
  ``assistant``, or a tool call (``function_call``, ``custom_tool_call``,
  ``local_shell_call``), which a spawn call is too.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator

import msgspec

from hookbus.bus.host import TRANSCRIPT_TAIL, TranscriptFacts

UNKNOWN = TranscriptFacts()


def tail(path: str, limit: int = TRANSCRIPT_TAIL) -> tuple[list[bytes], bool] | None:
    """The complete lines of the last ``limit`` bytes of the regular file at ``path``,
    and whether they start at the file's start; None when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        start = max(0, info.st_size - limit)
        data = os.pread(fd, limit, start)
    except OSError:
        return None
    finally:
        os.close(fd)
    lines = data.split(b"\n")
    if start > 0:
        lines = lines[1:]  # the first is (or may be) the end of a line cut by the seek
    return lines, start == 0


class _Message(msgspec.Struct):
    model: str | None = None


class _ClaudeLine(msgspec.Struct):
    type: str | None = None
    message: _Message | None = None


class _CodexPayload(msgspec.Struct):
    type: str | None = None
    role: str | None = None
    model: str | None = None


class _CodexLine(msgspec.Struct):
    type: str | None = None
    payload: _CodexPayload | None = None


_CLAUDE = msgspec.json.Decoder(_ClaudeLine)
_CODEX = msgspec.json.Decoder(_CodexLine)
#: Codex response items that are the model's own output.
_CODEX_OUTPUT = frozenset({"function_call", "custom_tool_call", "local_shell_call"})


def _backwards(lines: list[bytes], needle: bytes) -> Iterator[bytes]:
    """The lines holding ``needle``, last first (a cheap test before any JSON parse)."""
    for line in reversed(lines):
        if needle in line:
            yield line


def claude(lines: list[bytes], whole: bool) -> TranscriptFacts:
    """Claude Code's transcript: the latest non-synthetic assistant line decides."""
    for line in _backwards(lines, b'"assistant"'):
        try:
            found = _CLAUDE.decode(line)
        except (msgspec.DecodeError, RecursionError):
            continue
        if found.type != "assistant" or found.message is None:
            continue
        model = found.message.model
        if model == "<synthetic>":
            continue
        return TranscriptFacts(model=model or None, assistant_turn=True)
    return TranscriptFacts(assistant_turn=False) if whole else UNKNOWN


def codex(lines: list[bytes], whole: bool) -> TranscriptFacts:
    """Codex's rollout: the latest ``turn_context`` names the model; a response item of
    the model's own says an assistant turn exists."""
    model: str | None = None
    turn: bool | None = None
    for line in reversed(lines):
        if b'"turn_context"' not in line and b'"response_item"' not in line:
            continue
        try:
            found = _CODEX.decode(line)
        except (msgspec.DecodeError, RecursionError):
            continue
        payload = found.payload
        if payload is None:
            continue
        if found.type == "turn_context" and model is None and payload.model:
            model = payload.model
        elif found.type == "response_item" and (
            (payload.type == "message" and payload.role == "assistant")
            or payload.type in _CODEX_OUTPUT
        ):
            turn = True
        if model is not None and turn:
            break
    if turn is None and whole:
        turn = False
    return TranscriptFacts(model=model, assistant_turn=turn)


FORMATS: dict[str, Callable[[list[bytes], bool], TranscriptFacts]] = {
    "claude": claude,
    "codex": codex,
}


def read(path: str, fmt: str, limit: int = TRANSCRIPT_TAIL) -> TranscriptFacts:
    """The facts of the transcript at ``path`` in format ``fmt`` (a key of
    :data:`FORMATS`); unknown when it cannot be read. Never raises."""
    parse = FORMATS.get(fmt)
    found = tail(path, limit) if parse is not None else None
    if parse is None or found is None:
        return UNKNOWN
    return parse(*found)
