"""The real Codex CLI 0.171.0, headless and offline, with hookbus installed in its project.

Each test scripts the model (a fake OpenAI Responses API on 127.0.0.1), installs hookbus
with ``hookbus install --host codex`` into a ``.codex/hooks.json`` that already holds a
user's own hook, runs ``codex exec --json`` and checks what really happened: whether the
command ran (``ran_proof.txt``), what the handlers got, what the model was told, and what
hookbus wrote to its diagnostics.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .harness import Codex, CodexRun, Workspace

pytestmark = pytest.mark.e2e

PROOF = "ran_proof.txt"


def shell_turn(command: str) -> dict[str, Any]:
    return {"tool_use": {"name": "exec_command", "input": {"cmd": command}}}


def script(marker: str, *turns: dict[str, Any]) -> dict[str, Any]:
    return {"conversations": [{"match": marker, "turns": list(turns)}]}


def tool_script(marker: str, command: str = f"echo hi | tee {PROOF}") -> dict[str, Any]:
    """The model runs ``command`` in the shell, then says it is done."""
    return script(marker, shell_turn(command), {"text": "All done."})


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["kind"] for e in events]


def diagnostics_named(ws: Workspace, code: str) -> list[dict[str, Any]]:
    return [d for d in ws.diagnostics() if d.get("event") == code]


def with_users_hook(ws: Workspace) -> Path:
    """A ``.codex/hooks.json`` of the user's own, before hookbus is installed: a PreToolUse
    hook that notes each call in ``user_hook.log`` (and prints nothing)."""
    log = ws.root / "user_hook.log"
    hooks = {"hooks": {"PreToolUse": [{"matcher": "^Bash$", "hooks": [
        {"type": "command", "command": f"cat > /dev/null; echo seen >> {log}", "timeout": 5}]}]}}  # fmt: skip
    path = ws.project / ".codex" / "hooks.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(hooks, indent=2) + "\n")
    return log


def install(ws: Workspace, handlers: dict[str, Any]) -> Path:
    log = with_users_hook(ws)
    ws.install_hookbus(handlers, host="codex")
    assert "/hooks" in ws.install_output  # the user is told to trust them
    return log


def assert_ok(run: CodexRun) -> None:
    """Codex succeeded, finished its turn, and left no process behind."""
    assert run.returncode == 0, run.describe()
    assert any(i.get("type") == "turn.completed" for i in run.items), run.describe()
    assert run.process.leftovers == (), run.describe()


def test_allow_runs_the_command_with_the_exact_event_sequence(
    codex: Codex, workspace: Workspace
) -> None:
    """The shell call runs, the user's own hook runs beside hookbus's, and hookbus decodes
    exactly the six portable events of the session."""
    users_log = install(workspace, {})
    run = codex.run("E2E-ALLOW: please run echo hi", tool_script("E2E-ALLOW"))

    assert_ok(run)
    assert (workspace.project / PROOF).read_text() == "hi\n"
    assert users_log.read_text() == "seen\n"
    events = workspace.events()
    assert kinds(events) == [
        "session-start", "prompt-submit", "before-tool", "after-tool", "stop", "session-end",
    ]  # fmt: skip
    assert {e["host"] for e in events} == {"codex"}
    assert len({e["session_id"] for e in events}) == 1
    for event in events[2:4]:
        assert (event["tool"]["name"], event["tool"]["kind"]) == ("Bash", "shell")
        assert event["tool"]["command"] == f"echo hi | tee {PROOF}"
    assert [d for d in workspace.diagnostics() if d["level"] not in ("info",)] == []


def test_deny_blocks_the_shell_tool_and_tells_the_model(codex: Codex, workspace: Workspace) -> None:
    """A deny handler: the command does not run, and the model reads the reason."""
    reason = "E2E-DENY: echo is not allowed in this repo"
    install(workspace, {"deny_shell": {"reason": reason}})
    run = codex.run("E2E-DENY: please run echo hi", tool_script("E2E-DENY"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    second = run.model.conversation("E2E-DENY")[1]
    [output] = run.model.tool_outputs(second)
    assert "blocked by PreToolUse hook" in output and reason in output


def test_a_rewrite_runs_the_new_command(codex: Codex, workspace: Workspace) -> None:
    """A rewrite is allow + updatedInput in Codex: the rewritten command is what runs."""
    install(workspace, {"rewrite_shell": {"command": "echo rewritten > rewrite_proof.txt"}})
    run = codex.run("E2E-REWRITE: please run echo hi", tool_script("E2E-REWRITE"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    assert (workspace.project / "rewrite_proof.txt").read_text() == "rewritten\n"


def test_session_start_context_reaches_the_model(codex: Codex, workspace: Workspace) -> None:
    """Context added at session start is in the request Codex sends to the model."""
    context = "E2E-CONTEXT-7f3a: the build command of this repo is `make ci`"
    install(workspace, {"session_context": {"text": context}})
    run = codex.run("E2E-CONTEXT: what is the build command?", script("E2E-CONTEXT"))

    assert_ok(run)
    [first] = run.model.conversation("E2E-CONTEXT")
    assert "E2E-CONTEXT-7f3a" in json.dumps(first["input"])


def test_keep_working_gets_one_more_turn_then_the_loop_guard_drops_it(
    codex: Codex, workspace: Workspace
) -> None:
    """One keep-working gives one more model turn; the stop_hook_active stop is let through."""
    reason = "E2E-KEEP: run the tests before you stop"
    install(workspace, {"keep_working": {"text": reason}})
    scenario = script("E2E-KEEP", {"text": "First answer."}, {"text": "Tests pass now."})
    run = codex.run("E2E-KEEP: fix the bug", scenario)

    assert_ok(run)
    requests = run.model.conversation("E2E-KEEP")
    assert len(requests) == 2
    assert reason in json.dumps(requests[1]["input"][-1])
    stops = [e for e in workspace.events() if e["kind"] == "stop"]
    assert [s["stop_hook_active"] for s in stops] == [False, True]
    [dropped] = diagnostics_named(workspace, "reply-dropped")
    assert "loop guard" in dropped["message"]


def test_hung_handler_is_answered_by_hookbuss_deadline(codex: Codex, workspace: Workspace) -> None:
    """A handler sleeping past its 1 s is cut off by hookbus, long before Codex's 10 s
    hook timeout, and the command runs."""
    install(workspace, {"hang": None})
    run = codex.run("E2E-HANG: please run echo hi", tool_script("E2E-HANG"))

    assert_ok(run)
    assert (workspace.project / PROOF).exists()
    events = workspace.events()
    assert kinds(events)[2:4] == ["before-tool", "after-tool"]
    assert events[3]["t"] - events[2]["t"] < 7.0
    [timeout] = diagnostics_named(workspace, "handler-timeout")
    assert timeout["handler"] == "e2e_handlers:hang"


def test_hung_fail_closed_handler_blocks(codex: Codex, workspace: Workspace) -> None:
    """The same hung handler declared fail-closed blocks the command instead."""
    install(workspace, {"hang_fail_closed": None})
    run = codex.run("E2E-HANG-CLOSED: please run echo hi", tool_script("E2E-HANG-CLOSED"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    [output] = run.model.tool_outputs(run.model.conversation("E2E-HANG-CLOSED")[1])
    assert "did not answer in time (fail-closed)" in output


def test_subagent_events_name_the_child(codex: Codex, workspace: Workspace) -> None:
    """spawn_agent is an agent tool; SubagentStart/Stop name the child, whose own tool call
    runs as that subagent, in the parent's session."""
    install(workspace, {})
    scenario = {"conversations": [
        {"match": "SUBTASK-XYZ", "turns": [shell_turn("echo from-subagent"),
                                           {"text": "Subagent finished: printed from-subagent."}]},
        {"match": "E2E-AGENT", "turns": [
            {"tool_use": {"name": "multi_agent_v1.spawn_agent",
                          "input": {"message": "SUBTASK-XYZ: run echo from-subagent"}}},
            {"tool_use": {"name": "multi_agent_v1.wait_agent",
                          "input": {"targets": ["$LAST_AGENT_ID"], "timeout_ms": 20000}}},
            {"text": "Main agent done."}]},
    ]}  # fmt: skip
    run = codex.run("E2E-AGENT: delegate it", scenario)

    assert_ok(run)
    events = workspace.events()
    [start] = [e for e in events if e["kind"] == "subagent-start"]
    [stop] = [e for e in events if e["kind"] == "subagent-stop"]
    child = start["child"]["id"]
    assert child and stop["child"]["id"] == child and start["child"]["type"] == "default"
    assert stop["final_text"] == "Subagent finished: printed from-subagent."
    spawn = next(e for e in events if e["kind"] == "after-tool" and e["tool"]["kind"] == "agent")
    assert spawn["child_ids"] == [child]
    inner = next(e for e in events if e["kind"] == "before-tool" and e["tool"]["kind"] == "shell")
    assert inner["agent"] == {"role": "subagent", "id": child, "type": "default"}
    assert len({e["session_id"] for e in events}) == 1


def test_a_mangled_payload_is_answered_as_no_opinion(codex: Codex, workspace: Workspace) -> None:
    """A real PreToolUse payload cut short before hookbus reads it: no opinion, the command
    runs, and one diagnostic names the problem."""
    install(workspace, {"deny_shell": {"reason": "E2E-MANGLED"}})
    path = workspace.project / ".codex" / "hooks.json"
    hooks = json.loads(path.read_text())
    entry = hooks["hooks"]["PreToolUse"][-1]["hooks"][0]
    entry["command"] = f"head -c 60 | {{ {entry['command']}; }}"
    path.write_text(json.dumps(hooks))
    run = codex.run("E2E-MANGLED: please run echo hi", tool_script("E2E-MANGLED"))

    assert_ok(run)
    assert (workspace.project / PROOF).exists()
    [invalid] = diagnostics_named(workspace, "input-invalid")
    assert "codex" in json.dumps(invalid)


def test_the_vendored_schemas_are_those_the_binary_ships(codex_executable: Path) -> None:
    """Each schema in tests/codex_schemas is, byte for byte, in the installed native binary
    (the replies are validated against what Codex really checks)."""
    scope = codex_executable.resolve().parents[2]  # node_modules/@openai, from codex/bin/codex.js
    [binary] = [p for p in scope.glob("codex-linux-*/vendor/*/bin/codex") if p.is_file()]
    shipped = binary.read_bytes()
    schemas = sorted((Path(__file__).parents[1] / "codex_schemas").glob("*.schema.json"))
    assert len(schemas) == 23
    for schema in schemas:
        assert schema.read_bytes().removesuffix(b"\n") in shipped, schema.name
