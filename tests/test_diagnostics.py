"""Diagnostics: JSON lines in a user-only state directory, from hookbus and from handlers."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

import hookbus
from hookbus import Bus
from hookbus.bus.context import Context
from hookbus.bus.events import SessionStart
from hookbus.local import diagnostics


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


def marks(file: Path) -> set[str]:
    return {str(json.loads(line)["message"]) for line in file.read_text().splitlines()}


def test_the_log_is_rotated_once_it_reaches_its_bound(
    isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write that takes the log to the bound is the last in it: the log becomes
    ``.1`` (still private), and the next line starts a new log."""
    one = diagnostics.line("filler", "x")
    monkeypatch.setenv("HOOKBUS_LOG_MAX_BYTES", str(3 * len(one)))
    log = isolated_environment / "diagnostics.jsonl"
    for _ in range(2):
        diagnostics.emit("filler", "x")
    assert log.stat().st_size == 2 * len(one)
    assert not log.with_name("diagnostics.jsonl.1").exists()
    diagnostics.emit("filler", "x")
    assert not log.exists()
    rotated = log.with_name("diagnostics.jsonl.1")
    assert len(rotated.read_text().splitlines()) == 3
    assert stat.S_IMODE(rotated.stat().st_mode) == 0o600
    diagnostics.emit("after", "y")
    assert [line["event"] for line in lines(isolated_environment)] == ["after"]
    lock = log.with_name("diagnostics.jsonl.lock")
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600


def test_generations_shift_and_only_three_are_kept(
    isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each rotation shifts ``.1`` to ``.2`` and ``.2`` to ``.3``; the old ``.3`` is
    dropped, so the log and three generations remain, newest in ``.1``."""
    monkeypatch.setenv("HOOKBUS_LOG_MAX_BYTES", "1")  # every write fills the log
    for n in range(6):
        diagnostics.emit("filler", f"round {n}")
    files = {p.name: marks(p) for p in isolated_environment.glob("diagnostics.jsonl*")
             if not p.name.endswith(".lock")}  # fmt: skip
    assert files == {
        "diagnostics.jsonl.1": {"round 5"},
        "diagnostics.jsonl.2": {"round 4"},
        "diagnostics.jsonl.3": {"round 3"},
    }
    assert diagnostics.log_files() == [
        "diagnostics.jsonl.3", "diagnostics.jsonl.2", "diagnostics.jsonl.1", "diagnostics.jsonl",
    ]  # fmt: skip


def test_the_bound_is_a_module_constant_the_environment_overrides(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``HOOKBUS_LOG_MAX_BYTES`` sets the bound when it is a positive whole number; any
    other value leaves :data:`LOG_MAX_BYTES` (1 MiB)."""
    assert diagnostics.LOG_MAX_BYTES == 1 << 20
    monkeypatch.delenv("HOOKBUS_LOG_MAX_BYTES", raising=False)
    assert diagnostics.max_bytes() == 1 << 20
    for value, expected in [("4096", 4096), ("0", 1 << 20), ("-5", 1 << 20),
                            ("1e3", 1 << 20), ("²", 1 << 20), ("", 1 << 20)]:  # fmt: skip
        monkeypatch.setenv("HOOKBUS_LOG_MAX_BYTES", value)
        assert diagnostics.max_bytes() == expected, value


def test_a_process_without_the_lock_only_appends(
    isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While another process holds the rotation lock a full log is appended to, not
    rotated; the next write after the lock is free rotates it."""
    import fcntl
    import os

    monkeypatch.setenv("HOOKBUS_LOG_MAX_BYTES", "1")
    diagnostics.emit("first", "x")  # creates the root and the lock file, and rotates
    lock = os.open(isolated_environment / "diagnostics.jsonl.lock", os.O_RDWR)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        diagnostics.emit("second", "x")
        diagnostics.emit("third", "x")
        assert [line["event"] for line in lines(isolated_environment)] == ["second", "third"]
    finally:
        os.close(lock)
    diagnostics.emit("fourth", "x")
    assert not (isolated_environment / "diagnostics.jsonl").exists()
    rotated = (isolated_environment / "diagnostics.jsonl.1").read_text().splitlines()
    assert [json.loads(line)["event"] for line in rotated] == ["second", "third", "fourth"]


def test_the_size_is_checked_again_by_name_under_the_lock(isolated_environment: Path) -> None:
    """A process that found the file it wrote full, when the log by that name has been
    rotated meanwhile and is small, leaves the new log alone."""
    from hookbus.local import state

    diagnostics.emit("small", "x")
    assert state.rotate(diagnostics.LOG_NAME, at=1 << 20, keep=3) is False
    assert [line["event"] for line in lines(isolated_environment)] == ["small"]
    assert state.rotate(diagnostics.LOG_NAME, at=1, keep=3) is True
    assert state.rotate(diagnostics.LOG_NAME, at=1, keep=3) is False  # nothing to rotate


@pytest.mark.parametrize("obstacle", ["folder-as-oldest", "lock-is-a-link"])
def test_a_rotation_that_fails_keeps_every_line_and_says_why(
    isolated_environment: Path, monkeypatch: pytest.MonkeyPatch, obstacle: str
) -> None:
    """When the log cannot be rotated (a folder where ``.3`` goes, a link as its lock)
    no generation is moved onto another, no line is lost, and a ``log-unrotated`` error
    in the log says why."""
    diagnostics.emit("before", "x")
    (isolated_environment / "diagnostics.jsonl.2").write_text('{"event": "old"}\n')
    if obstacle == "folder-as-oldest":
        (isolated_environment / "diagnostics.jsonl.3").mkdir()
        (isolated_environment / "diagnostics.jsonl.3" / "keep").write_text("")
    else:
        (isolated_environment / "elsewhere").write_text("")
        (isolated_environment / "diagnostics.jsonl.lock").symlink_to("elsewhere")
    monkeypatch.setenv("HOOKBUS_LOG_MAX_BYTES", "1")
    diagnostics.emit("full", "x")
    events = [line["event"] for line in lines(isolated_environment)]
    assert events == ["before", "full", "log-unrotated"]
    assert "cannot rotate" in str(lines(isolated_environment)[-1]["message"])
    assert (isolated_environment / "diagnostics.jsonl.2").read_text() == '{"event": "old"}\n'


WRITER = """
import os, sys, time
from hookbus.local import diagnostics

go, writer, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
while not os.path.exists(go):  # all writers start together
    time.sleep(0.005)
for seq in range(count):
    diagnostics.emit("stress", "x" * 100, writer=writer, seq=seq)
"""

WRITERS = 8
COUNT = 300


def _write_concurrently(tmp_path: Path, limit: int) -> dict[int, list[int]]:
    """``WRITERS`` real processes write ``COUNT`` lines each at once, rotating at
    ``limit``; the ``seq`` of each writer's lines kept, by writer (every line parsed)."""
    import os
    import subprocess
    import sys

    go = tmp_path / "go"
    env = {**os.environ, "HOOKBUS_LOG_MAX_BYTES": str(limit)}
    command = [sys.executable, "-c", WRITER, str(go)]
    procs = [
        subprocess.Popen([*command, str(w), str(COUNT)], env=env, stderr=subprocess.PIPE)
        for w in range(WRITERS)
    ]
    go.write_text("")
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert err == b"", err  # nothing fell back to stderr
    state = Path(os.environ["HOOKBUS_STATE_DIR"])
    assert not (state / "diagnostics.jsonl.4").exists()
    kept: dict[int, list[int]] = {w: [] for w in range(WRITERS)}
    for name in diagnostics.log_files():  # oldest first
        file = state / name
        if not file.exists():
            continue
        data = file.read_bytes()
        assert data.endswith(b"\n"), name
        for raw in data.splitlines():
            record = json.loads(raw)  # whole JSON, or the test fails here
            kept[record["writer"]].append(record["seq"])
    return kept


def test_concurrent_writers_lose_no_line_while_the_generations_hold_them(
    tmp_path: Path,
) -> None:
    """Eight processes appending and rotating at once: every line is whole JSON, and
    when the log and its three generations can hold all of them, none is lost."""
    sample = len(diagnostics.line("stress", "x" * 100, writer=WRITERS - 1, seq=COUNT - 1))
    most = WRITERS * COUNT * (sample + 8)  # a pid may be longer than this process's
    # Each rotated generation holds at least `limit` bytes, so all `most` bytes need at
    # most 3 rotations when most < 4 * limit: nothing reaches the dropped fourth.
    limit = int(most / 3.5)
    kept = _write_concurrently(tmp_path, limit)
    assert (tmp_path / "hookbus-state" / "diagnostics.jsonl.1").exists()  # it did rotate
    for writer, seqs in kept.items():
        assert sorted(seqs) == list(range(COUNT)), writer


def test_concurrent_rotations_clobber_no_generation(tmp_path: Path) -> None:
    """With a bound so small that the log rotates a hundred times, only whole oldest
    generations are dropped: what is kept of each writer is an unbroken run of its
    last lines (a generation renamed onto another would leave a gap)."""
    kept = _write_concurrently(tmp_path, 4096)
    assert sum(len(seqs) for seqs in kept.values()) < WRITERS * COUNT  # some were dropped
    for writer, seqs in kept.items():
        assert sorted(seqs) == list(range(COUNT - len(seqs), COUNT)), writer
        assert len(set(seqs)) == len(seqs), writer
