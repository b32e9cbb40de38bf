"""The real Cline CLI 3.0.65, headless and offline, with hookbus installed in its project.

Each test scripts the model (a fake OpenAI Chat Completions API on 127.0.0.1), installs
hookbus with ``hookbus install --host cline`` into a ``.clinerules/hooks/`` that already
holds a hook of the user's own, runs ``cline --json`` and checks what really happened:
whether the command ran (``ran_proof.txt``), what the handlers got, what the model was
told, and what hookbus wrote to its diagnostics.

Cline has no per-tool deny: hookbus's deny is a ``cancel``, which ends the whole task
(``finishReason: aborted``) with no further model request, so no test can see the model
read a reason. Its lifecycle hooks run detached with their output unread: session-start
context never reaches the model (a test pins that), and there is no keep-working to test
(``docs/hosts/cline.md``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import hosts
from .cline_host import Cline, ClineRun, authenticate
from .conftest import GOLDEN, host_program, skip_loudly
from .harness import Workspace, capturing_goldens

pytestmark = pytest.mark.e2e

PROOF = "ran_proof.txt"
#: The user's own PreToolUse hook, already in the project. Cline 3.0.65 runs every file
#: named after the event with a known extension (``PreToolUse``, ``PreToolUse.sh``, ...;
#: ``listHookConfigFiles``), so it sits beside hookbus's ``PreToolUse``, which install
#: must leave alone and Cline must still run. It notes each payload and prints nothing.
USERS_HOOK = "PreToolUse.sh"


def users_hook_text(log: Path) -> str:
    return f'#!/bin/sh\ncat >> "{log}"; echo >> "{log}"\n'


@pytest.fixture(scope="session")
def cline_executable(pytestconfig: pytest.Config) -> Path:
    found = host_program(pytestconfig, "cline", hosts.HOSTS["cline"].version)
    if isinstance(found, hosts.HostUnavailable):
        skip_loudly(pytestconfig, f"Cline CLI cannot be installed or run: {found}")
    return found


def hooks_dir(ws: Workspace) -> Path:
    return ws.project / ".clinerules" / "hooks"


def users_log(ws: Workspace) -> Path:
    return ws.root / "mine.jsonl"


@pytest.fixture(scope="session")
def cline_providers(cline_executable: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    return authenticate(cline_executable, tmp_path_factory.mktemp("cline-auth"))


@pytest.fixture
def cline(
    cline_executable: Path, cline_providers: str, workspace: Workspace, golden_seen: set[str]
) -> Iterator[Cline]:
    mine = hooks_dir(workspace) / USERS_HOOK
    mine.parent.mkdir(parents=True)
    mine.write_text(users_hook_text(users_log(workspace)))
    mine.chmod(0o755)
    yield Cline(cline_executable, workspace, cline_providers)
    if capturing_goldens():
        workspace.save_goldens(GOLDEN / "cline" / "real", golden_seen)


def install(ws: Workspace, handlers: dict[str, Any]) -> None:
    ws.install_hookbus(handlers, host="cline")
    assert (hooks_dir(ws) / USERS_HOOK).read_text() == users_hook_text(users_log(ws))


def shell_turn(command: str) -> dict[str, Any]:
    return {"tool_use": {"name": "run_commands", "input": {"commands": [command]}}}


def script(marker: str, *turns: dict[str, Any]) -> dict[str, Any]:
    return {"conversations": [{"match": marker, "turns": list(turns)}]}


def tool_script(marker: str, command: str = f"echo hi | tee {PROOF}") -> dict[str, Any]:
    """The model runs ``command`` in the shell, then says it is done."""
    return script(marker, shell_turn(command), {"text": "All done."})


def timeline(ws: Workspace) -> list[dict[str, Any]]:
    """What the recorder got, in the order Cline sent it (the payload's ``timestamp``, ISO
    8601 to the millisecond). Not the order recorded: a detached hook (TaskStart) can be
    slower to start than the next, waited-for one (PreToolUse, 0.1 s later)."""
    return sorted(ws.events(), key=lambda e: str(e["raw"]["timestamp"]))


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["kind"] for e in events]


def diagnostics_named(ws: Workspace, code: str) -> list[dict[str, Any]]:
    return [d for d in ws.diagnostics() if d.get("event") == code]


def stop_errors(ws: Workspace) -> list[str]:
    """The reasons Cline logged for stopping the agent loop (``ControlledStopError``): the
    one place a cancel's ``errorMessage`` is kept (neither the model nor ``--json`` get it)."""
    log = ws.home / ".cline" / "data" / "logs" / "cline.log"
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    return [
        line["errorMessage"] for line in lines if line.get("errorName") == "ControlledStopError"
    ]


def assert_ok(run: ClineRun, finish: str = "completed") -> None:
    """Cline exited 0 with ``finish`` as its run's reason, and left no process behind:
    none of its group, no detached hook or hub daemon."""
    assert run.returncode == 0, run.describe()
    assert run.result["finishReason"] == finish, run.describe()
    assert (run.process.leftovers, run.detached) == ((), ()), run.describe()


def test_deny_cancels_the_task_before_the_command_runs(cline: Cline, workspace: Workspace) -> None:
    """A deny becomes Cline's cancel: the command does not run, the task ends with no
    further model request (the model is never told), the session ends, and the user's own
    PreToolUse file is kept and still runs."""
    reason = "E2E-DENY: echo is not allowed in this repo"
    install(workspace, {"deny_shell": {"reason": reason}})
    run = cline.run("E2E-DENY: please run echo hi", tool_script("E2E-DENY"))

    assert_ok(run, "aborted")
    assert not (workspace.project / PROOF).exists()
    assert len(run.model.conversation("E2E-DENY")) == 1
    assert reason not in run.process.stdout
    assert stop_errors(workspace) == [reason]
    assert kinds(timeline(workspace)) == ["session-start", "before-tool", "session-end"]
    [degraded] = diagnostics_named(workspace, "reply-degraded")
    assert "deny became cancel" in degraded["message"]
    [mine] = users_log(workspace).read_text().splitlines()
    assert json.loads(mine)["tool_call"]["input"] == {"commands": [f"echo hi | tee {PROOF}"]}


def test_allow_runs_the_command_with_the_exact_portable_events(
    cline: Cline, workspace: Workspace
) -> None:
    """The command runs, and hookbus decodes exactly the portable events of a headless
    task: TaskStart, the tool's two, TaskComplete (no UserPromptSubmit for the prompt of
    the command line, no SessionShutdown after a completed task)."""
    install(workspace, {})
    run = cline.run("E2E-ALLOW: please run echo hi", tool_script("E2E-ALLOW"))

    assert_ok(run)
    assert (workspace.project / PROOF).read_text() == "hi\n"
    events = timeline(workspace)
    assert kinds(events) == ["session-start", "before-tool", "after-tool", "stop"]
    assert {e["host"] for e in events} == {"cline"}
    [session] = {e["session_id"] for e in events}
    assert (workspace.home / ".cline" / "data" / "sessions" / session).is_dir()
    assert {e["cwd"] for e in events} == {str(workspace.project)}
    for event in events[1:3]:
        assert event["tool"]["kind"] == "shell"
        assert event["tool"]["command"] == f"echo hi | tee {PROOF}"
        assert event["agent"]["role"] == "main"
    assert events[2]["error"] is None
    assert events[3]["last_message"] == "All done."
    [tool_output] = run.model.tool_outputs(run.model.conversation("E2E-ALLOW")[1])
    assert json.loads(tool_output)[0]["result"] == "hi\n"
    assert workspace.diagnostics() == []


def test_tool_context_reaches_the_model_and_session_start_context_cannot(
    cline: Cline, workspace: Workspace
) -> None:
    """Context after the shell call is in the next model request, as Cline's hook_context
    user message; context at session start never reaches the model (Cline runs TaskStart
    detached and reads nothing), and hookbus says it dropped it."""
    after = "E2E-TOOLCTX-91c: the tests of this repo live in t/"
    start = "E2E-STARTCTX-7f3a: the build command of this repo is `make ci`"
    install(workspace, {"tool_context": {"text": after}, "session_context": {"text": start}})
    run = cline.run("E2E-CONTEXT: please run echo hi", tool_script("E2E-CONTEXT"))

    assert_ok(run)
    first, second = run.model.conversation("E2E-CONTEXT")
    note = second["messages"][-1]
    assert note["role"] == "user"
    assert note["content"].startswith('<hook_context source="PostToolUse"')
    assert after in note["content"]
    assert start not in json.dumps([first, second])
    [dropped] = diagnostics_named(workspace, "reply-degraded")
    assert dropped["native"] == "TaskStart"
    assert dropped["message"].startswith("context not sent")


def test_hung_handler_is_answered_by_hookbuss_deadline(cline: Cline, workspace: Workspace) -> None:
    """A handler sleeping past its 1 s is cut off by hookbus itself, long before Cline's
    120 s tool-hook timeout, and the command runs."""
    install(workspace, {"hang": None})
    run = cline.run("E2E-HANG: please run echo hi", tool_script("E2E-HANG"))

    assert_ok(run)
    assert (workspace.project / PROOF).exists()
    events = timeline(workspace)
    assert kinds(events)[1:3] == ["before-tool", "after-tool"]
    assert events[2]["t"] - events[1]["t"] < 7.0
    [timeout] = diagnostics_named(workspace, "handler-timeout")
    assert timeout["handler"] == "e2e_handlers:hang"
    assert "fail-open" in timeout["message"]


def test_hung_fail_closed_handler_cancels_the_task(cline: Cline, workspace: Workspace) -> None:
    """The same hung handler declared fail-closed blocks the command: hookbus's refusal is
    Cline's cancel, so the task ends, with hookbus's reason as the stop's error."""
    install(workspace, {"hang_fail_closed": None})
    run = cline.run("E2E-HANG-CLOSED: please run echo hi", tool_script("E2E-HANG-CLOSED"))

    assert_ok(run, "aborted")
    assert not (workspace.project / PROOF).exists()
    assert len(run.model.conversation("E2E-HANG-CLOSED")) == 1
    [error] = stop_errors(workspace)
    assert "did not answer in time (fail-closed)" in error
    [timeout] = diagnostics_named(workspace, "handler-timeout")
    assert timeout["handler"] == "e2e_handlers:hang_fail_closed"


def test_a_subagents_events_name_it_and_its_parent(cline: Cline, workspace: Workspace) -> None:
    """``spawn_agent`` is a before-tool and after-tool of kind ``agent``; the subagent's own
    run fires TaskStart (its subagent-start, naming the child and its parent), its shell
    call as that subagent, and TaskComplete (its subagent-stop, with its final text), all
    in the parent's session."""
    install(workspace, {})
    scenario = {"conversations": [
        {"match": "SUBTASK-CHILD-XYZ", "turns": [
            shell_turn("echo from-subagent | tee sub_proof.txt"),
            {"text": "Subagent printed from-subagent."}]},
        {"match": "E2E-AGENT", "turns": [
            {"tool_use": {"name": "spawn_agent", "input": {
                "systemPrompt": "You run shell commands.",
                "task": "SUBTASK-CHILD-XYZ: run echo from-subagent"}}},
            {"text": "Main agent done."}]},
    ]}  # fmt: skip
    run = cline.run("E2E-AGENT: delegate the echo", scenario)

    assert_ok(run)
    assert (workspace.project / "sub_proof.txt").read_text() == "from-subagent\n"
    events = timeline(workspace)
    seen = [(e["kind"], e["agent"]["role"], (e["tool"] or {}).get("name")) for e in events]
    assert seen == [
        ("session-start", "main", None), ("before-tool", "main", "spawn_agent"),
        ("subagent-start", "unknown", None), ("before-tool", "subagent", "run_commands"),
        ("after-tool", "subagent", "run_commands"), ("subagent-stop", "unknown", None),
        ("after-tool", "main", "spawn_agent"), ("stop", "main", None),
    ]  # fmt: skip
    parent = events[0]["raw"]["agent_id"]
    child = events[2]["raw"]["agent_id"]
    assert child and child != parent
    for start_or_stop in (events[2], events[5]):  # they run in the parent, name the child
        assert start_or_stop["agent"]["id"] == parent
        assert start_or_stop["child"]["id"] == child
    for call in events[3:5]:
        assert call["agent"]["id"] == child
        assert call["raw"]["parent_agent_id"] == parent
    assert events[1]["tool"]["kind"] == "agent"
    assert len({e["session_id"] for e in events}) == 1
    assert events[5]["final_text"] == "Subagent printed from-subagent."
    assert workspace.diagnostics() == []


def test_a_mangled_payload_is_answered_as_no_opinion(cline: Cline, workspace: Workspace) -> None:
    """A real PreToolUse payload with ``tool_call`` turned into a number before hookbus
    reads it: hookbus answers Cline's no-opinion (nothing on stdout), so the command runs
    in spite of a deny handler, and one diagnostic names the problem."""
    install(workspace, {"deny_shell": {"reason": "E2E-MANGLED"}})
    path = hooks_dir(workspace) / "PreToolUse"
    *head, command = path.read_text().splitlines()
    mangle = """sed 's/"tool_call":{/"tool_call":7,"was":{/'"""
    path.write_text("\n".join([*head, f"{mangle} | {{ {command}; }}"]) + "\n")
    run = cline.run("E2E-MANGLED: please run echo hi", tool_script("E2E-MANGLED"))

    assert_ok(run)
    assert (workspace.project / PROOF).exists()
    [invalid] = diagnostics_named(workspace, "input-invalid")
    assert "cline" in json.dumps(invalid)
    assert kinds(timeline(workspace)) == ["session-start", "after-tool", "stop"]
