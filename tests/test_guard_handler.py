"""The guard as a handler, driven through the real ``hookbus run`` and ``hookbus guard``:
where the parent's model comes from, the fresh session, the options' problems, which
side decides a Claude dispatch, a store that cannot be used, and the manifests."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from hookbus.bus.context import Context
from hookbus.bus.events import Agent, SubagentStart
from hookbus.bus.host import TranscriptFacts
from hookbus.handlers.guard.handler import on_spawn, on_subagent_start
from hookbus.hosts import driver as load
from hookbus.local.store import Dispatch, open_store
from hookbus.testing import run_cli
from tests.support import hookbus_cli

SESSION = "guard-handler-session"
SONNET = "claude-sonnet-4-5-20250929"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / ".hookbus.toml").write_text('enable = ["guard"]\n')
    return root


def claude(native: str, project: Path, tool_input: dict[str, Any] | None = None,
           **fields: Any) -> dict[str, Any]:  # fmt: skip
    payload = load("claude").sample_payload(native, "Agent" if tool_input else None, tool_input,
                                            cwd=str(project), session_id=SESSION)  # fmt: skip
    payload["transcript_path"] = str(project / "no-transcript.jsonl")
    return {**payload, **fields}


def agent(model: str | None = None, subagent_type: str = "general-purpose") -> dict[str, Any]:
    spawn = {
        "description": "Find tests",
        "prompt": "List the tests.",
        "subagent_type": subagent_type,
    }
    return {**spawn, "model": model} if model else spawn


def rows() -> list[Dispatch]:
    store = open_store(time.monotonic() + 30)
    try:
        return store.dispatches()
    finally:
        store.close()


def diagnostics() -> list[dict[str, Any]]:
    path = Path(os.environ["HOOKBUS_STATE_DIR"]) / "diagnostics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def updated_model(stdout: bytes) -> object:
    return json.loads(stdout)["hookSpecificOutput"]["updatedInput"].get("model", "<dropped>")


def test_session_start_fills_the_cache_that_a_later_dispatch_is_capped_by(project: Path) -> None:
    started = run_cli("claude", claude("SessionStart", project, model=SONNET), cwd=project)
    assert (started.exit_code, started.stdout) == (0, b"")
    asked = run_cli("claude", claude("PreToolUse", project, agent("opus")), cwd=project)
    assert updated_model(asked.stdout) == "sonnet"
    (row,) = rows()
    assert (row.action, row.parent_model, row.requested_model, row.decided_model) == (
        "cap", SONNET, "opus", "sonnet")  # fmt: skip


def test_a_model_switch_moves_the_ceiling(project: Path) -> None:
    run_cli("claude", claude("SessionStart", project, model="claude-opus-4-1"), cwd=project)
    switched = claude("PostModelSwitch", project, from_model="claude-opus-4-1",
                      to_model="claude-haiku-4-5")  # fmt: skip
    assert run_cli("claude", switched, cwd=project).exit_code == 0
    asked = run_cli("claude", claude("PreToolUse", project, agent("sonnet")), cwd=project)
    assert updated_model(asked.stdout) == "haiku"


def test_without_a_cache_the_transcript_tail_names_the_parent(project: Path) -> None:
    transcript = project / "t.jsonl"
    filler = json.dumps({"type": "user", "message": {"content": "x" * 1000}}) + "\n"
    last = {"type": "assistant", "message": {"model": SONNET, "role": "assistant"}}
    # The assistant turn sits behind 2 MiB of older lines: only the tail is read.
    transcript.write_text(filler * 2000 + json.dumps(last) + "\n" + filler)
    payload = claude("PreToolUse", project, agent("opus"), transcript_path=str(transcript))
    asked = run_cli("claude", payload, cwd=project)
    assert updated_model(asked.stdout) == "sonnet"


def test_a_fresh_session_allows_with_a_diagnostic_and_fills_only_a_tier(project: Path) -> None:
    transcript = project / "t.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"content": "hi"}}) + "\n")
    for spawn in (agent("opus"), agent(subagent_type="hookbus-cheap")):
        payload = claude("PreToolUse", project, spawn, transcript_path=str(transcript))
        done = run_cli("claude", payload, cwd=project)
        assert done.exit_code == 0
    first, second = rows()
    assert (first.action, first.reasons) == ("pass", ("parent-unknown", "fresh-session"))
    assert (second.action, second.decided_model) == ("fill", "haiku")
    found = [d for d in diagnostics() if d["event"] == "parent-unknown"]
    assert len(found) == 2 and "no assistant turn yet" in found[0]["message"]


class LateWriter:
    """Claude's readers, except that the transcript's assistant turn is flushed only by
    the third read: Claude Code 2.1.332 runs PreToolUse before its writer flushes."""

    def __init__(self) -> None:
        self.reads = 0
        self.claude = load("claude")

    def project_dir(self, event: Any, environ: Any, /) -> str:
        return self.claude.project_dir(event, environ)

    def read_transcript(self, path: str, /) -> TranscriptFacts:
        self.reads += 1
        if self.reads < 3:
            return TranscriptFacts(assistant_turn=False)
        return TranscriptFacts(model=SONNET, assistant_turn=True)


def test_a_spawn_waits_for_the_turn_that_asked_for_it_to_be_written(project: Path) -> None:
    payload = claude("PreToolUse", project, agent("opus"), transcript_path="/t.jsonl")
    event = load("claude").decode(json.dumps(payload).encode())
    readers = LateWriter()
    ctx = Context(event=event, handler="guard.on_spawn", options=None, settings=None,
                  capabilities=load("claude").capabilities("PreToolUse"),
                  deadline=time.monotonic() + 30, readers=readers)  # fmt: skip
    reply = on_spawn(event, ctx)
    assert reply is not None and reply.updated_input is not None
    assert (readers.reads, reply.updated_input["model"]) == (3, "sonnet")
    (row,) = rows()
    assert (row.action, row.parent_model) == ("cap", SONNET)


def test_an_invalid_host_section_keeps_the_others_and_is_recorded(project: Path) -> None:
    (project / ".hookbus.toml").write_text(
        'enable = ["guard"]\n[handlers.guard]\nmode = "enforce"\n'
        "[handlers.guard.hosts.codex]\ntiers = 5\n"
        '[handlers.guard.hosts.claude]\ntiers = { standard = "haiku" }\n'
    )
    payload = claude("PreToolUse", project, agent(), transcript_path="")
    run_cli("claude", claude("SessionStart", project, model="claude-opus-4-1"), cwd=project)
    done = run_cli("claude", payload, cwd=project)
    assert updated_model(done.stdout) == "haiku"  # the claude section still applies
    (row,) = rows()
    assert row.reasons == ("routing-config-invalid",)
    invalid = [d for d in diagnostics() if d["event"] == "config-invalid"]
    assert invalid and invalid[0]["file"].endswith(".hookbus.toml")
    assert "codex" in invalid[0]["message"]


def test_the_spawn_module_decides_when_its_variable_names_the_plugin_root(
    project: Path, tmp_path: Path
) -> None:
    root = tmp_path / "plugin"
    root.mkdir()
    run_cli("claude", claude("SessionStart", project, model=SONNET), cwd=project)
    payload = claude("PreToolUse", project, agent("opus"))
    module = {**os.environ, "HOOKBUS_CLAUDE_SPAWN_MOD": str(root), "CLAUDE_PLUGIN_ROOT": str(root)}
    passed = run_cli("claude", payload, cwd=project, env=module)
    assert (passed.exit_code, passed.stdout) == (0, b"")
    assert rows() == []
    # A process the Bash tool starts inherits the variable, not the plugin root: it decides.
    del module["CLAUDE_PLUGIN_ROOT"]
    decided = run_cli("claude", payload, cwd=project, env=module)
    assert updated_model(decided.stdout) == "sonnet"
    assert [r.action for r in rows()] == ["cap"]


def test_mode_off_records_nothing_and_answers_nothing(project: Path) -> None:
    (project / ".hookbus.toml").write_text('enable = ["guard"]\n[handlers.guard]\nmode = "off"\n')
    run_cli("claude", claude("SessionStart", project, model=SONNET), cwd=project)
    done = run_cli("claude", claude("PreToolUse", project, agent("opus")), cwd=project)
    assert (done.exit_code, done.stdout) == (0, b"")
    assert rows() == []


def test_a_store_that_cannot_be_used_costs_the_row_not_the_decision(project: Path) -> None:
    state = Path(os.environ["HOOKBUS_STATE_DIR"])
    state.mkdir(parents=True, exist_ok=True)
    (state / "store.sqlite3").write_bytes(b"this is not a database" * 100)
    transcript = project / "t.jsonl"
    transcript.write_text(json.dumps({"type": "assistant", "message": {"model": SONNET}}) + "\n")
    payload = claude("PreToolUse", project, agent("opus"), transcript_path=str(transcript))
    done = run_cli("claude", payload, cwd=project)
    assert updated_model(done.stdout) == "sonnet"
    codes = [d["event"] for d in diagnostics()]
    assert "store-unavailable" in codes and "handler-error" not in codes


def test_cursor_subagent_start_allows_when_the_guard_itself_fails() -> None:
    event = SubagentStart(host="cursor", native="subagentStart", child=Agent(role="subagent"),
                          child_model="claude-opus-4-1", model="claude-sonnet-4-5")  # fmt: skip
    ctx = Context(event=event, handler="guard.on_subagent_start", options="not options",
                  settings=None, capabilities=load("cursor").capabilities("subagentStart"),
                  deadline=time.monotonic() + 5)  # fmt: skip
    reply = on_subagent_start(event, ctx)
    assert reply is not None and reply.decision == "allow"


def test_the_guard_command_answers_the_spawn_module(project: Path) -> None:
    request = {"host": "claude", "session_id": SESSION, "cwd": str(project), "call_id": "c1",
               "agent_type": "Explore", "model": "opus", "parent_model": SONNET,
               "prompt": "Escalation from cheap: again"}  # fmt: skip
    done = hookbus_cli(project, "guard", "--json", stdin=json.dumps(request))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"action": "cap", "model": "sonnet", "clear_model": False,
                                       "message": "", "reasons": ["over-parent"]}  # fmt: skip
    (row,) = rows()
    assert (row.call_id, row.escalation, row.decided_model) == ("c1", "cheap", "sonnet")
    refused = {**request, "agent_type": "reviewer", "parent_model": "gpt-5"}
    answer = json.loads(hookbus_cli(project, "guard", "--json", stdin=json.dumps(refused)).stdout)
    assert answer["action"] == "block" and answer["model"] is None and answer["message"]
    junk = hookbus_cli(project, "guard", "--json", stdin="{not json")
    assert junk.returncode == 2 and "unreadable request" in junk.stderr


def test_the_guard_command_has_no_opinion_once_the_guard_is_not_enabled(project: Path) -> None:
    # The installed module outlives a configuration that no longer enables the guard.
    (project / ".hookbus.toml").write_text("enable = []\n")
    request = {"host": "claude", "cwd": str(project), "agent_type": "Explore", "model": "opus",
               "parent_model": SONNET}  # fmt: skip
    done = hookbus_cli(project, "guard", "--json", stdin=json.dumps(request))
    assert (done.returncode, json.loads(done.stdout)["action"]) == (0, "pass")
    assert rows() == []


def test_the_guard_command_keeps_the_valid_host_sections(project: Path) -> None:
    (project / ".hookbus.toml").write_text(
        'enable = ["guard"]\n[handlers.guard.hosts.codex]\nmode = 5\n'
        '[handlers.guard.hosts.claude]\nmode = "warn"\n'
    )
    request = {"host": "claude", "cwd": str(project), "agent_type": "Explore", "model": "opus",
               "parent_model": SONNET}  # fmt: skip
    answer = json.loads(hookbus_cli(project, "guard", "--json", stdin=json.dumps(request)).stdout)
    assert answer["action"] == "log"
    assert "routing-config-invalid" in answer["reasons"]


@pytest.mark.parametrize(
    ("host", "event", "matcher"),
    [
        ("claude", "PreToolUse", "Agent|Task"),
        ("codex", "PreToolUse", "^(?:collaborationspawn_agent|spawn_agent)$"),
    ],
)
def test_the_manifest_registers_only_the_spawn_tools(
    project: Path, host: str, event: str, matcher: str
) -> None:
    printed = hookbus_cli(project, "manifest", "--host", host)
    assert printed.returncode == 0, printed.stderr
    groups = json.loads(printed.stdout)["hooks"][event]
    assert [g.get("matcher") for g in groups] == [matcher]


def test_cursor_registers_subagent_start_alone(project: Path) -> None:
    # Cursor's events name the parent's model: no cache to keep at session start.
    printed = hookbus_cli(project, "manifest", "--host", "cursor")
    assert sorted(json.loads(printed.stdout)["hooks"]) == ["subagentStart"]
