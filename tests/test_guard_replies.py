"""The guard through the real CLI, as each host runs it: stdin in, native bytes out.

For every host that runs command hooks (and, through the same ``hookbus run`` the shims
call, the in-process ones), the native reply of each action the host can take: fill, cap,
refuse, block, pass, log. The exact bytes are pinned in ``tests/golden/guard/replies.json``
(``HOOKBUS_GUARD_GOLDEN=1`` rewrites it; review the diff). Each case also checks the one
dispatch row the call recorded.

The parent's model comes from where the host gives it: the event (Codex, Cursor, Hermes's
config.yaml), the Claude transcript's tail, or the session cache that session-start fills
(seeded here for the hosts whose session start names no model).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from hookbus.hosts import driver as load
from hookbus.local.store import open_store
from hookbus.testing import run_cli

GOLDEN = Path(__file__).parent / "golden" / "guard" / "replies.json"
CAPTURE = os.environ.get("HOOKBUS_GUARD_GOLDEN") == "1"
SESSION = "guard-session"
SECRET = "sk-live-PLANTED-4f9a8b7c6d5e"
OPUS, SONNET = "claude-opus-4-1-20250805", "claude-sonnet-4-5-20250929"


class Case(NamedTuple):
    name: str
    host: str
    native: str
    tool: str | None
    #: Over the sample's tool input (Claude, Codex, Copilot...) or payload (Cursor).
    tool_input: dict[str, Any] | None
    payload: dict[str, Any]
    #: The parent's model: written where this host keeps it (transcript, cache, config).
    parent: str | None
    action: str | None
    env: tuple[tuple[str, str], ...] = ()


def _claude(agent: str, model: str | None = None) -> dict[str, Any]:
    spawn: dict[str, Any] = {"description": "Find tests", "subagent_type": agent,
                             "prompt": f"Escalation from cheap: list the tests. {SECRET}"}  # fmt: skip
    if model is not None:
        spawn["model"] = model
    return spawn


CASES = [
    Case("claude-fill", "claude", "PreToolUse", "Agent", _claude("Explore"), {}, OPUS, "fill"),
    Case("claude-cap", "claude", "PreToolUse", "Agent", _claude("general-purpose", "opus"), {},
         SONNET, "cap"),
    Case("claude-cap-drop", "claude", "PreToolUse", "Agent", _claude("hookbus-lens", "opus"),
         {}, "gpt-5", "cap"),
    Case("claude-block", "claude", "PreToolUse", "Agent", _claude("reviewer", "opus"), {},
         "gpt-5", "block"),
    Case("claude-pass", "claude", "PreToolUse", "Agent", _claude("general-purpose", "haiku"),
         {}, SONNET, "pass"),
    Case("claude-setting", "claude", "PreToolUse", "Agent", _claude("general-purpose"), {},
         SONNET, "cap", (("CLAUDE_CODE_SUBAGENT_MODEL", "opus"),)),
    Case("claude-forced", "claude", "PreToolUse", "Agent", _claude("Explore", "haiku"), {},
         SONNET, "block", (("CLAUDE_CODE_SUBAGENT_MODEL", "opus"),
                             ("CLAUDE_CODE_SUBAGENT_MODEL_FORCE", "yes"))),
    Case("claude-warn", "claude", "PreToolUse", "Agent", _claude("general-purpose", "opus"),
         {}, SONNET, "log", (("MODE", "warn"),)),
    Case("codex-refuse", "codex", "PreToolUse", "spawn_agent",
         {"message": "enc:…", "agent_type": "default", "model": "gpt-5"}, {"model": "gpt-5-mini"},
         None, "refuse"),
    Case("codex-v2-refuse", "codex", "PreToolUse", "collaborationspawn_agent",
         {"message": "enc:…", "agent_type": "worker", "model": "o3-pro"}, {"model": "gpt-5"},
         None, "refuse"),
    Case("codex-pass", "codex", "PreToolUse", "spawn_agent",
         {"message": "enc:…", "agent_type": "default"}, {"model": "gpt-5"}, None, "pass"),
    Case("cursor-refuse", "cursor", "subagentStart", None, None,
         {"subagent_model": "claude-opus-4-1", "model": "claude-sonnet-4-5"}, None, "refuse"),
    Case("cursor-pass", "cursor", "subagentStart", None, None,
         {"subagent_model": "claude-haiku-4-5", "model": "claude-sonnet-4-5"}, None, "pass"),
    Case("copilot-refuse", "copilot", "preToolUse", "task",
         {"prompt": "List the tests.", "agent_type": "general-purpose",
          "model": "claude-opus-4-1"}, {}, "claude-sonnet-4-5", "refuse"),
    Case("copilot-pass", "copilot", "preToolUse", "task",
         {"prompt": "List the tests.", "agent_type": "general-purpose",
          "model": "claude-haiku-4-5"}, {}, "claude-sonnet-4-5", "pass"),
    Case("vscode-refuse", "vscode", "PreToolUse", "runSubagent",
         {"prompt": "List the tests.", "agentName": "Plan", "model": "claude-opus-4-1"}, {},
         "claude-sonnet-4-5", "refuse"),
    Case("opencode-cap", "opencode", "tool.execute.before", "task",
         {"description": "d", "prompt": "p", "subagent_type": "hookbus-premium"}, {},
         "claude-sonnet-4-5", "cap"),
    Case("opencode-lens-pass", "opencode", "tool.execute.before", "task",
         {"description": "d", "prompt": "p", "subagent_type": "hookbus-lens"}, {},
         "claude-sonnet-4-5", "pass"),
    # Plugin API v2 (from its contract: no v2 runtime is published) puts the arguments in
    # input.input and renames task to subagent, which takes a model.
    Case("opencode-v2-cap", "opencode", "tool.execute.before", "task", None,
         {"api": 2, "output": None, "input": {
             "tool": "subagent", "sessionID": SESSION, "callID": "call_v2",
             "input": {"description": "d", "prompt": "p", "agent": "general",
                       "model": "anthropic/claude-opus-4-1"}}},
         "anthropic/claude-sonnet-4-5", "cap"),
    Case("kilo-cap", "kilo", "tool.execute.before", "task",
         {"description": "d", "prompt": "p", "subagent_type": "hookbus-premium"}, {},
         "claude-haiku-4-5", "cap"),
    Case("hermes-block", "hermes", "pre_tool_call", "delegate_task",
         {"goal": "List the tests"}, {}, "anthropic/claude-sonnet-4-5", "block",
         (("DELEGATION", "anthropic/claude-opus-4-1"),)),
    Case("hermes-pass", "hermes", "pre_tool_call", "delegate_task",
         {"goal": "List the tests"}, {}, "anthropic/claude-sonnet-4-5", "pass",
         (("DELEGATION", "anthropic/claude-haiku-4-5"),)),
    Case("pi-log", "pi", "tool_call", "subagent", {"agent": "scout", "task": "find"}, {},
         None, "log"),
    Case("gemini-log", "gemini", "BeforeTool", "invoke_agent", None, {}, None, "log"),
    Case("qwen-log", "qwen", "PreToolUse", "agent", None, {}, None, "log"),
    Case("cline-log", "cline", "PreToolUse", "use_subagents", None, {}, None, "log"),
    Case("droid-log", "droid", "PreToolUse", "Task", None, {}, None, "log"),
    Case("kiro-log", "kiro", "PreToolUse", "invoke_sub_agent", None, {}, None, "log"),
    Case("grok-log", "grok", "pre_tool_use", "task", None, {}, None, "log"),
    Case("kimi-log", "kimi", "PreToolUse", "Agent", None, {}, None, "log"),
    Case("qoder-log", "qoder", "PreToolUse", "Agent", None, {}, None, "log"),
    Case("openhands-log", "openhands", "PreToolUse", "task", None, {}, None, "log"),
    Case("antigravity-log", "antigravity", "PreToolUse", "invoke_subagent", None, {}, None,
         "log"),
]  # fmt: skip


def _project(tmp_path: Path, mode: str | None) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    options = f'\n[handlers.guard]\nmode = "{mode}"\n' if mode else ""
    (project / ".hookbus.toml").write_text(f'enable = ["guard"]\n{options}')
    return project


def _payload(case: Case, project: Path, tmp_path: Path, env: dict[str, str]) -> dict[str, Any]:
    driver = load(case.host)
    payload = driver.sample_payload(case.native, case.tool, case.tool_input, cwd=str(project),
                                    session_id=SESSION)  # fmt: skip
    payload = {**payload, **case.payload}
    if case.host == "claude" and case.parent:
        transcript = tmp_path / "transcript.jsonl"
        line = {"type": "assistant", "message": {"model": case.parent, "role": "assistant"}}
        transcript.write_text(json.dumps({"type": "user"}) + "\n" + json.dumps(line) + "\n")
        payload["transcript_path"] = str(transcript)
    elif case.host == "hermes":
        home = tmp_path / "hermes-home"
        home.mkdir()
        (home / "config.yaml").write_text(
            f"model:\n  default: {case.parent}\ndelegation:\n  model: {env['DELEGATION']}\n"
        )
        env["HERMES_HOME"] = str(home)
    elif case.parent:
        store = open_store(time.monotonic() + 30)
        store.session_put(case.host, SESSION, "parent_model", case.parent)
        store.close()
    return payload


def _golden() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_native_reply(case: Case, tmp_path: Path) -> None:
    env = {**os.environ, **dict(case.env)}
    project = _project(tmp_path, env.pop("MODE", None))
    payload = _payload(case, project, tmp_path, env)
    result = run_cli(case.host, payload, cwd=project, env=env, args=("--event", case.native))
    got = {"exit": result.exit_code, "stdout": result.stdout.decode(),
           "stderr": result.stderr.decode()}  # fmt: skip
    store = open_store(time.monotonic() + 30)
    rows = store.dispatches()
    store.close()
    actions = [r.action for r in rows]
    assert actions == ([case.action] if case.action else []), (actions, got)
    if CAPTURE:
        golden = _golden()
        golden[case.name] = got
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        return
    assert got == _golden()[case.name]
    state = Path(os.environ["HOOKBUS_STATE_DIR"])
    for path in state.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), f"the planted secret is in {path}"


def test_every_command_hook_host_with_a_spawn_tool_has_a_case() -> None:
    import hookbus.hosts
    from hookbus.hosts import HOSTS

    shipped = Path(hookbus.hosts.__file__).parent  # not a test's toy host
    covered = {c.host for c in CASES}
    with_spawns = {h for h in HOSTS if (shipped / h / "driver.py").exists()
                   and any(k == "agent" for k in load(h).tools.values())}  # fmt: skip
    assert with_spawns <= covered, sorted(with_spawns - covered)
