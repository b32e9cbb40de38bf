"""The payload is read within a bound of size and time: a host that never closes stdin
(Kiro's IDE) still gets its answer before the deadline, and Kiro IDE 0.x's payload in
an environment variable is read from there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import guarded_project, pre_tool, wait_for

from hookbus.hosts.shared.facts import HostFacts
from hookbus.runtime.intake import read_payload


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return guarded_project(tmp_path / "project")


def open_hook(project: Path, *args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "hookbus", "run", "--host", "claude", *args],
        cwd=project, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def done(proc: subprocess.Popen[bytes]) -> None:
    proc.kill()
    proc.wait(timeout=30)
    for pipe in (proc.stdin, proc.stdout, proc.stderr):
        if pipe is not None:
            pipe.close()


def test_a_payload_on_a_stdin_that_never_closes_is_answered(project: Path) -> None:
    """One whole JSON object, stdin left open: the hook answers without waiting for EOF."""
    proc = open_hook(project)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(pre_tool("rm -rf victim", project))
    proc.stdin.flush()  # and never closed
    try:
        out = proc.stdout.read()  # to EOF: the hook has answered and exited
        assert proc.wait(timeout=30) == 0
    finally:
        done(proc)
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_a_stdin_that_never_says_anything_is_answered_at_the_deadline(
    project: Path, isolated_environment: Path
) -> None:
    """Nothing on stdin, never closed: at the read's deadline (the budget under the host's
    3 s here) the hook answers the host's no-opinion for the event its command names (one
    the guard does not want) and says why."""
    started = time.monotonic()
    proc = open_hook(project, "--timeout", "3", "--event", "Stop")
    assert proc.stdin is not None and proc.stdout is not None
    try:
        out = proc.stdout.read()
        assert proc.wait(timeout=30) == 0
    finally:
        done(proc)
    assert out == b""
    assert time.monotonic() - started < 20  # well before any host would kill it
    log = isolated_environment / "diagnostics.jsonl"
    wait_for(lambda: log.exists() and "stdin still open" in log.read_text(), "the diagnostic")


def test_a_half_payload_then_silence_is_refused_for_its_guard(
    project: Path, isolated_environment: Path
) -> None:
    """Half an object and then nothing, stdin open: unreadable input for an event the
    fail-closed guard wants (named by ``--event``, as the manifest writes the command:
    this half ends before its own event name) is denied in time."""
    subprocess.run(
        [sys.executable, "-m", "hookbus", "run", "--host", "claude"],
        input=pre_tool("ls", project),
        cwd=project,
        capture_output=True,
        timeout=60,
        check=True,
    )  # fmt: skip  (compiles the index)
    proc = open_hook(project, "--event", "PreToolUse", "--timeout", "4")
    assert proc.stdin is not None and proc.stdout is not None
    half = pre_tool("rm -rf victim", project)
    proc.stdin.write(half[: len(half) // 2])
    proc.stdin.flush()
    try:
        out = proc.stdout.read()
        assert proc.wait(timeout=30) == 0
    finally:
        done(proc)
    log = (isolated_environment / "diagnostics.jsonl").read_text()
    assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny", log


def test_read_stops_at_end_of_input_a_whole_object_or_the_size_limit() -> None:
    """How each read ended is said: eof, complete, too-large."""
    facts = HostFacts("t", driver="x")
    for data, end in ((b'{"a": 1}', "eof"), (b"x" * (2 << 20), "too-large")):
        read_fd, write_fd = os.pipe()
        if end == "eof":
            os.write(write_fd, data)
            os.close(write_fd)
            got = read_payload(facts, time.monotonic() + 30, fd=read_fd)
        else:
            pid = os.fork()
            if pid == 0:
                os.close(read_fd)
                try:
                    os.write(write_fd, data)
                finally:
                    os._exit(0)
            os.close(write_fd)
            got = read_payload(facts, time.monotonic() + 30, fd=read_fd)
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(read_fd)
        assert got.end == end
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b'{"whole": true}\n')
    got = read_payload(facts, time.monotonic() + 30, fd=read_fd)
    assert (got.end, got.data) == ("complete", b'{"whole": true}\n')
    os.close(read_fd)
    os.close(write_fd)


def test_a_payload_in_an_environment_variable_is_read_from_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A host whose payload comes in an environment variable (Kiro IDE 0.x's
    ``USER_PROMPT``) is read from it, never from a stdin that may never close."""
    facts = HostFacts("t", driver="x", payload_env="USER_PROMPT")
    monkeypatch.setenv("USER_PROMPT", '{"prompt": "hi"}')
    read_fd, write_fd = os.pipe()  # never written, never closed
    got = read_payload(facts, time.monotonic() + 30, fd=read_fd)
    assert (got.end, got.data) == ("env", b'{"prompt": "hi"}')
    os.close(read_fd)
    os.close(write_fd)


@pytest.mark.parametrize("value", ["", "Run the tests and fix them"], ids=["empty", "prose"])
def test_a_variable_that_holds_no_object_leaves_the_payload_to_stdin(
    value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kiro IDE 1.x sets ``USER_PROMPT`` empty (or, its docs say, to a prompt's text) and
    writes the payload to stdin: that is where it is read from then."""
    facts = HostFacts("t", driver="x", payload_env="USER_PROMPT")
    monkeypatch.setenv("USER_PROMPT", value)
    read_fd, write_fd = os.pipe()
    os.write(write_fd, b'{"hook_event_name": "PreToolUse"}')
    got = read_payload(facts, time.monotonic() + 30, fd=read_fd)
    assert (got.end, got.data) == ("complete", b'{"hook_event_name": "PreToolUse"}')
    os.close(read_fd)
    os.close(write_fd)
