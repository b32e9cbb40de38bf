"""The real Claude Code, headless and offline, with hookbus installed in its project.

Each test scripts the model (a fake Anthropic API on 127.0.0.1), enables a few handlers of
``e2e_handlers.py`` plus a recorder of every event hookbus decodes, runs ``claude -p`` and
checks what really happened: whether the tool ran (``ran_proof.txt``), what the handlers
got, what the model was told, and what hookbus wrote to its diagnostics.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support import GUARD

from . import hosts
from .harness import Claude, Run, Workspace

pytestmark = pytest.mark.e2e

#: The smoke tests run on every pinned version (the main one, and the older ones kept).
EVERY_PINNED_VERSION = pytest.mark.parametrize("claude_version", hosts.HOSTS["claude"].versions)

PROOF = "ran_proof.txt"


def bash_turn(command: str, text: str = "") -> dict[str, Any]:
    tool = {"name": "Bash", "input": {"command": command, "description": "Run it"}}
    turn: dict[str, Any] = {"tool_use": tool}
    if text:
        turn["text"] = text
    return turn


def script(marker: str, *turns: dict[str, Any]) -> dict[str, Any]:
    return {"conversations": [{"match": marker, "turns": list(turns)}]}


def tool_script(marker: str, command: str = f"echo hi | tee {PROOF}") -> dict[str, Any]:
    """The model runs ``command`` in Bash, then says it is done."""
    return script(marker, bash_turn(command, "I will run it."), {"text": "All done."})


def kinds(events: list[dict[str, Any]]) -> list[str]:
    return [e["kind"] for e in events]


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of a model request's last message."""
    content = body["messages"][-1]["content"]
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def diagnostics_named(ws: Workspace, code: str) -> list[dict[str, Any]]:
    return [d for d in ws.diagnostics() if d.get("event") == code]


def assert_ok(run: Run) -> None:
    """Claude succeeded and left no process behind (hook processes included)."""
    assert run.returncode == 0, run.describe()
    assert run.output["is_error"] is False, run.describe()
    assert run.process.leftovers == (), run.describe()


@EVERY_PINNED_VERSION
def test_allow_runs_the_tool_and_decodes_every_event(claude: Claude, workspace: Workspace) -> None:
    """The Bash call runs, and hookbus decodes exactly the six portable events of the session."""
    workspace.install_hookbus({})
    run = claude.run("E2E-ALLOW: please run echo hi", tool_script("E2E-ALLOW"))

    assert_ok(run)
    assert (workspace.project / PROOF).read_text() == "hi\n"
    events = workspace.events()
    assert kinds(events) == [
        "session-start", "prompt-submit", "before-tool", "after-tool", "stop", "session-end",
    ]  # fmt: skip
    assert {e["host"] for e in events} == {"claude"}
    assert {e["session_id"] for e in events} == {run.output["session_id"]}
    assert {e["agent"]["id"] for e in events} == {None}
    for event in events[2:4]:
        assert event["tool"]["kind"] == "shell"
        assert event["tool"]["command"] == f"echo hi | tee {PROOF}"
    assert events[3]["error"] is None
    assert events[4]["last_message"] == "All done."
    assert workspace.diagnostics() == []


def test_other_native_events_decode_as_other(claude: Claude, workspace: Workspace) -> None:
    """Native events with no portable kind reach ``other`` subscribers with their raw payload."""
    options = {"path": str(workspace.events_path)}
    workspace.install_hookbus({"record_other": options, "record_display": options})
    run = claude.run("E2E-OTHER: please run echo hi", tool_script("E2E-OTHER"))

    assert_ok(run)
    others = [e for e in workspace.events(other=True) if e["kind"] == "other"]
    # Claude (2.1.197 and 2.1.332 alike) fires these two here: PostToolBatch for any
    # ``other`` subscriber, MessageDisplay because record_display names it (it is opt-in).
    assert {e["native"] for e in others} == {"MessageDisplay", "PostToolBatch"}
    assert {e["session_id"] for e in others} == {run.output["session_id"]}
    assert workspace.diagnostics() == []


@EVERY_PINNED_VERSION
def test_deny_blocks_the_tool_and_tells_the_model(claude: Claude, workspace: Workspace) -> None:
    """A deny stops the tool, and its reason is the tool result the model reads next."""
    reason = "E2E-DENY: echo is not allowed in this repo"
    workspace.install_hookbus({"deny_shell": {"reason": reason}})
    run = claude.run("E2E-DENY: please run echo hi", tool_script("E2E-DENY"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    assert "after-tool" not in kinds(workspace.events())
    answer = run.model.conversation("E2E-DENY")[1]
    [result] = tool_results(answer)
    assert result["is_error"] is True
    assert reason in json.dumps(result["content"])
    assert [d["tool_name"] for d in run.output["permission_denials"]] == ["Bash"]


def test_a_slow_guard_on_a_cold_index_still_blocks(claude: Claude, workspace: Workspace) -> None:
    """A fail-closed guard whose module takes 0.8 s to import, on a fresh machine (no index
    compiled yet: the state folder is wiped after install): ``rm -rf victim`` does not run."""
    import shutil

    workspace.install_hookbus({})
    # A guard with heavy imports, on a machine that never compiled its index.
    slow = GUARD.replace("PRELUDE", "import time\ntime.sleep(0.8)")
    (workspace.project / "slow_guard.py").write_text(slow)
    config = workspace.project / ".hookbus.toml"
    config.write_text(config.read_text().replace("enable = [", 'enable = ["slow_guard:guard", ', 1))
    shutil.rmtree(workspace.state, ignore_errors=True)
    (workspace.project / "victim").mkdir()
    run = claude.run("E2E-SLOW: clean up", tool_script("E2E-SLOW", "rm -rf victim"))

    assert_ok(run)
    assert (workspace.project / "victim").is_dir()
    answer = run.model.conversation("E2E-SLOW")[1]
    [result] = tool_results(answer)
    assert "no rm -rf" in json.dumps(result["content"])


def test_a_typo_after_install_blocks_naming_its_line_and_fix(
    claude: Claude, workspace: Workspace
) -> None:
    """A handler misspelt in ``enable`` after install may be a guard: Claude's Bash call
    is refused, and the model reads the entry's file and line and the edit that fixes it."""
    # A shell guard alone is installed (PreToolUse), as a user's first guard would be.
    workspace.install_hookbus({"hang_fail_closed": None}, record=False)
    config = workspace.project / ".hookbus.toml"
    config.write_text(config.read_text().replace("e2e_handlers:", "e2e_handlerz:"))
    run = claude.run("E2E-TYPO: list the files", tool_script("E2E-TYPO", f"ls | tee {PROOF}"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    [result] = tool_results(run.model.conversation("E2E-TYPO")[1])
    told = json.dumps(result["content"])
    for said in (f"(enabled at {config}:1)", "no module named 'e2e_handlerz'",
                 "fail_closed = false", "hookbus doctor"):  # fmt: skip
        assert said in told, told


def test_session_start_context_reaches_the_model(claude: Claude, workspace: Workspace) -> None:
    """Context added at session start is in the request Claude sends to the model."""
    context = "E2E-CONTEXT-7f3a: the build command of this repo is `make ci`"
    workspace.install_hookbus({"session_context": {"text": context}})
    run = claude.run("E2E-CONTEXT: what is the build command?", script("E2E-CONTEXT"))

    assert_ok(run)
    [first] = run.model.conversation("E2E-CONTEXT")
    assert "E2E-CONTEXT-7f3a" in json.dumps(first["messages"])


def test_keep_working_gets_one_more_turn_then_the_loop_guard_drops_it(
    claude: Claude, workspace: Workspace
) -> None:
    """One keep-working gives one more model turn; the stop_hook_active stop is let through."""
    reason = "E2E-KEEP: run the tests before you stop"
    workspace.install_hookbus({"keep_working": {"text": reason}})
    scenario = script("E2E-KEEP", {"text": "First answer."}, {"text": "Tests pass now."})
    run = claude.run("E2E-KEEP: fix the bug", scenario)

    assert_ok(run)
    requests = run.model.conversation("E2E-KEEP")
    assert len(requests) == 2
    assert reason in json.dumps(requests[1]["messages"][-1])
    stops = [e for e in workspace.events() if e["kind"] == "stop"]
    assert [s["stop_hook_active"] for s in stops] == [False, True]
    assert run.output["result"] == "Tests pass now."
    [dropped] = diagnostics_named(workspace, "reply-dropped")
    assert "loop guard" in dropped["message"]


def test_hung_handler_times_out_fail_open(claude: Claude, workspace: Workspace) -> None:
    """A handler sleeping past its timeout is cut off by hookbus itself and the tool runs."""
    workspace.install_hookbus({"hang": None})
    run = claude.run("E2E-HANG: please run echo hi", tool_script("E2E-HANG"))

    assert_ok(run)
    assert (workspace.project / PROOF).exists()
    events = workspace.events()
    assert kinds(events)[2:4] == ["before-tool", "after-tool"]
    # hookbus answered after the handler's 1 s, long before Claude's 10 s hook timeout.
    assert events[3]["t"] - events[2]["t"] < 4.0
    [timeout] = diagnostics_named(workspace, "handler-timeout")
    assert timeout["handler"] == "e2e_handlers:hang"
    assert "fail-open" in timeout["message"]
    assert kinds(events)[-1] == "session-end"


def test_hung_fail_closed_handler_blocks_the_tool(claude: Claude, workspace: Workspace) -> None:
    """The same hung handler declared fail-closed blocks the tool instead."""
    workspace.install_hookbus({"hang_fail_closed": None})
    run = claude.run("E2E-HANG-CLOSED: please run echo hi", tool_script("E2E-HANG-CLOSED"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    [result] = tool_results(run.model.conversation("E2E-HANG-CLOSED")[1])
    assert result["is_error"] is True
    assert "did not answer in time (fail-closed)" in json.dumps(result["content"])
    [timeout] = diagnostics_named(workspace, "handler-timeout")
    assert timeout["handler"] == "e2e_handlers:hang_fail_closed"
    assert "fail-closed" in timeout["message"]


CHILD_PROMPT = "SUBTASK-E2E-CHILD: run echo from-subagent"
CHILD_TEXT = "Subagent finished: printed from-subagent."


def agent_scenario(*, background: bool) -> dict[str, Any]:
    """The main agent delegates one Bash call to a general-purpose subagent, which runs it
    and reports; ``background`` false asks for the foreground run (``run_in_background``)."""
    spawn: dict[str, Any] = {"description": "Echo in a subagent", "prompt": CHILD_PROMPT,
                             "subagent_type": "general-purpose"}  # fmt: skip
    if not background:
        spawn["run_in_background"] = False
    return {"conversations": [
        {"match": "SUBTASK-E2E-CHILD", "turns": [
            bash_turn("echo from-subagent | tee sub_proof.txt"), {"text": CHILD_TEXT},
        ]},
        {"match": "E2E-AGENT", "turns": [
            {"tool_use": {"name": "Agent", "input": spawn}},
            {"text": "Main agent done."},
            {"text": "The subagent reported back."},  # answers the task notification
        ]},
    ]}  # fmt: skip


def test_a_foreground_subagent_nests_its_events_in_the_agent_call(
    claude: Claude, workspace: Workspace
) -> None:
    """Subagent start and stop name the child and come inside the Agent call; the child's
    own tool calls carry its id; the Agent call's after-tool names the child."""
    workspace.install_hookbus({})
    scenario = agent_scenario(background=False)
    run = claude.run("E2E-AGENT: delegate the echo", scenario, tools=("Bash", "Agent"))

    assert_ok(run)
    assert (workspace.project / "sub_proof.txt").exists()
    events = workspace.events()
    assert kinds(events) == [
        "session-start", "prompt-submit", "before-tool", "subagent-start", "before-tool",
        "after-tool", "subagent-stop", "after-tool", "stop", "session-end",
    ]  # fmt: skip
    start, stop = events[3], events[6]
    child = start["child"]
    assert child["id"]
    assert child["type"] == "general-purpose"
    assert stop["child"] == child
    assert start["agent"]["id"] is None
    assert stop["agent"]["id"] is None
    assert stop["final_text"] == CHILD_TEXT
    agent_call, child_bash = events[2], events[4]
    assert agent_call["tool"]["kind"] == "agent"
    assert agent_call["agent"]["id"] is None
    assert child_bash["tool"]["kind"] == "shell"
    assert child_bash["agent"] == child
    assert events[5]["agent"] == child
    agent_done = events[7]
    assert agent_done["tool"]["kind"] == "agent"
    assert agent_done["agent"]["id"] is None
    assert agent_done["raw"]["tool_response"]["status"] == "completed"
    assert agent_done["child_ids"] == [child["id"]]
    assert run.output["result"] == "Main agent done."


def test_a_background_subagent_reports_after_the_main_agent_stops(
    claude: Claude, workspace: Workspace
) -> None:
    """By default (2.1.332) the Agent tool runs in the background: its after-tool comes at
    once (``async_launched``, naming the child), the main agent stops while the child
    works, and the child's result comes back as a new prompt (a task notification)."""
    workspace.install_hookbus({})
    scenario = agent_scenario(background=True)
    run = claude.run("E2E-AGENT: delegate the echo", scenario, tools=("Bash", "Agent"))

    assert_ok(run)
    assert (workspace.project / "sub_proof.txt").exists()
    events = workspace.events()
    [start] = [e for e in events if e["kind"] == "subagent-start"]
    child = start["child"]
    assert child["type"] == "general-purpose"
    # The two agents run at once: their hooks interleave differently from run to run
    # (the Agent call's after-tool before or after SubagentStart, the main Stop before or
    # after the child's Bash call), so each agent's own sequence is checked, then the
    # order that causality fixes.
    mine = [e for e in events if e["agent"]["id"] is None and "child" not in e]
    theirs = [e for e in events if e["agent"] == child or e.get("child") == child]
    assert kinds(mine) == [
        "session-start", "prompt-submit", "before-tool", "after-tool", "stop",
        "prompt-submit", "stop", "session-end",
    ]  # fmt: skip
    assert kinds(theirs) == ["subagent-start", "before-tool", "after-tool", "subagent-stop"]
    assert len(mine) + len(theirs) == len(events)
    spawn, launched, first_stop, notified = mine[2], mine[3], mine[4], mine[5]
    assert spawn["tool"]["kind"] == launched["tool"]["kind"] == "agent"
    assert launched["raw"]["tool_response"]["status"] == "async_launched"
    assert launched["child_ids"] == [child["id"]]
    assert first_stop["last_message"] == "Main agent done."
    tasks = first_stop["raw"]["background_tasks"]
    assert [(t["id"], t["status"]) for t in tasks] == [(child["id"], "running")]
    assert theirs[1]["tool"]["kind"] == "shell"
    assert theirs[3]["final_text"] == CHILD_TEXT
    assert events.index(spawn) < events.index(start)
    assert events.index(theirs[-1]) < events.index(notified)
    assert "<task-notification>" in notified["prompt"]
    assert child["id"] in notified["prompt"]
    assert CHILD_TEXT in notified["prompt"]
    assert mine[6]["raw"]["background_tasks"] == []
    assert run.output["result"] == "The subagent reported back."


def test_session_end_work_outlives_claude(claude: Claude, workspace: Workspace) -> None:
    """Detached SessionEnd work finishes after Claude exits; the hook itself returns at once."""
    marker, timings = workspace.root / "late.txt", workspace.root / "timings.json"
    workspace.install_hookbus({"spawn_at_end": {"marker": str(marker), "timings": str(timings)}})
    run = claude.run("E2E-END: just answer", script("E2E-END"))

    assert_ok(run)
    assert wait_for(marker, seconds=10), "the detached child never wrote its file"
    assert float(marker.read_text()) > run.ended
    times = json.loads(timings.read_text())
    assert times["handler_returned"] - times["handler_entered"] < 0.2
    # The SessionEnd hook ran from its process start to Claude's exit (an upper bound of
    # its own duration) well inside Claude's 1.5 s SessionEnd budget.
    hook_to_exit = run.ended - times["hook_started"]
    assert hook_to_exit < 1.0, f"{hook_to_exit:.3f}s from SessionEnd hook start to exit"
    assert kinds(workspace.events())[-1] == "session-end"
    assert workspace.diagnostics() == []


def test_failing_command_is_an_after_tool_with_error(claude: Claude, workspace: Workspace) -> None:
    """A failing command arrives as PostToolUseFailure, decoded as after-tool with the error."""
    workspace.install_hookbus({})
    run = claude.run(
        "E2E-FAIL: run a failing command", tool_script("E2E-FAIL", "echo oops >&2; exit 3")
    )

    assert_ok(run)
    events = workspace.events()
    assert kinds(events)[2:4] == ["before-tool", "after-tool"]
    after = events[3]
    assert after["native"] == "PostToolUseFailure"
    assert after["tool"]["kind"] == "shell"
    assert "Exit code 3" in after["error"]
    assert "oops" in after["error"]


def wait_for(path: Path, *, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists():
            return True
        time.sleep(0.05)
    return path.exists()


def test_a_local_install_with_the_portable_command_guards_and_its_fallback_too(
    claude: Claude, workspace: Workspace
) -> None:
    """``--scope local --command path``: Claude reads ``.claude/settings.local.json`` and
    runs the ``hookbus`` found on PATH; with no hookbus on PATH the command's own fallback
    still refuses for the fail-closed guard."""
    import subprocess
    import sys

    (workspace.project / "guard.py").write_text(GUARD.replace("PRELUDE", ""))
    bin_dir = workspace.root / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "hookbus").symlink_to(Path(sys.executable).with_name("hookbus"))
    args = ("--scope", "local", "--command", "path")
    workspace.install_hookbus({}, args=args)
    config = workspace.project / ".hookbus.toml"
    config.write_text(config.read_text().replace("enable = [", 'enable = ["guard:guard", ', 1))
    # The guard joined after install: install again, as a user would after an edit.
    again = subprocess.run([sys.executable, "-m", "hookbus", "install", "--host", "claude", *args],
                           cwd=workspace.project, env=workspace.base_env(), capture_output=True,
                           text=True, timeout=120, check=False)  # fmt: skip
    assert again.returncode == 0, again.stderr
    local = workspace.project / ".claude" / "settings.local.json"
    assert "; hookbus run --host claude" in local.read_text()  # after the unset of PYTHON*
    assert not (workspace.project / ".claude" / "settings.json").exists()

    (workspace.project / "victim").mkdir()
    run = claude.run("E2E-LOCAL: clean up", tool_script("E2E-LOCAL", "rm -rf victim"))
    assert_ok(run)
    assert (workspace.project / "victim").is_dir()
    [result] = tool_results(run.model.conversation("E2E-LOCAL")[1])
    assert "no rm -rf" in json.dumps(result["content"])

    (bin_dir / "hookbus").unlink()
    run = claude.run("E2E-GONE: clean up", tool_script("E2E-GONE", "rm -rf victim"))
    assert_ok(run)
    assert (workspace.project / "victim").is_dir()
    [result] = tool_results(run.model.conversation("E2E-GONE")[1])
    assert "hookbus could not run" in json.dumps(result["content"])


# -- a Claude payload that carries Copilot's timestamp ------------------------------------

#: Copilot's mark on its copy of Claude's payloads (an ISO-8601 ``timestamp``).
STAMP = "2026-12-07T19:00:00.000Z"


def stamp_hookbus_payloads(ws: Workspace) -> None:
    """Give every hook of the project's settings its payload with a ``timestamp`` added,
    as a Claude Code that one day sends one would: each command runs as installed, fed
    by a filter that adds the key."""
    stamp = ws.root / "stamp.py"
    stamp.write_text("import json, sys\npayload = json.load(sys.stdin)\n"
                     f"payload['timestamp'] = {STAMP!r}\nprint(json.dumps(payload))\n")  # fmt: skip
    path = ws.project / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    hooks = [hook for groups in settings["hooks"].values() for group in groups
             for hook in group["hooks"]]  # fmt: skip
    for n, hook in enumerate(hooks):
        installed = ws.root / f"hook{n}.sh"
        installed.write_text(hook["command"] + "\n")
        hook["command"] = f"{sys.executable} {stamp} | /bin/sh {installed}"
    path.write_text(json.dumps(settings, indent=2) + "\n")


def test_a_stamped_payload_is_denied_in_a_form_claude_acts_on(
    claude: Claude, workspace: Workspace
) -> None:
    """A Claude payload with Copilot's ``timestamp`` is taken for Copilot's, and the deny
    hookbus gives it still stops the tool in Claude, with its reason for the model."""
    reason = "E2E-STAMPED: echo is not allowed in this repo"
    workspace.install_hookbus({"deny_shell": {"reason": reason}})
    stamp_hookbus_payloads(workspace)
    run = claude.run("E2E-STAMPED: please run echo hi", tool_script("E2E-STAMPED"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    [result] = tool_results(run.model.conversation("E2E-STAMPED")[1])
    assert result["is_error"] is True
    assert reason in json.dumps(result["content"])
    [before] = [e for e in workspace.events() if e["kind"] == "before-tool"]
    assert (before["host"], before["raw"]["timestamp"]) == ("copilot", STAMP)


def test_a_stamped_prompt_is_blocked_in_claude(claude: Claude, workspace: Workspace) -> None:
    """A prompt deny given to a stamped UserPromptSubmit blocks the prompt in Claude: the
    model is never asked, and the run's result says why."""
    reason = "E2E-STAMPED-PROMPT: not in this repo"
    workspace.install_hookbus({"deny_prompt": {"reason": reason}})
    stamp_hookbus_payloads(workspace)
    run = claude.run("E2E-STAMPED-PROMPT: please run echo hi", tool_script("E2E-STAMPED-PROMPT"))

    assert run.returncode == 0, run.describe()
    assert run.model.conversation("E2E-STAMPED-PROMPT") == []
    assert reason in run.output["result"]
    [prompt] = [e for e in workspace.events() if e["kind"] == "prompt-submit"]
    assert prompt["host"] == "copilot"
