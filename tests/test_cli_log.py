"""``hookbus log``: the diagnostics as readable, filterable lines, driven as a real command."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

import pytest
from support import wait_for

from hookbus.local import diagnostics

LOG = "diagnostics.jsonl"


def hookbus_log(*args: str, tz: str = "UTC") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TZ": tz, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "hookbus", "log", *args],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def shown(*args: str, tz: str = "UTC") -> list[str]:
    """The lines ``hookbus log ARGS`` prints (it must succeed)."""
    result = hookbus_log(*args, tz=tz)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def entry(code: str, when: str | float, *, level: str = "warning", **fields: object) -> str:
    """A hookbus diagnostic's JSON line with timestamp ``when`` (ISO, or an epoch)."""
    stamp = diagnostics.timestamp(when) if isinstance(when, float) else when
    record = {"event": code, "level": level, "timestamp": stamp,
              "message": f"{code} happened", "pid": 4242, **fields}  # fmt: skip
    return json.dumps(record)


def code(line: str) -> str:
    """The code column of a line ``hookbus log`` printed."""
    return line.split()[4]


def put(state: Path, lines: list[str], name: str = LOG) -> Path:
    """Write ``lines`` as the file ``name`` of the private state root."""
    state.mkdir(mode=0o700, exist_ok=True)
    file = state / name
    file.write_text("".join(line + "\n" for line in lines))
    file.chmod(0o600)
    return file


def not_json_hook() -> None:
    """Run the real hook on a payload that is not JSON: it logs ``input-invalid``."""
    subprocess.run(
        [sys.executable, "-m", "hookbus", "run", "--host", "claude", "--event", "PreToolUse"],
        input=b"not json", capture_output=True, timeout=60, check=True,
    )  # fmt: skip


def logged(state: Path, code: str) -> bool:
    log = state / LOG
    return log.exists() and f'"event": "{code}"' in log.read_text()


def test_no_log_yet_says_where_it_would_be(isolated_environment: Path) -> None:
    """With no state root (or no log in it) the command says so, naming the path, and
    succeeds."""
    result = hookbus_log()
    assert result.returncode == 0
    assert f"no diagnostics yet: {isolated_environment / LOG}" in result.stderr
    assert result.stdout == ""
    isolated_environment.mkdir(mode=0o700)
    assert "no diagnostics yet" in hookbus_log().stderr


def test_a_refused_state_root_is_named_and_fails(isolated_environment: Path) -> None:
    """A group-writable state root is refused: the command says why and exits 1."""
    put(isolated_environment, [entry("input-invalid", time.time())])
    isolated_environment.chmod(0o770)
    result = hookbus_log()
    assert result.returncode == 1
    assert str(isolated_environment) in result.stderr
    assert "writable by group" in result.stderr
    assert "refused" in result.stderr
    assert result.stdout == ""


def test_a_refused_generation_is_named_and_the_rest_shown(
    isolated_environment: Path, tmp_path: Path
) -> None:
    """A generation that is a symbolic link is not followed: the command says why, shows
    the other files, and exits 1."""
    put(isolated_environment, [entry("kept", time.time())])
    put(tmp_path, [entry("planted", time.time())], name="elsewhere")
    (isolated_environment / f"{LOG}.2").symlink_to(tmp_path / "elsewhere")
    result = hookbus_log()
    assert result.returncode == 1
    assert f"{LOG}.2 holds a symbolic link" in result.stderr
    assert [code(line) for line in result.stdout.splitlines()] == ["kept"]


def test_a_real_hooks_diagnostic_is_one_readable_line(isolated_environment: Path) -> None:
    """The ``input-invalid`` a hook writes (after its reply) reads as one line: local
    time, level, code, host, and the message with the remaining fields."""
    not_json_hook()
    wait_for(lambda: logged(isolated_environment, "input-invalid"), "the hook's diagnostic")
    (line,) = shown()
    assert re.match(r"[A-Z][a-z]{2} \d\d \d\d:\d\d:\d\d  warning  input-invalid  claude  ", line)
    assert "input is not JSON" in line
    assert line.endswith("bytes=8")


def test_columns_are_aligned_and_the_time_is_local(isolated_environment: Path) -> None:
    """Each column starts at the same place on every line; the time is the local one."""
    put(isolated_environment, [
        entry("handler-timeout", "2025-01-02T03:04:05.678Z", host="claude",
              native="PreToolUse", handler="guards:no_rm"),
        entry("x", "2025-01-02T03:04:06.000Z", level="error", host="codex"),
    ])  # fmt: skip
    utc = shown()
    assert utc[0].startswith("Jan 02 03:04:05  warning  handler-timeout  claude  PreToolUse")
    assert utc[1].startswith("Jan 02 03:04:06  error    x                codex   -")
    assert utc[0].index("handler-timeout happened") == utc[1].index("x happened")
    assert shown(tz="JST-9")[0].startswith("Jan 02 12:04:05")


def test_handlers_own_lines_show_as_log_with_their_message(isolated_environment: Path) -> None:
    """A handler's ``ctx.log`` line (structlog: the message is ``event``) shows the code
    ``log``, its message and its own fields, not the session bound to every line."""
    structlog_line = json.dumps({
        "handler": "greet:hello", "host": "claude", "native": "SessionStart",
        "session_id": "s1", "answer": 42, "who": "the world", "event": "hello there",
        "level": "info", "timestamp": "2025-01-01T10:00:00.123456Z",
    })  # fmt: skip
    put(isolated_environment, [structlog_line, entry("handler-error", time.time())])
    lines = shown()
    assert re.search(r"info +log +claude +SessionStart +greet:hello +hello there "
                     r'answer=42 who="the world"$', lines[0])  # fmt: skip
    assert "s1" not in lines[0]
    assert [code(line) for line in shown("--code", "log")] == ["log"]


def test_filters_by_since_level_code_host_and_count(isolated_environment: Path) -> None:
    """--since (a span or an ISO time), --level (that level and above), --code (with
    wildcards), --host and -n select lines, and combine."""
    now = time.time()
    put(isolated_environment, [
        entry("config-invalid", now - 3 * 3600, level="error", host="claude"),
        entry("handler-error", now - 1800, level="info", host="codex"),
        entry("handler-timeout", now - 60, level="debug", host="claude"),
        entry("input-invalid", now - 30, level="warning", host="codex"),
    ])  # fmt: skip

    def codes(*args: str) -> list[str]:
        return [code(line) for line in shown(*args)]

    assert codes() == ["config-invalid", "handler-error", "handler-timeout", "input-invalid"]
    assert codes("--since", "10m") == ["handler-timeout", "input-invalid"]
    assert codes("--since", "2h") == ["handler-error", "handler-timeout", "input-invalid"]
    assert codes("--since", "1d") == codes()
    assert codes("--since", "45s") == ["input-invalid"]
    assert codes("--level", "warning") == ["config-invalid", "input-invalid"]
    assert codes("--level", "debug") == codes()
    assert codes("--code", "handler-*") == ["handler-error", "handler-timeout"]
    assert codes("--code", "input-invalid", "--code", "config-*") == [
        "config-invalid", "input-invalid"
    ]  # fmt: skip
    assert codes("--host", "codex") == ["handler-error", "input-invalid"]
    assert codes("-n", "1") == ["input-invalid"]
    assert codes("--host", "claude", "-n", "1") == ["handler-timeout"]
    assert codes("--since", "2h", "--level", "info", "--code", "handler-*") == ["handler-error"]
    assert codes("-n", "0") == []


def test_since_takes_an_iso_time_local_unless_it_names_its_zone(
    isolated_environment: Path,
) -> None:
    """An ISO ``--since`` with a zone is that instant; without one it is local time."""
    put(isolated_environment, [entry("early", "2025-06-01T11:00:00.000Z"),
                               entry("late", "2025-06-01T13:00:00.000Z")])  # fmt: skip
    assert [code(line) for line in shown("--since", "2025-06-01T12:00:00Z")] == ["late"]
    assert [code(line) for line in shown("--since", "2025-06-01T10:00:00+00:00")] == [
        "early", "late",
    ]  # fmt: skip
    # 21:30 in a zone nine hours ahead is 12:30 UTC.
    local = shown("--since", "2025-06-01T21:30:00", tz="JST-9")
    assert [code(line) for line in local] == ["late"]


def test_bad_arguments_are_refused_with_a_reason() -> None:
    """A --since that is neither a span nor an ISO time, or a -n that is not a count,
    is a usage error (exit 2) that says what was wrong."""
    result = hookbus_log("--since", "yesterday")
    assert result.returncode == 2
    assert "'yesterday' is neither a span" in result.stderr
    assert hookbus_log("-n", "-3").returncode == 2
    assert hookbus_log("--level", "loud").returncode == 2


def test_json_passes_the_lines_through_as_written(isolated_environment: Path) -> None:
    """--json prints the selected lines byte for byte (tools parse them), and leaves out
    lines that are not JSON, with a note on stderr."""
    lines = [entry("input-invalid", time.time(), host="claude", path="$.tool_input"),
             "torn {", entry("handler-error", time.time(), level="error", host="codex")]  # fmt: skip
    put(isolated_environment, lines)
    result = hookbus_log("--json")
    assert result.returncode == 0
    assert result.stdout.splitlines() == [lines[0], lines[2]]
    assert "not JSON, left out: torn {" in result.stderr
    assert hookbus_log("--json", "--host", "codex").stdout.splitlines() == [lines[2]]


def test_unreadable_lines_are_shown_escaped_and_never_crash(isolated_environment: Path) -> None:
    """Lines that are not a JSON object (torn, foreign, not UTF-8, an escape sequence,
    nested too deep) are each shown as ``unreadable`` with control characters escaped;
    a field filter leaves them out."""
    isolated_environment.mkdir(mode=0o700)
    good = entry("input-invalid", time.time())
    raw = [good.encode(), b'{"event": "half', b"\xff\xfe binary", b"\x1b[2J\x1b[31mred",
           b"[1, 2]", b"[" * 100_000, b"", good.encode()]  # fmt: skip
    (isolated_environment / LOG).write_bytes(b"\n".join(raw) + b"\n")
    (isolated_environment / LOG).chmod(0o600)
    result = hookbus_log()
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 7  # the blank line is no line
    assert [line.split()[2] for line in lines[1:6]] == ["unreadable"] * 5
    assert "\x1b" not in result.stdout
    assert "\\x1b[2J\\x1b[31mred" in lines[3]
    assert len(shown("--level", "debug")) == 2
    assert len(shown("--code", "*")) == 2


def test_rotated_generations_are_read_oldest_first(
    isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log is read after ``.1``, ``.1`` after ``.2``, ``.2`` after ``.3``: a history
    rotated for real reads in the order it was written."""
    line = diagnostics.line("step-0", "x")
    monkeypatch.setenv("HOOKBUS_LOG_MAX_BYTES", str(2 * len(line)))
    for n in range(9):  # two lines to a generation, 0-1 dropped: 2-3, 4-5, 6-7, 8
        diagnostics.emit(f"step-{n}", "x")
    assert (isolated_environment / f"{LOG}.3").exists()
    assert [code(line) for line in shown()] == [f"step-{n}" for n in range(2, 9)]


class Follower:
    """``hookbus log --follow`` running, its output and error lines collected as they
    come."""

    def __init__(self, *args: str) -> None:
        env = {**os.environ, "TZ": "UTC", "NO_COLOR": "1"}
        # Ctrl-C must reach it even where these tests run with SIGINT ignored (a
        # background job), which a child would inherit; a handled signal it does not.
        before = signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "hookbus", "log", "--follow", *args], env=env,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
        finally:
            signal.signal(signal.SIGINT, before)
        self.lines: list[str] = []
        self.errors: list[str] = []
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.readers = [
            threading.Thread(target=self._read, args=(pipe, into), daemon=True)
            for pipe, into in ((self.proc.stdout, self.lines), (self.proc.stderr, self.errors))
        ]
        for reader in self.readers:
            reader.start()

    @staticmethod
    def _read(pipe: IO[str], into: list[str]) -> None:
        for line in pipe:
            into.append(line.rstrip("\n"))

    def codes(self) -> list[str]:
        return [code(line) for line in list(self.lines)]

    def wait_for(self, code: str) -> None:
        wait_for(lambda: code in self.codes(), f"{code} in the followed log", seconds=30)

    def interrupt(self) -> int:
        """Ctrl-C: its exit code, once it has ended and its output is all read."""
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            for reader in self.readers:
                reader.join(timeout=30)
            for pipe in (self.proc.stdout, self.proc.stderr):
                if pipe is not None:
                    pipe.close()
        return self.proc.returncode


def test_follow_prints_new_lines_across_a_rotation(
    isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--follow prints the last ten lines, then each line as it is written: by a real
    hook, into the log just before it is rotated, and into the new log after; Ctrl-C
    ends it cleanly."""
    put(isolated_environment, [entry(f"old-{n}", time.time()) for n in range(12)])
    follower = Follower()
    try:
        follower.wait_for("old-11")
        assert follower.codes() == [f"old-{n}" for n in range(2, 12)]
        not_json_hook()
        follower.wait_for("input-invalid")
        monkeypatch.setenv("HOOKBUS_LOG_MAX_BYTES", "1")
        diagnostics.emit("rotated-away", "the last line of the log before its rotation")
        assert not (isolated_environment / LOG).exists()
        assert (isolated_environment / f"{LOG}.1").exists()
        monkeypatch.delenv("HOOKBUS_LOG_MAX_BYTES")
        diagnostics.emit("after-rotation", "the first line of the new log")
        diagnostics.emit("after-two", "and the next")
        follower.wait_for("after-two")
    finally:
        code = follower.interrupt()
    assert follower.codes()[10:] == ["input-invalid", "rotated-away", "after-rotation",
                                     "after-two"]  # fmt: skip
    assert code == 0
    assert not any("Traceback" in line for line in follower.errors)


def test_follow_waits_for_the_log_and_starts_over_when_it_is_truncated(
    isolated_environment: Path,
) -> None:
    """--follow with no log yet says so and waits for one; a log truncated under it is
    read again from its start; the filters apply to what comes."""
    follower = Follower("--level", "warning")
    try:
        wait_for(lambda: any("no diagnostics yet" in e for e in follower.errors), "the note",
                 seconds=30)  # fmt: skip
        diagnostics.emit("quiet", "below the level", level="info")
        diagnostics.emit("first", "a long warning " + "x" * 1000)
        follower.wait_for("first")
        (isolated_environment / LOG).write_text("")  # truncated, the same file
        # Shorter than what was read, so it is seen as truncated however late it is seen.
        diagnostics.emit("second", "short")
        follower.wait_for("second")
    finally:
        code = follower.interrupt()
    assert follower.codes() == ["first", "second"]
    assert code == 0


#: A handler whose failure is a chain of five exceptions, the first raised 12 calls
#: down: a traceback longer than a diagnostic's field (2,000 characters).
LAYERED = """
import hookbus

def down(n):
    if n == 0:
        raise ValueError("deep bug")
    return down(n - 1)

def layers(n):
    try:
        return down(12) if n == 0 else layers(n - 1)
    except Exception as exc:
        raise RuntimeError(f"layer {n}") from exc  # line 13

@hookbus.handler("before-tool", tools="shell")
def layered(event):
    layers(4)
"""


def failing_hook(root: Path, state: Path) -> Path:
    """Run the real hook in a project whose handler fails (LAYERED); its module."""
    from support import pre_tool

    project = root / "project"
    project.mkdir()
    (project / "layered.py").write_text(LAYERED)
    (project / ".hookbus.toml").write_text('enable = ["layered:layered"]\n')
    subprocess.run(
        [sys.executable, "-m", "hookbus", "run", "--host", "claude", "--event", "PreToolUse"],
        input=pre_tool("ls", project), capture_output=True, cwd=project, timeout=60,
        check=True,
    )  # fmt: skip
    wait_for(lambda: logged(state, "handler-error"), "the hook's handler-error")
    return project / "layered.py"


def test_a_handlers_traceback_shows_where_it_failed(
    isolated_environment: Path, tmp_path: Path
) -> None:
    """A handler's traceback reads, on its one line, as the file, line and function of
    the handler where it failed and the exception it raised, however long it is."""
    module = failing_hook(tmp_path, isolated_environment)
    [line] = shown("--code", "handler-error")
    assert line.endswith(f'error="{module}:13 in layers: RuntimeError: layer 4"'), line


def test_traceback_prints_the_whole_traceback_under_its_line(
    isolated_environment: Path, tmp_path: Path
) -> None:
    """``-v`` (``--traceback``) prints each traceback whole, indented under the line it
    belongs to; the line itself is unchanged."""
    failing_hook(tmp_path, isolated_environment)
    brief = shown("--code", "handler-error")
    for flag in ("-v", "--traceback"):
        first, *rest = shown("--code", "handler-error", flag)
        assert [first] == brief
        assert rest[:2] == ["    error:", "      Traceback (most recent call last):"]
        assert all(line.startswith("      ") for line in rest[1:])
        assert rest[-1] == "      RuntimeError: layer 4"
