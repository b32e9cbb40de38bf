"""The warm path whole: the command ``hookbus install --server`` writes, run as Claude Code
runs it, with the real client and the real ``hookbus serve``. The first call finds no
server, answers through the cold path and starts one; the next calls are served warm; a
server killed with SIGKILL leaves a stale socket that the next call survives. The state
folder is a long pytest path, so the socket is reached through its folder's descriptor.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from hookbus.runtime.warm import wire
from tests.support import hookbus_cli, pre_tool, wait_for

GUARD = """
import hookbus

@hookbus.handler("before-tool", tools="shell", timeout=2, fail_closed=True)
def guard(event):
    if "rm -rf" in (event.tool.command or ""):
        return hookbus.Reply.deny("no rm -rf")
    return None
"""


@pytest.fixture
def state(isolated_environment: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("HOOKBUS_SERVE_IDLE", "60")
    yield isolated_environment
    hookbus_cli(isolated_environment, "serve", "--stop")
    pid = _pid(isolated_environment)
    if pid is not None:
        _kill(pid)


@pytest.fixture
def project(tmp_path: Path, state: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "guard_mod.py").write_text(GUARD)
    (root / ".hookbus.toml").write_text('enable = ["guard_mod:guard"]\n')
    done = hookbus_cli(root, "install", "--host", "claude", "--server")
    assert done.returncode == 0, done.stderr
    return root


def _command(project: Path) -> str:
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    (group,) = settings["hooks"]["PreToolUse"]
    return str(group["hooks"][0]["command"])


def _pid(state: Path) -> int | None:
    try:
        return int((state / "run" / wire.pid_name()).read_text())
    except (OSError, ValueError):
        return None


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _status(project: Path) -> dict[str, object] | None:
    done = hookbus_cli(project, "serve", "--status", "--json")
    return json.loads(done.stdout) if done.returncode == 0 and done.stdout.strip() else None


def host_runs(project: Path, command: str) -> subprocess.CompletedProcess[bytes]:
    payload = pre_tool(command, project)
    return subprocess.run(["/bin/sh", "-c", _command(project)], input=payload,
                          capture_output=True, cwd=project, timeout=60, check=False)  # fmt: skip


def deny_reason(done: subprocess.CompletedProcess[bytes]) -> str:
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["hookSpecificOutput"]["permissionDecisionReason"])


def test_cold_first_then_warm_then_a_killed_server_is_survived(project: Path, state: Path) -> None:
    cold = host_runs(project, "rm -rf /tmp/x")
    assert deny_reason(cold) == "no rm -rf"
    # The cold call started a server in the background for the next call.
    wait_for(lambda: _status(project) is not None, "the server the first call started")
    before = _status(project)
    assert before is not None
    for command, denied in (("rm -rf /tmp/y", True), ("ls -la", False), ("rm -rf /", True)):
        done = host_runs(project, command)
        if denied:
            assert deny_reason(done) == "no rm -rf"
        else:
            assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    after = _status(project)
    assert after is not None and int(after["served"]) - int(before["served"]) == 3  # type: ignore[call-overload]
    doctor = json.loads(hookbus_cli(project, "doctor", "--json").stdout)["server"]
    assert (doctor["running"], doctor["pid"], doctor["version"]) == (
        True, after["pid"], after["version"])  # fmt: skip
    assert doctor["served"] >= after["served"] and doctor["rss_kb"] > 0
    assert doctor["workers"] == 2
    assert "warm server" in hookbus_cli(project, "doctor").stdout
    # SIGKILL leaves the socket behind: the next call still answers, and starts a new one.
    pid = int(after["pid"])  # type: ignore[call-overload]
    _kill(pid)
    wait_for(lambda: _status(project) is None, "the killed server's end")
    assert (state / "run" / wire.socket_name()).exists()  # stale: nobody listens
    assert deny_reason(host_runs(project, "rm -rf /tmp/z")) == "no rm -rf"
    wait_for(lambda: (s := _status(project)) is not None and s["pid"] != pid, "a new server")
