"""Diagnostics: JSON lines in a user-only state directory, from hookbus and from handlers."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

import hookbus
from hookbus import Bus, diagnostics
from hookbus.bus.context import Context
from hookbus.bus.events import SessionStart


def lines(state: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (state / "diagnostics.jsonl").read_text().splitlines()]


def test_state_directory_and_log_are_user_only(
    isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state root is created 0700 and the log 0600 whatever the umask; each line is
    structlog-shaped."""
    import os

    old = os.umask(0)
    try:
        diagnostics.emit("input-invalid", "not JSON", host="claude")
    finally:
        os.umask(old)
    assert stat.S_IMODE(isolated_environment.stat().st_mode) == 0o700
    log = isolated_environment / "diagnostics.jsonl"
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    (line,) = lines(isolated_environment)
    assert (line["event"], line["level"], line["host"]) == ("input-invalid", "warning", "claude")
    assert str(line["timestamp"]).endswith("Z")


def test_handler_logger_writes_json_lines_to_the_same_log(isolated_environment: Path) -> None:
    """``ctx.log`` is structlog, bound to the handler and event, into diagnostics.jsonl."""

    @hookbus.handler("session-start")
    def greet(event: SessionStart, ctx: Context) -> None:
        ctx.log.info("hello", answer=42)

    event = SessionStart(host="claude", native="SessionStart", session_id="s1")
    Bus([greet]).dispatch_sync(event)
    (line,) = lines(isolated_environment)
    assert line["event"] == "hello"
    assert line["answer"] == 42
    assert line["level"] == "info"
    assert line["session_id"] == "s1"
    assert str(line["handler"]).endswith("greet")


def test_unwritable_state_falls_back_to_one_stderr_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """When the log cannot be written the diagnostic goes to stderr, with why, never an
    error."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("HOOKBUS_STATE_DIR", str(blocker / "state"))
    diagnostics.emit("handler-error", "boom")
    note, line, _ = capfd.readouterr().err.split("\n")
    assert note.startswith(f"hookbus: cannot write {blocker}/state/diagnostics.jsonl")
    assert json.loads(line)["event"] == "handler-error"
