"""The smaller ways a hook used to go wrong: each answers the host in its own dialect."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

import hookbus
from hookbus import Bus, Reply
from hookbus.bus.events import BeforeTool, ToolCall
from hookbus.testing import HookClient, run_cli

GOLDEN = Path(__file__).parent / "golden" / "claude"

SLOW = """
import pathlib, time
import hookbus

@hookbus.handler("before-tool", tools="shell", timeout=20, fail_closed=FAIL_CLOSED)
def slow(event):
    pathlib.Path(event.cwd, "started").write_text("yes")
    time.sleep(30)
"""


def pre_tool(command: str, cwd: Path) -> bytes:
    data = json.loads((GOLDEN / "PreToolUse.Bash.json").read_text())
    data["tool_input"]["command"] = command
    data["cwd"] = str(cwd)
    return json.dumps(data).encode()


@pytest.mark.parametrize("fail_closed", [False, True])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_hook_answers_and_exits_cleanly(
    tmp_path: Path, fail_closed: bool, sig: signal.Signals
) -> None:
    """Ctrl-C on ``claude -p`` signals the whole process group: the hook answers its
    current answer (no opinion, or the fail-closed refusal), exits 0, no traceback."""
    (tmp_path / "slowmod.py").write_text(SLOW.replace("FAIL_CLOSED", str(fail_closed)))
    (tmp_path / ".hookbus.toml").write_text('budget = 25\nenable = ["slowmod:slow"]\n')
    proc = subprocess.Popen(
        [sys.executable, "-m", "hookbus", "run", "--host", "claude"], cwd=tmp_path,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    out, err = b"", b""
    try:
        assert proc.stdin is not None
        proc.stdin.write(pre_tool("ls", tmp_path))
        proc.stdin.close()
        for _ in range(300):
            if (tmp_path / "started").exists():
                break
            time.sleep(0.1)
        assert (tmp_path / "started").exists()
        import os

        os.killpg(proc.pid, sig)  # the whole group, worker included
        assert proc.stdout is not None and proc.stderr is not None
        out, err = proc.stdout.read(), proc.stderr.read()
        proc.wait(timeout=30)
    finally:
        proc.kill()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
    assert proc.returncode == 0
    assert b"Traceback" not in out + err
    if fail_closed:
        assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    else:
        assert out == b""


def test_no_stderr_and_no_state_still_exits_0(tmp_path: Path) -> None:
    """fd 2 closed and a state root that cannot exist: a diagnostic has nowhere to go, and
    the hook still exits 0 with the no-opinion."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    proc = subprocess.run(
        ["/bin/sh", "-c", 'exec "$0" -m hookbus run --host claude 2>&-', sys.executable],
        input=b"not json", capture_output=True, timeout=60, check=False,
        env={**__import__("os").environ, "HOOKBUS_STATE_DIR": str(blocker / "state")},
    )  # fmt: skip
    assert (proc.returncode, proc.stdout) == (0, b"")


DENY_ALL = """
import hookbus

@hookbus.handler("before-tool")
def deny_all(event):
    return hookbus.Reply.deny("denied")
"""


@pytest.mark.parametrize("budget", ["inf", "nan", "-1", "0"])
def test_a_budget_that_is_not_a_positive_number_keeps_the_handlers_running(
    tmp_path: Path, isolated_environment: Path, budget: str
) -> None:
    """``budget = inf`` (or nan, or not positive) is reported and the default used; the
    handlers still answer."""
    (tmp_path / "denymod.py").write_text(DENY_ALL)
    (tmp_path / ".hookbus.toml").write_text(f'budget = {budget}\nenable = ["denymod:deny_all"]\n')
    result = run_cli("claude", pre_tool("ls", tmp_path), cwd=tmp_path)
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    log = (isolated_environment / "diagnostics.jsonl").read_text()
    assert "budget must be positive finite seconds" in log


def test_a_deeply_nested_tool_input_is_no_exception_in_process() -> None:
    """``process()`` and ``HookClient.run`` answer a tool_input nested past the recursion
    limit with the no-opinion and a diagnostic, never a RecursionError."""
    deep = '{"session_id": "s", "cwd": "/", "hook_event_name": "PreToolUse", ' \
        '"tool_name": "Bash", "tool_input": {"a": ' + "[" * 50_000 + "]" * 50_000 + "}}"  # fmt: skip

    @hookbus.handler("before-tool")
    def anything(event: object) -> None:
        return None

    result = HookClient("claude", handlers=[anything]).run(deep)
    assert (result.stdout, result.exit_code) == (b"", 0)
    assert result.codes() == ["input-invalid"]


def test_a_huge_non_string_event_name_is_not_logged_whole(
    tmp_path: Path, isolated_environment: Path
) -> None:
    """A 900 KB value where the event name should be: the diagnostic quotes its start."""
    payload = json.dumps({"hook_event_name": {"x": "y" * 900_000}}).encode()
    result = run_cli("claude", payload, cwd=tmp_path)
    assert (result.exit_code, result.stdout) == (0, b"")
    (line,) = (isolated_environment / "diagnostics.jsonl").read_text().splitlines()
    assert len(line) < 4000
    assert json.loads(line)["event"] == "input-invalid"


@pytest.mark.anyio
async def test_dispatch_sync_works_inside_a_running_event_loop() -> None:
    """An in-process host calling ``dispatch_sync`` from its own event loop gets the
    merged reply of async handlers (anyio.run would refuse to start a second loop)."""

    @hookbus.handler("before-tool")
    async def deny(event: BeforeTool) -> Reply:
        await anyio.sleep(0)
        return Reply.deny("from a coroutine")

    event = BeforeTool(host="claude", native="PreToolUse", tool=ToolCall(name="Bash"))
    dispatch = Bus([deny]).dispatch_sync(event)
    assert dispatch.reply.decision == "deny"
