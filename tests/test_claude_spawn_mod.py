"""hookbus's agent.spawn module (``hookbus/hosts/claude/spawn.js``) driven by Node through
``claude_spawn_host.mjs``, a stand-in for Claude Code's engine, against a stand-in
``hookbus guard --json`` (``guard_standin.py``): it sets, clears or refuses the child's
model as the guard says, leaves forks, workflow agents and other plugins' spawns alone,
and fails open (the spawn proceeds, a debug line, a ``spawn-mod-failed`` diagnostic, the
variable cleared) when the guard is missing, exits non-zero, prints junk or hangs. The
real engine runs it in ``tests/e2e/test_claude_spawn_mod.py``. Last, ``spawn_mod_decides``,
the PreToolUse guard's half of "one side decides each dispatch"."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hookbus.handlers.guard.claude_mod import spawn_mod_decides
from hookbus.hosts.claude.plugin import render_module

HERE = Path(__file__).parent
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH")

#: What Claude Code 2.1.332 passed for the model's Agent call (seen with the real binary).
SPAWN: dict[str, Any] = {
    "tool_use_id": "toolu_fake0001",
    "prompt": "SUBTASK: run echo",
    "description": "Echo in subagent",
    "subagentType": "general-purpose",
    "provider": {"plugin": "engine", "tier": "core"},
    "model": "opus",
    "parentModel": "claude-sonnet-5-5",
    "permissionMode": "default",
    "background": True,
    "fork": False,
}
ROOT = "/plugins/hookbus"
STANDIN = [sys.executable, str(HERE / "guard_standin.py")]


def drive(
    tmp_path: Path,
    standin: str = "",
    event: dict[str, Any] | None = None,
    *,
    argv: list[str] | None = None,
    wait_ms: int = 10_000,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The module (with ``argv`` baked in) run by the stand-in engine on ``event``."""
    module = tmp_path / "spawn.mjs"
    module.write_text(render_module(argv or STANDIN, wait_ms))
    state = tmp_path / "state"
    done = subprocess.run(
        [NODE or "node", str(HERE / "claude_spawn_host.mjs"), str(module), ROOT],
        input=json.dumps(SPAWN if event is None else event), capture_output=True, text=True,
        timeout=60, check=False, cwd=tmp_path,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), "HOOKBUS_STATE_DIR": str(state),
             "STANDIN": standin, "STANDIN_LOG": str(tmp_path / "requests.jsonl"), **(env or {})},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    log = state / "diagnostics.jsonl"
    result["diagnostics"] = (
        [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
    )
    requests = tmp_path / "requests.jsonl"
    result["requests"] = (
        [json.loads(x) for x in requests.read_text().splitlines()] if requests.exists() else []
    )
    return result


def test_session_start_sets_the_variable_to_the_plugin_root(tmp_path: Path) -> None:
    """session.start sets HOOKBUS_CLAUDE_SPAWN_MOD to the plugin root and passes on."""
    out = drive(tmp_path)
    assert out["started"] == {"next": {}}
    assert out["afterStart"] == ROOT


def test_the_guard_gets_the_spawn_as_the_contract_says(tmp_path: Path) -> None:
    """The request: host, the session (from the transcript's name), the call, the agent
    type, the requested and the parent's model, the prompt; a pass leaves the spawn as is."""
    out = drive(tmp_path, env={"FAKE_SESSION": "abc-123", "PWD": "/work/proj"})
    assert out["requests"] == [{
        "host": "claude", "session_id": "abc-123", "cwd": "/work/proj",
        "call_id": "toolu_fake0001", "agent_type": "general-purpose", "model": "opus",
        "parent_model": "claude-sonnet-5-5", "prompt": "SUBTASK: run echo",
    }]  # fmt: skip
    assert out["result"] == {"next": SPAWN}
    assert out["afterSpawn"] == ROOT
    assert out["diagnostics"] == [] and out["logs"] == []


def test_a_model_in_the_answer_is_the_childs_model(tmp_path: Path) -> None:
    """``model`` set: the spawn goes on with that model and nothing else changed."""
    out = drive(tmp_path, json.dumps({"action": "cap", "model": "sonnet"}))
    assert out["result"] == {"next": {**SPAWN, "model": "sonnet"}}


def test_clear_model_drops_the_childs_model(tmp_path: Path) -> None:
    """``clear_model``: the spawn goes on without a model (the child inherits)."""
    out = drive(tmp_path, json.dumps({"action": "cap", "clear_model": True}))
    assert out["result"] == {"next": {k: v for k, v in SPAWN.items() if k != "model"}}


@pytest.mark.parametrize("action", ["refuse", "block"])
def test_refuse_and_block_deny_the_spawn_with_the_message(tmp_path: Path, action: str) -> None:
    """refuse and block: the spawn is denied with the guard's message, and not passed on."""
    message = "Retry with model: sonnet, or do the work yourself"
    out = drive(tmp_path, json.dumps({"action": action, "message": message}))
    assert out["result"] == {"deny": message}
    assert out["afterSpawn"] == ROOT


@pytest.mark.parametrize(
    ("change", "why"),
    [({"fork": True, "tool_use_id": ""}, "fork"), ({"workflow": {"id": "w1"}}, "workflow"),
     ({"resume": "agent-1"}, "resume")],
)  # fmt: skip
def test_forks_workflows_and_resumes_are_left_alone(
    tmp_path: Path, change: dict[str, Any], why: str
) -> None:
    """A fork, a workflow agent or a resumed agent: the guard is not asked, nothing changes."""
    event = {**SPAWN, **change}
    out = drive(tmp_path, json.dumps({"action": "cap", "model": "haiku"}), event)
    assert out["requests"] == [], why
    assert out["result"] == {"next": event}


def test_another_plugins_own_spawn_is_left_alone(tmp_path: Path) -> None:
    """A spawn another plugin's hook caused (next.origin names it) is not ours to decide."""
    origin = json.dumps({"plugin": "someone-else", "tier": "user"})
    out = drive(tmp_path, json.dumps({"action": "refuse", "message": "no"}),
                env={"FAKE_ORIGIN": origin})  # fmt: skip
    assert out["requests"] == []
    assert out["result"] == {"next": SPAWN}


def test_a_teammate_is_refused_but_its_model_is_not_rewritten(tmp_path: Path) -> None:
    """The engine ignores a hook's model for a teammate: only a refusal applies to one."""
    event = {**SPAWN, "isTeammate": True}
    out = drive(tmp_path, json.dumps({"action": "cap", "model": "sonnet"}), event)
    assert out["result"] == {"next": event}
    out = drive(tmp_path, json.dumps({"action": "refuse", "message": "no"}), event)
    assert out["result"] == {"deny": "no"}


def assert_failed_open(out: dict[str, Any], why: str) -> None:
    """The spawn went on unchanged, with one debug line and one spawn-mod-failed line
    saying ``why``, and the variable cleared."""
    assert out["result"] == {"next": SPAWN}
    assert out["afterSpawn"] is None
    [log] = out["logs"]
    assert log["to"] == "debug" and log["text"].startswith("hookbus: agent.spawn: ")
    assert why in log["text"]
    [line] = out["diagnostics"]
    assert line["event"] == "spawn-mod-failed" and line["level"] == "warning"
    assert line["host"] == "claude" and line["native"] == "agent.spawn"
    assert line["session_id"] == "sess-1"
    assert why in line["message"]
    assert "SUBTASK" not in json.dumps(line)  # no prompt text in the diagnostics


def test_a_missing_guard_fails_open(tmp_path: Path) -> None:
    """The baked interpreter is gone: the spawn proceeds, and the failure is recorded."""
    out = drive(tmp_path, argv=[str(tmp_path / "gone" / "python3"), "-P", "x", "guard", "--json"])
    assert_failed_open(out, "hookbus guard did not answer")


@pytest.mark.parametrize("code", [1, 2, 70])
def test_a_failing_guard_fails_open(tmp_path: Path, code: int) -> None:
    """A non-zero exit is no answer, whatever it printed."""
    assert_failed_open(drive(tmp_path, f"exit:{code}"), f"hookbus guard exited {code}")


@pytest.mark.parametrize(
    "junk", ["Traceback (most recent call last):", "[1]", '{"model": "haiku"}', ""]
)
def test_junk_fails_open(tmp_path: Path, junk: str) -> None:
    """Output that is not an answer object with an action: the spawn is left as it is."""
    assert_failed_open(drive(tmp_path, f"raw:{junk}"), "hookbus guard printed no answer")


def test_a_hanging_guard_is_killed_and_fails_open(tmp_path: Path) -> None:
    """Past the wait the guard is killed: the spawn proceeds long before the guard's 60 s."""
    started = time.monotonic()
    out = drive(tmp_path, "hang", wait_ms=1500)
    assert time.monotonic() - started < 30
    assert_failed_open(out, "still running after 1500ms")


def test_the_installed_argv_runs_the_real_guard(tmp_path: Path) -> None:
    """The argv install bakes (this interpreter, hookbus's __main__.py, ``guard --json``)
    answers the module: opus under a sonnet parent is capped to sonnet, no failure, and
    one dispatch row is recorded."""
    from hookbus.hosts.claude.plugin import guard_argv
    from hookbus.local.store import Store

    (tmp_path / ".hookbus.toml").write_text('enable = ["guard"]\n')
    out = drive(tmp_path, argv=guard_argv(sys.executable), env={"PWD": str(tmp_path)})
    assert out["diagnostics"] == [] and out["logs"] == []
    assert out["result"] == {"next": {**SPAWN, "model": "sonnet"}}
    [row] = Store(str(tmp_path / "state" / "store.sqlite3"), time.monotonic() + 30).dispatches()
    assert (row.session_id, row.call_id, row.action) == ("sess-1", "toolu_fake0001", "cap")


@pytest.mark.parametrize(
    ("mod", "root", "decides"),
    [("/p/hookbus", "/p/hookbus", True), ("/p/hookbus/", "/p//hookbus", True),
     ("/p/hookbus", "/p/other", False), ("", "/p/hookbus", False), ("/p/hookbus", "", False),
     (None, "/p/hookbus", False), ("/p/hookbus", None, False), ("p/hookbus", "p/hookbus", False)],
)  # fmt: skip
def test_spawn_mod_decides_when_both_name_the_plugin(
    mod: str | None, root: str | None, decides: bool
) -> None:
    """The PreToolUse guard defers only when both variables are absolute and the same."""
    environ = {k: v for k, v in
               (("HOOKBUS_CLAUDE_SPAWN_MOD", mod), ("CLAUDE_PLUGIN_ROOT", root)) if v is not None}  # fmt: skip
    assert spawn_mod_decides(environ) is decides


def test_spawn_mod_decides_through_a_symlink(tmp_path: Path) -> None:
    """A plugin folder reached through a link is the same plugin."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    environ = {"HOOKBUS_CLAUDE_SPAWN_MOD": str(tmp_path / "link"), "CLAUDE_PLUGIN_ROOT": str(real)}
    assert spawn_mod_decides(environ)
