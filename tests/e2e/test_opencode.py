"""The real OpenCode 1.18.33, headless and offline, with hookbus installed in its project.

Each test scripts the model (a fake OpenAI Chat Completions API on 127.0.0.1), installs
hookbus with ``hookbus install --host opencode`` into a ``.opencode/plugin/`` that already
holds a plugin of the user's own, runs ``opencode run --format json`` and checks what
really happened: which command ran (its proof file), what the handlers got, what the model
was told, and what hookbus and its shim wrote to the diagnostics log.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from . import hosts
from .conftest import GOLDEN, host_program, skip_loudly
from .harness import Workspace, capturing_goldens, dispatches
from .opencode_host import (
    PARENT_MODEL,
    PROOF,
    OpenCode,
    assert_ok,
    check_deny,
    check_guard_cap,
    check_hookbus_missing,
    decoded,
    diagnostics_named,
    guard_config,
    install_guard,
    premium_task,
    save_goldens,
    shell_turn,
    tool_script,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="session")
def opencode_executable(pytestconfig: pytest.Config) -> Path:
    found = host_program(pytestconfig, "opencode", hosts.HOSTS["opencode"].version)
    if isinstance(found, hosts.HostUnavailable):
        skip_loudly(pytestconfig, f"OpenCode cannot be installed or run: {found}")
    return found


@pytest.fixture
def opencode(
    opencode_executable: Path, workspace: Workspace, golden_seen: set[str]
) -> Iterator[OpenCode]:
    host = OpenCode(opencode_executable, workspace)
    host.prepare()
    yield host
    if capturing_goldens():
        save_goldens(workspace, GOLDEN / "opencode" / "real", golden_seen)


def test_deny_blocks_bash_and_the_model_reads_the_reason(opencode: OpenCode) -> None:
    check_deny(opencode, "E2E-DENY")


def test_rewrite_changes_what_opencode_runs(opencode: OpenCode, workspace: Workspace) -> None:
    """The shim edits ``output.args`` in place: OpenCode runs the rewritten command (its
    file exists, the original's does not), and the after-tool event shows it."""
    opencode.install({"rewrite_shell": {"command": "echo rewritten | tee rewritten.txt"}})
    run = opencode.run("E2E-REWRITE: please run echo hi", tool_script("E2E-REWRITE"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    assert (workspace.project / "rewritten.txt").read_text() == "rewritten\n"
    after = [e for e in decoded(workspace) if e["kind"] == "after-tool"]
    assert [e["tool"]["command"] for e in after] == ["echo rewritten | tee rewritten.txt"]
    [told] = run.model.tool_outputs(run.model.conversation("E2E-REWRITE")[1])
    assert "rewritten" in told


def test_no_opinion_leaves_the_call_untouched_with_the_exact_events(
    opencode: OpenCode, workspace: Workspace
) -> None:
    """With only the recorder, the command runs as the model wrote it, and hookbus decodes
    a headless session's events: its start, the prompt, the tool's two, the stop, all in
    one session of the project, as the main agent."""
    opencode.install({})
    run = opencode.run("E2E-ALLOW: please run echo hi", tool_script("E2E-ALLOW"))

    assert_ok(run)
    assert (workspace.project / PROOF).read_text() == "hi\n"
    events = decoded(workspace)
    assert [e["kind"] for e in events] == [
        "session-start", "prompt-submit", "before-tool", "after-tool", "stop"]  # fmt: skip
    [session] = {e["session_id"] for e in events}
    assert re.fullmatch(r"ses_\w+", session)
    assert {e["cwd"] for e in events} == {str(workspace.project)}
    assert {e["agent"]["role"] for e in events} == {"main"}
    assert "E2E-ALLOW" in events[1]["prompt"]
    for event in events[2:4]:
        assert (event["tool"]["kind"], event["tool"]["command"]) == (
            "shell",
            f"echo hi | tee {PROOF}",
        )
    assert events[3]["output"] == "hi\n"
    [told] = run.model.tool_outputs(run.model.conversation("E2E-ALLOW")[1])
    assert told.strip() == "hi"
    assert workspace.diagnostics() == []


def test_a_task_subagents_events_carry_the_childs_identity(
    opencode: OpenCode, workspace: Workspace
) -> None:
    """``task`` is a before-tool of kind agent; the child's session.created is its
    subagent-start (naming the parent), its bash call runs as that subagent in the child's
    session, its idle is its subagent-stop, and task's after-tool names the child."""
    opencode.install({})
    scenario = {"conversations": [
        {"match": "SUBTASK-XYZ", "turns": [shell_turn("echo from-subagent | tee sub_proof.txt"),
                                           {"text": "Subagent finished."}]},
        {"match": "E2E-AGENT", "turns": [
            {"tool_use": {"name": "task", "input": {
                "description": "Echo in subagent", "prompt": "SUBTASK-XYZ: run echo",
                "subagent_type": "general"}}},
            {"text": "Main agent done."}]},
    ]}  # fmt: skip
    run = opencode.run("E2E-AGENT: delegate the echo", scenario)

    assert_ok(run)
    assert (workspace.project / "sub_proof.txt").read_text() == "from-subagent\n"
    events = decoded(workspace)
    seen = [(e["kind"], e["agent"]["role"], (e.get("tool") or {}).get("name")) for e in events]
    main = events[0]["session_id"]
    starts = [e for e in events if e["kind"] == "subagent-start"]
    [start] = starts
    child = start["child"]["id"]
    assert child != main
    assert (start["session_id"], start["child"]["parent_id"], start["child"]["type"]) == (
        main, main, "general")  # fmt: skip
    calls = [e for e in events if e["kind"] in ("before-tool", "after-tool")]
    by_tool = {(e["kind"], e["tool"]["name"]): e for e in calls}
    task = by_tool["before-tool", "task"]
    assert task["tool"]["kind"] == "agent"
    assert task["tool"]["spawns"][0]["agent_type"] == "general"
    for kind in ("before-tool", "after-tool"):
        bash = by_tool[kind, "bash"]
        assert (bash["session_id"], bash["agent"]["role"], bash["agent"]["parent_id"]) == (
            child, "subagent", main), seen  # fmt: skip
    assert by_tool["after-tool", "task"]["child_ids"] == [child]
    [stop] = [e for e in events if e["kind"] == "subagent-stop"]
    assert stop["child"]["id"] == child
    assert [e["session_id"] for e in events if e["kind"] == "stop"] == [main]


def test_hookbus_missing_after_install_blocks_nothing_and_says_so_once(
    opencode: OpenCode, tmp_path: Path
) -> None:
    check_hookbus_missing(opencode, "E2E-MISSING", tmp_path / "gone")


def test_hung_hookbus_is_cut_off_by_the_shims_bound(
    opencode: OpenCode, workspace: Workspace, tmp_path: Path
) -> None:
    """hookbus that never answers (a program that sleeps, in its place): the shim kills
    it at its bound and answers the fallback, so OpenCode runs the call a few seconds
    later instead of never, and nothing is left running."""
    opencode.install({"deny_shell": {"reason": "E2E-HUNG"}}, record=False)
    sleeper = tmp_path / "sleeper.sh"
    sleeper.write_text("#!/bin/sh\nsleep 60\n")
    sleeper.chmod(0o755)
    opencode.point_shim_at(sleeper, wait_ms=3000)
    run = opencode.run("E2E-HUNG: please run echo hi", tool_script("E2E-HUNG"))

    assert_ok(run)
    assert (workspace.project / PROOF).read_text() == "hi\n"
    [line] = workspace.diagnostics()
    assert line["event"] == "hook-unavailable"
    assert "no answer from hookbus in 3000 ms" in line["message"]
    assert run.seconds < 60


def test_a_hung_handler_is_answered_by_hookbuss_deadline(
    opencode: OpenCode, workspace: Workspace
) -> None:
    """A handler sleeping past its 1 s is cut off by hookbus itself, well inside the
    shim's bound: the command runs, and hookbus says which handler timed out."""
    opencode.install({"hang": None})
    run = opencode.run("E2E-HANG: please run echo hi", tool_script("E2E-HANG"))

    assert_ok(run)
    assert (workspace.project / PROOF).exists()
    [timeout] = diagnostics_named(workspace, "handler-timeout")
    assert timeout["handler"] == "e2e_handlers:hang"
    assert diagnostics_named(workspace, "hook-unavailable") == []


def test_a_write_is_an_after_tool_and_an_after_edit_of_the_absolute_file(
    opencode: OpenCode, workspace: Workspace
) -> None:
    """``write`` names its file relative to the project; hookbus's after-tool and the
    after-edit derived from it name it absolute."""
    opencode.install({})
    scenario = {"conversations": [{"match": "E2E-WRITE", "turns": [
        {"tool_use": {"name": "write", "input": {"filePath": "notes.txt", "content": "hello\n"}}},
        {"text": "Written."}]}]}  # fmt: skip
    run = opencode.run("E2E-WRITE: write the notes", scenario)

    assert_ok(run)
    assert (workspace.project / "notes.txt").read_text() == "hello\n"
    path = str(workspace.project / "notes.txt")
    recorded = [e for e in workspace.events() if e["kind"] in ("after-tool", "after-edit")]
    assert sorted((e["kind"], e["native"], e["tool"]["name"]) for e in recorded) == [
        ("after-edit", "tool.execute.after", "write"),
        ("after-tool", "tool.execute.after", "write")]  # fmt: skip
    after = next(e for e in decoded(workspace) if e["kind"] == "after-tool")
    assert after["tool"]["paths"] == [path]
    assert [c["path"] for c in after["changes"]] == [path]


def test_the_guard_runs_a_premium_task_on_the_parents_model(opencode: OpenCode) -> None:
    check_guard_cap(opencode, "E2E-GUARD")


def test_the_guard_blocks_a_premium_task_it_cannot_move(
    opencode: OpenCode, workspace: Workspace
) -> None:
    """With no parent profile (``parent = ""``) the premium task cannot be moved onto the
    parent: the shim throws, the model reads the guard's text as the tool's error, no
    child request reaches the model, and one ``block`` row is recorded."""
    install_guard(opencode, '[handlers.guard]\nparent = ""\n')
    run = opencode.run("E2E-GBLOCK: delegate the listing", premium_task("E2E-GBLOCK"),
                       config=guard_config())  # fmt: skip

    assert_ok(run)
    assert run.model.conversation("E2E-GBLOCK-CHILD") == []
    _, second = run.model.conversation("E2E-GBLOCK")
    [told] = run.model.tool_outputs(second)
    # The profile is priced as its tier (premium: opus), not by the model opencode.json pins.
    assert told == (f"hookbus guard: hookbus-premium on opus is priced above the parent's "
                    f"model {PARENT_MODEL}. Do the work in this session.")  # fmt: skip
    [row] = dispatches(workspace)
    assert (row.action, row.agent_type, row.parent_model) == (
        "block", "hookbus-premium", PARENT_MODEL)  # fmt: skip


def test_with_the_server_path_a_warm_server_answers_the_deny(
    opencode: OpenCode, workspace: Workspace, tmp_path: Path
) -> None:
    """``install --server`` and a running ``hookbus serve``: the plugin hands each tool and
    chat call to the server over its socket (the command it would spawn names a missing
    interpreter, so a spawn would be the fail-open fallback and the command would run);
    the bus events run their command, the client, which asks the same server. The deny
    blocks bash, the model reads the reason, and the server served every event."""
    from . import warm

    reason = "E2E-WARM: echo is not allowed in this repo"
    workspace.install_hookbus({"deny_shell": {"reason": reason}}, host="opencode",
                              args=("--server",))  # fmt: skip
    opencode.point_shim_at(tmp_path / "nowhere" / "python3",
                           events=("tool.execute.before", "chat.message"))  # fmt: skip
    with warm.server(workspace, opencode.env()):  # its identity: the host's XDG_* folders
        run = opencode.run("E2E-WARM: please run echo hi", tool_script("E2E-WARM"))
        served = warm.served(workspace, opencode.env())
    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    _, second = run.model.conversation("E2E-WARM")
    [told] = run.model.tool_outputs(second)
    assert reason in told
    assert [e["kind"] for e in workspace.events()] == [
        "session-start", "prompt-submit", "before-tool", "stop"]  # fmt: skip
    assert served == 4
    assert warm.problems(workspace) == []
