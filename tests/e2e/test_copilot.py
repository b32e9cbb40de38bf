"""The real GitHub Copilot CLI 1.0.102, headless and offline, with hookbus installed in
its project.

Each test scripts the model (a fake OpenAI Chat Completions API on 127.0.0.1), installs
hookbus with ``hookbus install --host copilot`` (its own ``.github/hooks/hookbus.json``)
beside a hook file of the user's own, runs ``copilot -p`` and checks what really
happened: whether the command ran (``ran_proof.txt``), what the handlers got, what the
model was told, and what hookbus wrote to its diagnostics. Copilot also runs the hooks of
``.claude/settings.json``: the last tests run a Claude install inside Copilot, alone and
beside the Copilot one.
"""

from __future__ import annotations

import datetime
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import hosts
from .conftest import GOLDEN, host_program, skip_loudly
from .copilot_host import Copilot, CopilotRun
from .harness import Workspace, capturing_goldens

pytestmark = pytest.mark.e2e

PROOF = "ran_proof.txt"
#: The user's own hook file, already in the project: a preToolUse hook that logs what it
#: got and has no opinion. Installs never touch it, and Copilot must still run it.
USERS_FILE = "mine.json"


def users_hooks(log: Path) -> dict[str, Any]:
    command = f"cat >> {log}; echo >> {log}"
    return {"version": 1, "hooks": {"preToolUse": [
        {"type": "command", "bash": command, "timeoutSec": 5}]}}  # fmt: skip


@pytest.fixture(scope="session")
def copilot_executable(pytestconfig: pytest.Config) -> Path:
    found = host_program(pytestconfig, "copilot", hosts.HOSTS["copilot"].version)
    if isinstance(found, hosts.HostUnavailable):
        skip_loudly(pytestconfig, f"Copilot CLI cannot be installed or run: {found}")
    return found


@pytest.fixture
def copilot(
    copilot_executable: Path, workspace: Workspace, golden_seen: set[str]
) -> Iterator[Copilot]:
    path = workspace.project / ".github" / "hooks" / USERS_FILE
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(users_hooks(users_log(workspace)), indent=2) + "\n")
    yield Copilot(copilot_executable, workspace)
    if capturing_goldens():
        workspace.save_goldens(GOLDEN / "copilot" / "real" / "e2e", golden_seen)


def users_log(ws: Workspace) -> Path:
    return ws.root / "mine.jsonl"


def users_calls(ws: Workspace) -> list[dict[str, Any]]:
    """What the user's own preToolUse hook got, one payload a call."""
    path = users_log(ws)
    text = path.read_text() if path.exists() else ""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def install(
    ws: Workspace, handlers: dict[str, Any], *, host: str = "copilot", users: bool = True
) -> None:
    """``hookbus install --host HOST``; the user's own hook file (``users``) is left as it was."""
    ws.install_hookbus(handlers, host=host)
    if host == "copilot":
        assert "--trust-folder" in ws.install_output  # the user is told to trust the folder
    if users:
        mine = json.loads((ws.project / ".github" / "hooks" / USERS_FILE).read_text())
        assert mine == users_hooks(users_log(ws))


def shell_turn(command: str) -> dict[str, Any]:
    return {"tool_use": {"name": "bash", "input": {"command": command, "description": "Run it"}}}


def script(marker: str, *turns: dict[str, Any]) -> dict[str, Any]:
    return {"conversations": [{"match": marker, "turns": list(turns)}]}


def tool_script(marker: str, command: str = f"echo hi | tee {PROOF}") -> dict[str, Any]:
    """The model runs ``command`` in the shell, then says it is done."""
    return script(marker, shell_turn(command), {"text": "All done."})


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["kind"] for e in events]


def stamped(event: dict[str, Any]) -> float:
    """When Copilot stamped the payload: Unix milliseconds in the camelCase dialect,
    ISO-8601 text in the PascalCase one."""
    stamp = event["raw"]["timestamp"]
    if isinstance(stamp, str):
        return datetime.datetime.fromisoformat(stamp).timestamp()
    return float(stamp) / 1000


def in_copilots_order(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` in the order Copilot stamped them: it starts the sessionStart and
    userPromptSubmitted hooks at once, so which one records first varies from run to
    run (the captured runs show both orders)."""
    return sorted(events, key=stamped)


def diagnostics_named(ws: Workspace, code: str) -> list[dict[str, Any]]:
    return [d for d in ws.diagnostics() if d.get("event") == code]


def tool_output(run: CopilotRun, marker: str) -> str:
    """What the model read back from its one tool call."""
    [output] = run.model.tool_outputs(run.model.conversation(marker)[1])
    return output


def assert_ok(run: CopilotRun) -> None:
    """Copilot succeeded, ended with its ``result`` line, and left no process behind."""
    assert run.returncode == 0, run.describe()
    assert run.result["exitCode"] == 0, run.describe()
    assert run.process.leftovers == (), run.describe()


def test_deny_blocks_the_shell_tool_and_the_model_reads_why(
    copilot: Copilot, workspace: Workspace
) -> None:
    """A deny stops the command, the model reads the reason as the tool's result, and the
    user's own hook file is left as it was and still runs."""
    reason = "E2E-DENY: echo is not allowed in this repo"
    install(workspace, {"deny_shell": {"reason": reason}})
    run = copilot.run("E2E-DENY: please run echo hi", tool_script("E2E-DENY"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    assert "after-tool" not in kinds(workspace.events())
    assert tool_output(run, "E2E-DENY") == f"Denied by preToolUse hook: {reason}"
    [mine] = users_calls(workspace)
    assert mine["toolName"] == "bash"


def test_allow_runs_the_command_with_the_exact_portable_events(
    copilot: Copilot, workspace: Workspace
) -> None:
    """The command runs, and hookbus decodes exactly the six portable events of the
    session, all of the main agent, in the session the run reports."""
    install(workspace, {})
    run = copilot.run("E2E-ALLOW: please run echo hi", tool_script("E2E-ALLOW"))

    assert_ok(run)
    assert (workspace.project / PROOF).read_text() == "hi\n"
    events = in_copilots_order(workspace.events())
    assert kinds(events) == [
        "session-start", "prompt-submit", "before-tool", "after-tool", "stop", "session-end",
    ]  # fmt: skip
    assert {e["host"] for e in events} == {"copilot"}
    assert {e["session_id"] for e in events} == {run.result["sessionId"]}
    assert {e["agent"]["role"] for e in events} == {"main"}
    for event in events[2:4]:
        assert (event["tool"]["name"], event["tool"]["kind"]) == ("bash", "shell")
        assert event["tool"]["command"] == f"echo hi | tee {PROOF}"
    assert events[3]["raw"]["toolResult"]["textResultForLlm"].startswith("hi\n")
    assert events[3]["error"] is None
    assert events[1]["prompt"] == "E2E-ALLOW: please run echo hi"
    assert events[5]["reason"] == "complete"
    assert len(users_calls(workspace)) == 1
    assert workspace.diagnostics() == []


def test_session_start_context_reaches_the_model(copilot: Copilot, workspace: Workspace) -> None:
    """Context added at session start is in the first request Copilot sends the model."""
    context = "E2E-CONTEXT-7f3a: the build command of this repo is `make ci`"
    install(workspace, {"session_context": {"text": context}})
    run = copilot.run("E2E-CONTEXT: what is the build command?", script("E2E-CONTEXT"))

    assert_ok(run)
    [first] = run.model.conversation("E2E-CONTEXT")
    assert context in json.dumps(first["messages"])


def test_keep_working_gets_one_more_turn_then_the_loop_guard_drops_it(
    copilot: Copilot, workspace: Workspace
) -> None:
    """A keep-working on agentStop makes Copilot call the model again with the reason as
    the next prompt; the second agentStop (``stop_hook_active``) is let through by the
    loop guard."""
    reason = "E2E-KEEP: run the tests before you stop"
    install(workspace, {"keep_working": {"text": reason}})
    scenario = script("E2E-KEEP", {"text": "First answer."}, {"text": "Tests pass now."})
    run = copilot.run("E2E-KEEP: fix the bug", scenario)

    assert_ok(run)
    requests = run.model.conversation("E2E-KEEP")
    assert len(requests) == 2
    assert reason in json.dumps(requests[1]["messages"][-1])
    stops = [e for e in workspace.events() if e["kind"] == "stop"]
    assert [s["stop_hook_active"] for s in stops] == [False, True]
    prompts = [e["prompt"] for e in workspace.events() if e["kind"] == "prompt-submit"]
    assert prompts == ["E2E-KEEP: fix the bug", reason]
    [dropped] = diagnostics_named(workspace, "reply-dropped")
    assert "loop guard" in dropped["message"]


def test_hung_handler_is_answered_by_hookbus_and_the_tool_runs(
    copilot: Copilot, workspace: Workspace
) -> None:
    """A handler sleeping past its 1 s is cut off by hookbus itself, long before the 10 s
    ``timeoutSec`` after which Copilot would drop the hook, and the command runs."""
    install(workspace, {"hang": None})
    run = copilot.run("E2E-HANG: please run echo hi", tool_script("E2E-HANG"))

    assert_ok(run)
    assert (workspace.project / PROOF).exists()
    tools = [e for e in workspace.events() if e["tool"]]
    assert kinds(tools) == ["before-tool", "after-tool"]
    assert tools[1]["t"] - tools[0]["t"] < 7.0
    [timeout] = diagnostics_named(workspace, "handler-timeout")
    assert timeout["handler"] == "e2e_handlers:hang"
    assert "fail-open" in timeout["message"]


def test_hung_fail_closed_handler_blocks_the_tool(copilot: Copilot, workspace: Workspace) -> None:
    """The same hung handler declared fail-closed blocks the command, and says why: the
    answer is hookbus's, since Copilot dropping a late hook would have run the tool."""
    install(workspace, {"hang_fail_closed": None})
    run = copilot.run("E2E-HANG-CLOSED: please run echo hi", tool_script("E2E-HANG-CLOSED"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    assert "did not answer in time (fail-closed)" in tool_output(run, "E2E-HANG-CLOSED")
    [timeout] = diagnostics_named(workspace, "handler-timeout")
    assert timeout["handler"] == "e2e_handlers:hang_fail_closed"


def test_a_task_subagent_is_named_in_its_start_stop_and_own_calls(
    copilot: Copilot, workspace: Workspace
) -> None:
    """``task`` is an agent tool; subagentStart and subagentStop name the child and carry
    its answer; the child's own shell call and stop are the subagent's, with the parent's
    session as its parent."""
    install(workspace, {})
    scenario = {"conversations": [
        {"match": "SUBTASK-E2E-CHILD", "turns": [
            shell_turn("echo from-subagent | tee sub_proof.txt"),
            {"text": "Subagent finished: printed from-subagent."}]},
        {"match": "E2E-AGENT", "turns": [
            {"tool_use": {"name": "task", "input": {
                "description": "Echo in subagent", "prompt": "SUBTASK-E2E-CHILD: run echo",
                "agent_type": "general-purpose", "name": "echoer"}}},
            {"text": "Main agent done."}]},
    ]}  # fmt: skip
    run = copilot.run("E2E-AGENT: delegate the echo", scenario)

    assert_ok(run)
    assert (workspace.project / "sub_proof.txt").read_text() == "from-subagent\n"
    events = workspace.events()
    session = run.result["sessionId"]
    [start] = [e for e in events if e["kind"] == "subagent-start"]
    [stop] = [e for e in events if e["kind"] == "subagent-stop"]
    child = start["child"]["id"]
    assert child and child != session
    assert start["child"] == stop["child"] == {"role": "subagent", "id": child,
                                               "type": "general-purpose"}  # fmt: skip
    assert stop["final_text"] == "Subagent finished: printed from-subagent."
    calls = [(e["kind"], e["tool"]["name"], e["agent"]["role"]) for e in events if e["tool"]]
    assert calls == [
        ("before-tool", "task", "main"), ("before-tool", "bash", "subagent"),
        ("after-tool", "bash", "subagent"), ("after-tool", "task", "main"),
    ]  # fmt: skip
    inner = next(e for e in events if e["tool"] and e["tool"]["name"] == "bash")
    assert inner["agent"]["id"] == child
    assert inner["raw"]["parentAgentId"] == session
    stops = [e["agent"]["role"] for e in events if e["kind"] == "stop"]
    assert stops == ["subagent", "main"]
    assert [e["kind"] for e in events][-1] == "session-end"
    assert workspace.diagnostics() == []


def test_a_mangled_real_payload_gets_the_no_opinion(workspace: Workspace) -> None:
    """A payload Copilot really sent, with a field of the wrong type, run through the
    installed command: Copilot's no-opinion (nothing printed, exit 0: exit 1 would
    block) and one diagnostic."""
    install(workspace, {"deny_shell": {"reason": "E2E-MANGLED"}}, users=False)
    hooks = json.loads((workspace.project / ".github" / "hooks" / "hookbus.json").read_text())
    command = hooks["hooks"]["preToolUse"][-1]["bash"]
    payload = json.loads((GOLDEN / "copilot" / "real" / "preToolUse.bash.json").read_text())
    payload.update(cwd=str(workspace.project), sessionId=42)
    done = subprocess.run(["/bin/bash", "-c", command], input=json.dumps(payload), text=True,
                          capture_output=True, cwd=workspace.project,
                          env=workspace.base_env(), timeout=60, check=False)  # fmt: skip
    assert (done.stdout, done.returncode) == ("", 0), done.stderr
    [invalid] = [d for d in workspace.diagnostics() if d["level"] != "info"]
    assert invalid["event"] == "input-invalid"
    assert "sessionId" in json.dumps(invalid)


# -- a Claude install inside Copilot ---------------------------------------------------


def claude_users_hook(ws: Workspace) -> dict[str, Any]:
    """The user's own ``.claude/settings.json`` before hookbus is installed: a PreToolUse
    hook that notes each call (and prints nothing)."""
    log = ws.root / "claude_mine.log"
    return {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": f"cat > /dev/null; echo seen >> {log}", "timeout": 5}]}]}}  # fmt: skip


def with_claude_settings(ws: Workspace) -> Path:
    path = ws.project / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(claude_users_hook(ws), indent=2) + "\n")
    return ws.root / "claude_mine.log"


def test_a_claude_install_blocks_in_copilot(copilot: Copilot, workspace: Workspace) -> None:
    """Copilot runs ``.claude/settings.json`` hooks with its PascalCase payload and
    Claude's tool names: hookbus's Claude command takes it for Copilot's and denies in
    a form Copilot acts on (the command does not run, the model reads why), and the
    user's own Claude hook still runs."""
    claude_log = with_claude_settings(workspace)
    reason = "E2E-CLAUDE-DENY: echo is not allowed in this repo"
    install(workspace, {"deny_shell": {"reason": reason}}, host="claude")
    run = copilot.run("E2E-CLAUDE-DENY: please run echo hi", tool_script("E2E-CLAUDE-DENY"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    assert tool_output(run, "E2E-CLAUDE-DENY") == f"Denied by preToolUse hook: {reason}"
    events = in_copilots_order(workspace.events())
    assert [(e["kind"], e["native"]) for e in events] == [
        ("session-start", "SessionStart"), ("prompt-submit", "UserPromptSubmit"),
        ("before-tool", "PreToolUse"), ("stop", "Stop"), ("session-end", "SessionEnd"),
    ]  # fmt: skip
    assert {e["host"] for e in events} == {"copilot"}
    assert events[2]["tool"]["name"] == "Bash"
    assert claude_log.read_text() == "seen\n"
    assert workspace.diagnostics() == []


def test_with_both_installs_each_event_is_handled_once(
    copilot: Copilot, workspace: Workspace
) -> None:
    """With the Claude and the Copilot install side by side, Copilot runs both files, yet
    each event reaches the handlers once, through the Copilot install (the Claude
    command stands aside); the command runs, and both users' own hooks still run."""
    claude_log = with_claude_settings(workspace)
    install(workspace, {}, host="claude")
    install(workspace, {})
    run = copilot.run("E2E-BOTH: please run echo hi", tool_script("E2E-BOTH"))

    assert_ok(run)
    assert (workspace.project / PROOF).read_text() == "hi\n"
    events = in_copilots_order(workspace.events())
    assert [e["native"] for e in events] == [
        "sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "agentStop",
        "sessionEnd",
    ]  # fmt: skip
    assert claude_log.read_text() == "seen\n"
    assert len(users_calls(workspace)) == 1
    assert workspace.diagnostics() == []


def test_with_both_installs_a_deny_still_blocks(copilot: Copilot, workspace: Workspace) -> None:
    """With both installs, the deny comes from the Copilot install once: the command does
    not run and the model reads the reason."""
    reason = "E2E-BOTH-DENY: echo is not allowed in this repo"
    with_claude_settings(workspace)
    install(workspace, {"deny_shell": {"reason": reason}}, host="claude")
    install(workspace, {"deny_shell": {"reason": reason}})
    run = copilot.run("E2E-BOTH-DENY: please run echo hi", tool_script("E2E-BOTH-DENY"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    assert tool_output(run, "E2E-BOTH-DENY") == f"Denied by preToolUse hook: {reason}"
    [before] = [e for e in workspace.events() if e["kind"] == "before-tool"]
    assert before["native"] == "preToolUse"


def test_a_claude_install_blocks_a_prompt_in_copilot(
    copilot: Copilot, workspace: Workspace
) -> None:
    """A prompt deny from the Claude install, given in the form Claude reads too, blocks
    the prompt in Copilot: the model is never asked, Copilot warns with the reason
    (``policy_blocked``) and exits 1."""
    reason = "E2E-CLAUDE-PROMPT: not in this repo"
    install(workspace, {"deny_prompt": {"reason": reason}}, host="claude")
    run = copilot.run("E2E-CLAUDE-PROMPT: please run echo hi", tool_script("E2E-CLAUDE-PROMPT"))

    assert run.returncode == 1, run.describe()
    assert run.result["exitCode"] == 1
    assert run.process.leftovers == (), run.describe()
    assert run.model.conversation("E2E-CLAUDE-PROMPT") == []
    assert not (workspace.project / PROOF).exists()
    [warning] = [i["data"] for i in run.items if i.get("type") == "session.warning"]
    assert (warning["warningType"], warning["message"]) == ("policy_blocked", reason)
    [prompt] = [e for e in workspace.events() if e["kind"] == "prompt-submit"]
    assert (prompt["host"], prompt["native"]) == ("copilot", "UserPromptSubmit")
