"""The real Gemini CLI 0.61.0, headless and offline, with hookbus installed in its project.

Each test scripts the model (a fake Gemini API on 127.0.0.1), installs hookbus with
``hookbus install --host gemini`` next to a hook of the user's own, runs ``gemini -p`` and
checks what really happened: whether the command ran (``ran_proof.txt``), what the
handlers got, what the model was told, and what hookbus wrote to its diagnostics.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import hosts
from .conftest import GOLDEN, host_program, skip_loudly
from .gemini_host import Gemini, GeminiRun
from .harness import Workspace, capturing_goldens

pytestmark = pytest.mark.e2e

PROOF = "ran_proof.txt"
#: The user's own BeforeTool hook, already in the project's settings: it logs what it got
#: and has no opinion. Every install must keep it, and Gemini must still run it.
USERS_HOOK = {
    "matcher": "run_shell_command",
    "hooks": [{"type": "command", "name": "mine",
               "command": 'cat >> "$GEMINI_PROJECT_DIR/mine.jsonl"; echo >> '
                          '"$GEMINI_PROJECT_DIR/mine.jsonl"; echo "{}"',
               "timeout": 5000}],
}  # fmt: skip


@pytest.fixture(scope="session")
def gemini_executable(pytestconfig: pytest.Config) -> Path:
    found = host_program(pytestconfig, "gemini", hosts.HOSTS["gemini"].version)
    if isinstance(found, hosts.HostUnavailable):
        skip_loudly(pytestconfig, f"Gemini CLI cannot be installed or run: {found}")
    return found


@pytest.fixture
def gemini(
    gemini_executable: Path, workspace: Workspace, golden_seen: set[str]
) -> Iterator[Gemini]:
    settings = workspace.project / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"hooks": {"BeforeTool": [USERS_HOOK]}}, indent=2) + "\n")
    yield Gemini(gemini_executable, workspace)
    if capturing_goldens():
        workspace.save_goldens(GOLDEN / "gemini" / "real", golden_seen)


def install(ws: Workspace, handlers: dict[str, Any]) -> None:
    ws.install_hookbus(handlers, host="gemini")


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


def function_responses(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The function responses of a model request's last content."""
    parts = body["contents"][-1]["parts"]
    return [p["functionResponse"] for p in parts if "functionResponse" in p]


def diagnostics_named(ws: Workspace, code: str) -> list[dict[str, Any]]:
    return [d for d in ws.diagnostics() if d.get("event") == code]


def assert_ok(run: GeminiRun) -> None:
    """Gemini succeeded and left no process behind (hook processes included)."""
    assert run.returncode == 0, run.describe()
    assert run.process.leftovers == (), run.describe()


def test_deny_blocks_the_shell_tool_and_the_model_reads_why(
    gemini: Gemini, workspace: Workspace
) -> None:
    """A deny stops the command, the model reads the reason as the tool's error, and the
    user's own hook is kept in the file and still runs."""
    reason = "E2E-DENY: echo is not allowed in this repo"
    install(workspace, {"deny_shell": {"reason": reason}})
    settings = json.loads((workspace.project / ".gemini" / "settings.json").read_text())
    assert settings["hooks"]["BeforeTool"][0] == USERS_HOOK
    run = gemini.run("E2E-DENY: please run echo hi", tool_script("E2E-DENY"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    assert "after-tool" not in kinds(workspace.events())
    [response] = function_responses(run.model.conversation("E2E-DENY")[1])
    assert response["name"] == "run_shell_command"
    assert f"Tool execution blocked: {reason}" in json.dumps(response["response"])
    [mine] = (workspace.project / "mine.jsonl").read_text().splitlines()
    assert json.loads(mine)["tool_name"] == "run_shell_command"


def test_allow_runs_the_command_with_the_exact_portable_events(
    gemini: Gemini, workspace: Workspace
) -> None:
    """The command runs, and hookbus decodes exactly the portable events of the session:
    PreCompress before each model turn, the stop, the session's end."""
    install(workspace, {})
    run = gemini.run("E2E-ALLOW: please run echo hi", tool_script("E2E-ALLOW"))

    assert_ok(run)
    assert (workspace.project / PROOF).read_text() == "hi\n"
    events = workspace.events()
    assert kinds(events) == [
        "session-start", "prompt-submit", "pre-compact", "before-tool", "after-tool",
        "pre-compact", "stop", "session-end",
    ]  # fmt: skip
    assert {e["host"] for e in events} == {"gemini"}
    assert {e["session_id"] for e in events} == {run.output["session_id"]}
    for event in events[3:5]:
        assert event["tool"]["kind"] == "shell"
        assert event["tool"]["command"] == f"echo hi | tee {PROOF}"
        assert event["agent"]["role"] == "unknown"
    assert "Output: hi" in events[4]["raw"]["tool_response"]["llmContent"]
    assert events[4]["error"] is None
    assert events[6]["last_message"] == "All done."
    assert events[1]["prompt"] == "E2E-ALLOW: please run echo hi"
    assert workspace.diagnostics() == []


def test_session_start_context_reaches_the_model(gemini: Gemini, workspace: Workspace) -> None:
    """Context added at session start is in the first request Gemini sends the model."""
    context = "E2E-CONTEXT-7f3a: the build command of this repo is `make ci`"
    install(workspace, {"session_context": {"text": context}})
    run = gemini.run("E2E-CONTEXT: what is the build command?", script("E2E-CONTEXT"))

    assert_ok(run)
    [first] = run.model.conversation("E2E-CONTEXT")
    assert f"<hook_context>{context}</hook_context>" in json.dumps(first["contents"])


def test_keep_working_gets_one_more_turn_then_the_loop_guard_drops_it(
    gemini: Gemini, workspace: Workspace
) -> None:
    """One keep-working on AfterAgent sends its reason as a new prompt; the second
    AfterAgent (``stop_hook_active``) is let through by the loop guard."""
    reason = "E2E-KEEP: run the tests before you stop"
    install(workspace, {"keep_working": {"text": reason}})
    scenario = script("E2E-KEEP", {"text": "First answer."}, {"text": "Tests pass now."})
    run = gemini.run("E2E-KEEP: fix the bug", scenario)

    assert_ok(run)
    requests = run.model.conversation("E2E-KEEP")
    assert len(requests) == 2
    assert requests[1]["contents"][-1] == {"role": "user", "parts": [{"text": reason}]}
    stops = [e for e in workspace.events() if e["kind"] == "stop"]
    assert [s["stop_hook_active"] for s in stops] == [False, True]
    assert "Tests pass now." in run.output["response"]
    [dropped] = diagnostics_named(workspace, "reply-dropped")
    assert "loop guard" in dropped["message"]


def test_hung_handler_is_answered_by_hookbus_and_the_tool_runs(
    gemini: Gemini, workspace: Workspace
) -> None:
    """A handler sleeping past its 1 s timeout is cut off by hookbus itself (not by
    Gemini's 10 s entry timeout), and the command runs."""
    install(workspace, {"hang": None})
    run = gemini.run("E2E-HANG: please run echo hi", tool_script("E2E-HANG"))

    assert_ok(run)
    assert (workspace.project / PROOF).exists()
    events = workspace.events()
    assert kinds(events)[3:5] == ["before-tool", "after-tool"]
    [timeout] = diagnostics_named(workspace, "handler-timeout")
    assert timeout["handler"] == "e2e_handlers:hang"
    assert "fail-open" in timeout["message"]


def test_hung_fail_closed_handler_blocks_the_tool(gemini: Gemini, workspace: Workspace) -> None:
    """The same hung handler declared fail-closed blocks the command, and says why."""
    install(workspace, {"hang_fail_closed": None})
    run = gemini.run("E2E-HANG-CLOSED: please run echo hi", tool_script("E2E-HANG-CLOSED"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    [response] = function_responses(run.model.conversation("E2E-HANG-CLOSED")[1])
    assert "did not answer in time (fail-closed)" in json.dumps(response["response"])
    [timeout] = diagnostics_named(workspace, "handler-timeout")
    assert timeout["handler"] == "e2e_handlers:hang_fail_closed"


def test_a_mangled_real_payload_gets_the_no_opinion(workspace: Workspace) -> None:
    """A payload Gemini really sent, with a field of the wrong type, run through the
    installed command: Gemini's no-opinion (``{}``, exit 0) and one diagnostic."""
    install(workspace, {})
    hooks = json.loads((workspace.project / ".gemini" / "settings.json").read_text())["hooks"]
    command = hooks["BeforeTool"][-1]["hooks"][0]["command"]
    payload = json.loads(
        (GOLDEN / "gemini" / "real" / "BeforeTool.run_shell_command.json").read_text()
    )
    payload.update(cwd=str(workspace.project), tool_input="echo hi")
    env = {**workspace.base_env(), "GEMINI_PROJECT_DIR": str(workspace.project)}
    done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), text=True,
                          capture_output=True, cwd=workspace.project, env=env, timeout=60,
                          check=False)  # fmt: skip
    assert (done.stdout, done.returncode) == ("{}\n", 0), done.stderr
    assert [d["event"] for d in workspace.diagnostics() if d["level"] != "info"] == [
        "input-invalid"
    ]
    assert os.path.exists(workspace.state)


def test_model_events_reach_a_handler_that_names_them_and_change_nothing(
    gemini: Gemini, workspace: Workspace
) -> None:
    """BeforeModel, BeforeToolSelection and AfterModel reach a handler that names them,
    with an unknown agent; hookbus's silence on BeforeToolSelection leaves the request's
    tool config alone (any output there would rewrite it), so the command still runs."""
    install(workspace, {"record_model": {"path": str(workspace.events_path)}})
    run = gemini.run("E2E-MODEL: please run echo hi", tool_script("E2E-MODEL"))

    assert_ok(run)
    assert (workspace.project / PROOF).exists()
    others = [e for e in workspace.events(other=True) if e["kind"] == "other"]
    assert {e["native"] for e in others} == {"BeforeModel", "BeforeToolSelection", "AfterModel"}
    assert {e["agent"]["role"] for e in others} == {"unknown"}
    for body in run.model.conversation("E2E-MODEL"):
        assert "allowedFunctionNames" not in json.dumps(body.get("toolConfig", {}))
        assert body["tools"][0]["functionDeclarations"]


def test_a_subagents_tool_calls_are_of_an_unknown_agent(
    gemini: Gemini, workspace: Workspace
) -> None:
    """``invoke_agent`` is a before-tool and after-tool of kind ``agent``; the subagent's
    own shell call runs the same hooks, with the parent's session and an unknown agent."""
    install(workspace, {})
    scenario = {"conversations": [
        {"match": "SUBTASK-E2E-CHILD", "turns": [
            shell_turn("echo from-subagent | tee sub_proof.txt"),
            {"tool_use": {"name": "complete_task",
                          "input": {"result": {"response": "Subagent printed from-subagent."}}}},
        ]},
        {"match": "E2E-AGENT", "turns": [
            {"tool_use": {"name": "invoke_agent", "input": {
                "agent_name": "generalist", "prompt": "SUBTASK-E2E-CHILD: run echo"}}},
            {"text": "Main agent done."},
        ]},
    ]}  # fmt: skip
    run = gemini.run("E2E-AGENT: delegate the echo", scenario,
                     tools=("run_shell_command", "invoke_agent"))  # fmt: skip

    assert_ok(run)
    assert (workspace.project / "sub_proof.txt").exists()
    tools = [(e["kind"], e["tool"]["name"]) for e in workspace.events() if e["tool"]]
    assert tools == [
        ("before-tool", "invoke_agent"), ("before-tool", "run_shell_command"),
        ("after-tool", "run_shell_command"), ("before-tool", "complete_task"),
        ("after-tool", "complete_task"), ("after-tool", "invoke_agent"),
    ]  # fmt: skip
    calls = [e for e in workspace.events() if e["tool"]]
    assert {e["agent"]["role"] for e in calls} == {"unknown"}
    assert {e["session_id"] for e in workspace.events()} == {run.output["session_id"]}
    assert calls[0]["tool"]["kind"] == "agent"
    assert workspace.diagnostics() == []


def test_a_rewrite_replaces_the_whole_input(gemini: Gemini, workspace: Workspace) -> None:
    """``hookSpecificOutput.tool_input`` replaces the arguments in Gemini 0.61.0 (its docs
    say "merges"): the model's ``dir_path`` of a folder that does not exist is gone, so
    the rewritten command runs in the project."""
    install(workspace, {"rewrite_shell": {"command": f"echo rewritten | tee {PROOF}"}})
    turn = {"tool_use": {"name": "run_shell_command", "input": {
        "command": "echo original", "description": "Run it", "dir_path": "no-such-folder"}}}  # fmt: skip
    run = gemini.run("E2E-REWRITE: please run echo", script("E2E-REWRITE", turn, {"text": "ok"}))

    assert_ok(run)
    assert (workspace.project / PROOF).read_text() == "rewritten\n"
    [response] = function_responses(run.model.conversation("E2E-REWRITE")[1])
    assert "rewritten" in json.dumps(response["response"])
