"""The real Qwen Code 0.24.4, headless and offline, with hookbus installed in its project.

Each test scripts the model (a fake OpenAI Chat Completions server on 127.0.0.1),
installs hookbus with ``hookbus install --host qwen`` next to a hook of the user's own,
runs Qwen headless (``cli.js PROMPT``, under the pinned Node 22) and checks what happened:
whether the command ran (``ran_proof.txt``), what the handlers got, what the model was
told, and what hookbus wrote to its diagnostics.

Not tested, because headless Qwen cannot show it: ``SessionEnd`` (0.24.4 fires it only
when an interactive session exits, on ``/clear`` and from its ACP server, never after a
headless prompt), ``PreCompact`` (only when the context is compressed) and
``PermissionRequest`` (``--approval-mode yolo`` asks nothing; without it a headless run
refuses the tool before any hook).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from . import hosts
from .conftest import GOLDEN, host_program, skip_loudly
from .harness import Workspace, capturing_goldens
from .qwen_host import Qwen, QwenRun

pytestmark = pytest.mark.e2e

PROOF = "ran_proof.txt"
#: The user's own PreToolUse hook, already in the project's settings: it logs what it
#: got and has no opinion. Every install must keep it, and Qwen must still run it.
USERS_HOOK = {
    "matcher": "run_shell_command",
    "hooks": [{"type": "command", "name": "mine",
               "command": 'cat >> "$QWEN_PROJECT_DIR/mine.jsonl"; echo >> '
                          '"$QWEN_PROJECT_DIR/mine.jsonl"',
               "timeout": 5000}],
}  # fmt: skip

#: A user's hook that logs every UserPromptSubmit Qwen fires.
PROMPT_LOGGER = {
    "hooks": [{"type": "command",
               "command": 'cat >> "$QWEN_PROJECT_DIR/prompts.jsonl"; echo >> '
                          '"$QWEN_PROJECT_DIR/prompts.jsonl"'}],
}  # fmt: skip


@pytest.fixture(scope="session")
def qwen_executable(pytestconfig: pytest.Config) -> Path:
    found = host_program(pytestconfig, "qwen", hosts.HOSTS["qwen"].version)
    if isinstance(found, hosts.HostUnavailable):
        skip_loudly(pytestconfig, f"Qwen Code cannot be installed or run: {found}")
    return found


@pytest.fixture
def qwen(qwen_executable: Path, workspace: Workspace, golden_seen: set[str]) -> Iterator[Qwen]:
    settings = workspace.project / ".qwen" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [USERS_HOOK]}}, indent=2) + "\n")
    # Installed already (qwen_executable): this only adds the pinned Node in front.
    yield Qwen(hosts.command("qwen", hosts.HOSTS["qwen"].version), workspace)
    if capturing_goldens():
        workspace.save_goldens(GOLDEN / "qwen" / "real", golden_seen)


def install(ws: Workspace, handlers: dict[str, Any]) -> None:
    ws.install_hookbus(handlers, host="qwen")


def shell_turn(command: str) -> dict[str, Any]:
    return {"tool_use": {"name": "run_shell_command",
                         "input": {"command": command, "description": "Run it"}}}  # fmt: skip


def script(marker: str, *turns: dict[str, Any]) -> dict[str, Any]:
    return {"conversations": [{"match": marker, "turns": list(turns)}]}


def tool_script(marker: str, command: str = f"echo hi | tee {PROOF}") -> dict[str, Any]:
    """The model runs ``command`` in the shell, then says it is done."""
    return script(marker, shell_turn(command), {"text": "All done."})


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["kind"] for e in events]


def tool_output(run: QwenRun, marker: str) -> str:
    """What the model was told of its one tool call (the request after it)."""
    [output] = run.model.tool_outputs(run.model.conversation(marker)[1])
    return output


def diagnostics_named(ws: Workspace, code: str) -> list[dict[str, Any]]:
    return [d for d in ws.diagnostics() if d.get("event") == code]


def assert_ok(run: QwenRun) -> None:
    """Qwen succeeded and left no process behind (hook processes included)."""
    assert run.returncode == 0, run.describe()
    assert run.process.leftovers == (), run.describe()


def test_deny_blocks_the_shell_tool_and_the_model_reads_why(
    qwen: Qwen, workspace: Workspace
) -> None:
    """hookbus's deny (``hookSpecificOutput.permissionDecision``) stops the command, the
    model reads exactly the reason as the tool's result, and the user's own hook is kept
    in the file and still runs. Qwen stamps ``$version`` into the file as it starts;
    ``hookbus verify`` still finds its entries up to date."""
    reason = "E2E-DENY: echo is not allowed in this repo"
    install(workspace, {"deny_shell": {"reason": reason}})
    settings = json.loads((workspace.project / ".qwen" / "settings.json").read_text())
    assert settings["hooks"]["PreToolUse"][0] == USERS_HOOK
    run = qwen.run("E2E-DENY: please run echo hi", tool_script("E2E-DENY"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    assert "after-tool" not in kinds(workspace.events())  # nor PostToolUseFailure
    assert tool_output(run, "E2E-DENY") == reason
    [mine] = (workspace.project / "mine.jsonl").read_text().splitlines()
    assert json.loads(mine)["tool_name"] == "run_shell_command"
    assert workspace.diagnostics() == []
    settings = json.loads((workspace.project / ".qwen" / "settings.json").read_text())
    assert settings["$version"] == 4
    verify = subprocess.run([sys.executable, "-m", "hookbus", "verify", "--host", "qwen"],
                            cwd=workspace.project, env=workspace.base_env(), capture_output=True,
                            text=True, timeout=60, check=False)  # fmt: skip
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_allow_runs_the_command_with_the_exact_portable_events(
    qwen: Qwen, workspace: Workspace
) -> None:
    """The command runs, and hookbus decodes exactly the portable events of a headless
    session: no session end, and the second UserPromptSubmit (the tool results going
    back, ``prompt`` empty: kind ``other``) reaches no handler, not even one of ``other``
    (hookbus routes UserPromptSubmit to ``prompt-submit`` handlers)."""
    settings = workspace.project / ".qwen" / "settings.json"
    users = json.loads(settings.read_text())
    users["hooks"]["UserPromptSubmit"] = [PROMPT_LOGGER]  # shows what Qwen fired
    settings.write_text(json.dumps(users))
    install(workspace, {"record_other": {"path": str(workspace.events_path)}})
    run = qwen.run("E2E-ALLOW: please run echo hi", tool_script("E2E-ALLOW"))

    assert_ok(run)
    assert (workspace.project / PROOF).read_text() == "hi\n"
    fired = (workspace.project / "prompts.jsonl").read_text().splitlines()
    assert [json.loads(line)["prompt"] for line in fired] == ["E2E-ALLOW: please run echo hi", ""]
    natives = [e["native"] for e in workspace.events(other=True)]
    assert natives == ["SessionStart", "Notification", "UserPromptSubmit", "PreToolUse",
                       "PostToolUse", "Stop"]  # fmt: skip
    events = workspace.events()
    assert kinds(events) == ["session-start", "prompt-submit", "before-tool", "after-tool",
                             "stop"]  # fmt: skip
    assert {e["host"] for e in events} == {"qwen"}
    assert {e["session_id"] for e in events} == {run.result["session_id"]}
    assert {e["agent"]["role"] for e in events} == {"main"}
    assert events[0]["source"] == "startup"
    assert events[1]["prompt"] == "E2E-ALLOW: please run echo hi"
    before, after = events[2:4]
    for event in (before, after):
        assert event["tool"]["kind"] == "shell"
        assert event["tool"]["command"] == f"echo hi | tee {PROOF}"
    assert before["tool"]["call_id"] == after["tool"]["call_id"] is not None
    assert "Output: hi" in after["raw"]["tool_response"]["llmContent"]
    assert after["error"] is None
    assert events[4]["last_message"] == "All done." == run.result["result"]
    assert events[4]["stop_hook_active"] is False
    assert workspace.diagnostics() == []


def test_session_start_context_reaches_the_model(qwen: Qwen, workspace: Workspace) -> None:
    """Context added at session start is in the system message of the first request."""
    context = "E2E-CONTEXT-7f3a: the build command of this repo is `make ci`"
    install(workspace, {"session_context": {"text": context}})
    run = qwen.run("E2E-CONTEXT: what is the build command?", script("E2E-CONTEXT"))

    assert_ok(run)
    first = run.model.conversation("E2E-CONTEXT")[0]
    [system] = [m for m in first["messages"] if m["role"] == "system"]
    assert f"SessionStart additional context:\n{context}\n" in system["content"]


def test_keep_working_gets_one_more_turn_then_the_loop_guard_drops_it(
    qwen: Qwen, workspace: Workspace
) -> None:
    """A keep-working on Stop (``decision: block``) sends its reason to the model as a new
    user message, which Qwen also runs through UserPromptSubmit; the second Stop
    (``stop_hook_active``) is let through by the loop guard."""
    reason = "E2E-KEEP: run the tests before you stop"
    install(workspace, {"keep_working": {"text": reason}})
    scenario = script("E2E-KEEP", {"text": "First answer."}, {"text": "Tests pass now."})
    run = qwen.run("E2E-KEEP: fix the bug", scenario)

    assert_ok(run)
    requests = run.model.conversation("E2E-KEEP")
    assert len(requests) == 2
    assert requests[1]["messages"][-1] == {"role": "user",
                                           "content": [{"type": "text", "text": reason}]}  # fmt: skip
    events = workspace.events()
    assert kinds(events) == ["session-start", "prompt-submit", "stop", "prompt-submit", "stop"]
    assert events[3]["prompt"] == reason
    assert [e["stop_hook_active"] for e in events if e["kind"] == "stop"] == [False, True]
    # The headless result joins the texts of every model turn of the prompt.
    assert run.result["result"] == "First answer.Tests pass now."
    [dropped] = diagnostics_named(workspace, "reply-dropped")
    assert "loop guard" in dropped["message"]


def test_hung_handler_is_answered_by_hookbus_and_the_tool_runs(
    qwen: Qwen, workspace: Workspace
) -> None:
    """A handler sleeping past its 1 s timeout is cut off by hookbus itself (not by
    Qwen's 10 s entry timeout, which would drop the hook), and the command runs."""
    install(workspace, {"hang": None})
    run = qwen.run("E2E-HANG: please run echo hi", tool_script("E2E-HANG"))

    assert_ok(run)
    assert (workspace.project / PROOF).exists()
    events = workspace.events()
    assert kinds(events)[2:4] == ["before-tool", "after-tool"]
    [timeout] = diagnostics_named(workspace, "handler-timeout")
    assert timeout["handler"] == "e2e_handlers:hang"
    assert "fail-open" in timeout["message"]
    # hookbus gave up on it within a few seconds of the hook's start, far inside Qwen's 10 s.
    gave_up = datetime.fromisoformat(timeout["timestamp"]).timestamp()
    assert gave_up - events[2]["t"] < 8


def test_hung_fail_closed_handler_blocks_the_tool(qwen: Qwen, workspace: Workspace) -> None:
    """The same hung handler declared fail-closed blocks the command, and says why."""
    install(workspace, {"hang_fail_closed": None})
    run = qwen.run("E2E-HANG-CLOSED: please run echo hi", tool_script("E2E-HANG-CLOSED"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    assert "did not answer in time (fail-closed)" in tool_output(run, "E2E-HANG-CLOSED")
    [timeout] = diagnostics_named(workspace, "handler-timeout")
    assert timeout["handler"] == "e2e_handlers:hang_fail_closed"


def test_a_subagents_events_name_it(qwen: Qwen, workspace: Workspace) -> None:
    """The ``agent`` tool (in the foreground) fires SubagentStart and SubagentStop in the
    main agent, naming the child; the child's own shell call is of that subagent, in the
    parent's session."""
    install(workspace, {})
    scenario = {"conversations": [
        {"match": "SUBTASK-E2E-CHILD", "turns": [
            shell_turn("echo from-subagent | tee sub_proof.txt"),
            {"text": "Subagent printed from-subagent."},
        ]},
        {"match": "E2E-AGENT", "turns": [
            {"tool_use": {"name": "agent", "input": {
                "description": "Run echo", "prompt": "SUBTASK-E2E-CHILD: run echo",
                "subagent_type": "general-purpose", "run_in_background": False}}},
            {"text": "Main agent done."},
        ]},
    ]}  # fmt: skip
    run = qwen.run("E2E-AGENT: delegate the echo", scenario)

    assert_ok(run)
    assert (workspace.project / "sub_proof.txt").exists()
    events = workspace.events()
    assert [(e["kind"], e["tool"] and e["tool"]["name"]) for e in events] == [
        ("session-start", None), ("prompt-submit", None), ("before-tool", "agent"),
        ("subagent-start", None), ("before-tool", "run_shell_command"),
        ("after-tool", "run_shell_command"), ("subagent-stop", None), ("after-tool", "agent"),
        ("stop", None),
    ]  # fmt: skip
    assert {e["session_id"] for e in events} == {run.result["session_id"]}
    start, stop = events[3], events[6]
    child = start["child"]
    assert child["role"] == "subagent"
    assert child["type"] == "general-purpose"
    assert stop["child"] == child
    assert stop["final_text"] == "Subagent printed from-subagent."
    # The child's own calls name it by id (Qwen sends no agent_type there).
    assert [e["agent"] for e in events[4:6]] == [{**child, "type": None}] * 2
    main = [e for i, e in enumerate(events) if i not in (4, 5)]
    assert {e["agent"]["role"] for e in main} == {"main"}
    assert events[2]["tool"]["kind"] == "agent"
    assert workspace.diagnostics() == []


def test_a_mangled_real_payload_gets_the_no_opinion(workspace: Workspace) -> None:
    """A payload Qwen really sent, with a field of the wrong type, run through the
    installed command: Qwen's no-opinion (nothing printed, exit 0) and one diagnostic."""
    install(workspace, {})
    hooks = json.loads((workspace.project / ".qwen" / "settings.json").read_text())["hooks"]
    command = hooks["PreToolUse"][-1]["hooks"][0]["command"]
    payload = json.loads(
        (GOLDEN / "qwen" / "real" / "PreToolUse.run_shell_command.json").read_text()
    )
    payload.update(cwd=str(workspace.project), tool_input="echo hi")
    env = {**workspace.base_env(), "QWEN_PROJECT_DIR": str(workspace.project)}
    done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), text=True,
                          capture_output=True, cwd=workspace.project, env=env, timeout=60,
                          check=False)  # fmt: skip
    assert (done.stdout, done.returncode) == ("", 0), done.stderr
    assert [d["event"] for d in workspace.diagnostics() if d["level"] != "info"] == [
        "input-invalid"
    ]
