"""The real Pi coding agent 0.73.1, headless and offline, with hookbus installed in its project.

Each test scripts the model (a fake OpenAI Chat Completions API on 127.0.0.1), installs
hookbus with ``hookbus install --host pi`` into a ``.pi/extensions/`` that already holds
an extension of the user's own, runs ``pi -p`` and checks what really happened: whether
the command ran (a proof file), what the handlers got, what the model was told, and
what hookbus wrote to its diagnostics.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import hosts
from .conftest import GOLDEN, host_program, skip_loudly
from .harness import HERE, Workspace, capturing_goldens, read_json_lines
from .pi_host import Pi, PiRun

pytestmark = pytest.mark.e2e

PROOF = "ran_proof.txt"
HANDLERS = HERE / "e2e_handlers.py"
#: The user's own extension, already in the project: it notes every tool call it sees.
USERS_EXTENSION = "mine.ts"


def users_extension_text(log: Path) -> str:
    return (
        'import { appendFileSync } from "node:fs";\n'
        "export default function (pi) {\n"
        '  pi.on("tool_call", async (event) => {\n'
        f'    appendFileSync({json.dumps(str(log))}, JSON.stringify(event.input) + "\\n");\n'
        "  });\n"
        "}\n"
    )


@pytest.fixture(scope="session")
def pi_executable(pytestconfig: pytest.Config) -> Path:
    found = host_program(pytestconfig, "pi", hosts.HOSTS["pi"].version)
    if isinstance(found, hosts.HostUnavailable):
        skip_loudly(pytestconfig, f"Pi cannot be installed or run: {found}")
    return found


def extensions(ws: Workspace) -> Path:
    return ws.project / ".pi" / "extensions"


def users_log(ws: Workspace) -> Path:
    return ws.root / "mine.jsonl"


@pytest.fixture
def pi(pi_executable: Path, workspace: Workspace, golden_seen: set[str]) -> Iterator[Pi]:
    mine = extensions(workspace) / USERS_EXTENSION
    mine.parent.mkdir(parents=True)
    mine.write_text(users_extension_text(users_log(workspace)))
    yield Pi(pi_executable, workspace)
    if capturing_goldens():
        workspace.save_goldens(GOLDEN / "pi" / "real", golden_seen)


def install(ws: Workspace, handlers: dict[str, Any]) -> None:
    ws.install_hookbus(handlers, host="pi")
    assert (extensions(ws) / USERS_EXTENSION).read_text() == users_extension_text(users_log(ws))


def shell_turn(command: str) -> dict[str, Any]:
    return {"tool_use": {"name": "bash", "input": {"command": command}}}


def script(marker: str, *turns: dict[str, Any]) -> dict[str, Any]:
    return {"conversations": [{"match": marker, "turns": list(turns)}]}


def tool_script(marker: str, command: str = f"echo hi | tee {PROOF}") -> dict[str, Any]:
    """The model runs ``command`` in the shell, then says it is done."""
    return script(marker, shell_turn(command), {"text": "All done."})


def kinds(events: list[dict[str, Any]]) -> list[str]:
    """The kinds recorded, in order; the last two sorted: Pi does not wait for its
    ``agent_end`` handlers before ``session_shutdown``, so their hooks run at once."""
    found = [e["kind"] for e in events]
    if found[-2:] == ["session-end", "stop"]:
        found[-2:] = ["stop", "session-end"]
    return found


def by_kind(ws: Workspace) -> dict[str, dict[str, Any]]:
    return {e["kind"]: e for e in ws.events()}


def diagnostics_named(ws: Workspace, code: str) -> list[dict[str, Any]]:
    return [d for d in ws.diagnostics() if d.get("event") == code]


def users_calls(ws: Workspace) -> list[dict[str, Any]]:
    return [json.loads(line) for line in users_log(ws).read_text().splitlines()]


def assert_ok(run: PiRun) -> None:
    """Pi exited 0 and left no process behind."""
    assert run.returncode == 0, run.describe()
    assert run.process.leftovers == (), run.describe()


def test_deny_blocks_the_command_and_the_model_reads_the_reason(
    pi: Pi, workspace: Workspace
) -> None:
    """A deny is Pi's ``{block, reason}``: the command does not run, the model gets the
    reason as the tool's error result and finishes."""
    reason = "E2E-DENY: echo is not allowed in this repo"
    install(workspace, {"deny_shell": {"reason": reason}})
    run = pi.run("E2E-DENY: please run echo hi", tool_script("E2E-DENY"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    _, second = run.model.conversation("E2E-DENY")
    assert run.model.tool_outputs(second) == [reason]
    assert "All done." in run.process.stdout
    # A blocked call has no tool_result: Pi answers it with the reason itself.
    assert kinds(workspace.events()) == [
        "session-start", "prompt-submit", "before-tool", "stop", "session-end"
    ]  # fmt: skip
    # Pi stops at the first block: the user's extension sees the call only when Pi
    # loaded it first (in readdir order, which is no order at all).
    assert not users_log(workspace).exists() or users_calls(workspace) == [
        {"command": f"echo hi | tee {PROOF}"}
    ]
    assert workspace.diagnostics() == []


def test_no_opinion_runs_the_command_with_the_exact_portable_events(
    pi: Pi, workspace: Workspace
) -> None:
    """Nobody answers: the command runs as the model asked, and hookbus decodes each of
    Pi's events with its session id, cwd and model."""
    install(workspace, {})
    run = pi.run("E2E-ALLOW: please run echo hi", tool_script("E2E-ALLOW"))

    assert_ok(run)
    assert (workspace.project / PROOF).read_text() == "hi\n"
    events = workspace.events()
    assert kinds(events) == [
        "session-start", "prompt-submit", "before-tool", "after-tool", "stop", "session-end"
    ]  # fmt: skip
    [session] = {e["session_id"] for e in events}
    assert len(session) >= 8
    assert [p for p in (workspace.home / ".pi" / "agent" / "sessions").rglob("*.jsonl")
            if session in p.name]  # fmt: skip
    assert {e["cwd"] for e in events} == {str(workspace.project)}
    assert events[0]["source"] == "startup"
    assert events[1]["prompt"] == "E2E-ALLOW: please run echo hi"
    found = by_kind(workspace)
    for kind in ("before-tool", "after-tool"):
        assert found[kind]["tool"]["kind"] == "shell"
        assert found[kind]["tool"]["command"] == f"echo hi | tee {PROOF}"
        assert found[kind]["agent"]["role"] == "main"
    assert found["after-tool"]["error"] is None
    assert found["stop"]["last_message"] == "All done."
    assert found["session-end"]["reason"] == "quit"
    assert {e["raw"]["model"] for e in events} == {"fake/fake-model"}
    assert users_calls(workspace) == [{"command": f"echo hi | tee {PROOF}"}]
    assert workspace.diagnostics() == []


def test_rewrite_changes_what_pi_runs(pi: Pi, workspace: Workspace) -> None:
    """A rewrite is written into Pi's own ``event.input``: Pi runs the new command (its
    proof file, not the model's), and the model reads the new command's output."""
    install(workspace, {"rewrite_shell": {"command": "echo rewritten | tee rewritten.txt"}})
    run = pi.run("E2E-REWRITE: please run echo hi", tool_script("E2E-REWRITE"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    assert (workspace.project / "rewritten.txt").read_text() == "rewritten\n"
    second = run.model.conversation("E2E-REWRITE")[1]
    assert run.model.tool_outputs(second) == ["rewritten\n"]
    after = [e for e in workspace.events() if e["kind"] == "after-tool"]
    assert after[0]["tool"]["command"] == "echo rewritten | tee rewritten.txt"


def test_context_reaches_the_model_before_the_prompt_and_after_the_tool(
    pi: Pi, workspace: Workspace
) -> None:
    """Context after the shell call is appended to the tool's result; context at prompt
    submit is a custom message the model reads with the prompt."""
    after = "E2E-TOOLCTX-91c: the tests of this repo live in t/"
    before = "E2E-PROMPTCTX-7f3a: the build command of this repo is `make ci`"
    install(workspace, {"tool_context": {"text": after}, "prompt_context": {"text": before}})
    run = pi.run("E2E-CONTEXT: please run echo hi", tool_script("E2E-CONTEXT"))

    assert_ok(run)
    first, second = run.model.conversation("E2E-CONTEXT")
    users = [m for m in first["messages"] if m["role"] == "user"]
    assert "E2E-CONTEXT: please run echo hi" in json.dumps(users[0])
    assert before in json.dumps(users[1])
    # Pi's OpenAI-compatible provider sends a result's text parts one a line.
    assert run.model.tool_outputs(second) == [f"hi\n\n{after}"]


def test_hookbus_gone_blocks_nothing_and_leaves_one_diagnostic(
    pi: Pi, workspace: Workspace
) -> None:
    """hookbus gone after install (the environment it was installed from removed, as a
    ``pipx uninstall`` does): the extension runs the command as if nobody answered, says
    so once per event on stderr and in hookbus's log, and the session completes."""
    install(workspace, {})
    # Install again from an environment reached through a link, then remove the link.
    venv = workspace.root / "venv"
    venv.symlink_to(Path(sys.prefix))
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "hookbus", "install", "--host", "pi"],
        cwd=workspace.project, env=workspace.base_env(), capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert str(venv / "bin" / "python") in (extensions(workspace) / "hookbus.ts").read_text()
    venv.unlink()
    run = pi.run("E2E-GONE: please run echo hi", tool_script("E2E-GONE"))

    assert_ok(run)
    assert (workspace.project / PROOF).read_text() == "hi\n"
    assert "All done." in run.process.stdout
    found = diagnostics_named(workspace, "hook-unavailable")
    natives = [d["native"] for d in found]
    assert natives == ["session_start", "before_agent_start", "tool_call", "tool_result",
                       "agent_end", "session_shutdown"]  # fmt: skip
    assert all(d["host"] == "pi" and "nothing changed" in d["message"] for d in found)
    lines = [line for line in run.process.stderr.splitlines() if line.startswith("hookbus: ")]
    assert len(lines) == len(found)
    assert workspace.events() == []


def test_a_hung_handler_is_answered_in_time_and_the_command_runs(
    pi: Pi, workspace: Workspace
) -> None:
    """A handler that sleeps 30 s: hookbus answers no-opinion when its 1 s timeout ends,
    far inside the extension's own bound (12 s), and the command runs."""
    install(workspace, {"hang": None})
    run = pi.run("E2E-HANG: please run echo hi", tool_script("E2E-HANG"))

    assert_ok(run)
    assert (workspace.project / PROOF).read_text() == "hi\n"
    assert run.seconds < 25, run.describe()
    assert diagnostics_named(workspace, "handler-timeout"), workspace.diagnostics()


def test_a_hung_fail_closed_handler_blocks(pi: Pi, workspace: Workspace) -> None:
    """A fail-closed handler that sleeps 30 s: when its 1 s timeout ends, hookbus's
    refusal blocks the call, and the model reads why."""
    install(workspace, {"hang_fail_closed": None})
    run = pi.run("E2E-HANGFC: please run echo hi", tool_script("E2E-HANGFC"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    second = run.model.conversation("E2E-HANGFC")[1]
    [said] = run.model.tool_outputs(second)
    assert "fail-closed" in said and "e2e_handlers:hang_fail_closed" in said


#: A user-scope agent for the example's ``subagent`` tool; no ``model:``, so the child
#: runs on the default model of settings.json (the fake one).
AGENT = """---
name: counter
description: Counts things
tools: read, ls
---

You count files.
"""


def test_the_subagent_example_tool_decodes_as_subagent_start_and_stop(
    pi: Pi, pi_executable: Path, workspace: Workspace
) -> None:
    """Pi's example ``subagent`` extension (loaded from the pinned package): its call is a
    before-tool of kind agent and a subagent start naming the agent; its result an
    after-tool and a subagent stop with the child's final text. The child, a separate
    ``pi`` run in the project, loads hookbus's extension too: its own events come in a
    session of their own."""
    example = pi_executable.resolve().parents[1] / "examples" / "extensions" / "subagent"
    assert (example / "index.ts").is_file(), example
    (pi.agent_dir / "agents").mkdir(parents=True)
    (pi.agent_dir / "agents" / "counter.md").write_text(AGENT)
    settings = {"defaultProvider": "fake", "defaultModel": "fake-model"}
    (pi.agent_dir / "settings.json").write_text(json.dumps(settings))
    install(workspace, {})
    call = {"agent": "counter", "task": "E2E-CHILD: count the files"}
    scenario = {"conversations": [
        {"match": "E2E-CHILD", "turns": [{"text": "CHILD-REPORT: 3 files"}]},
        {"match": "E2E-SUB", "turns": [{"tool_use": {"name": "subagent", "input": call}},
                                       {"text": "Parent done."}]},
    ]}  # fmt: skip
    run = pi.run("E2E-SUB: ask the counter", scenario, args=["-e", str(example / "index.ts")])

    assert_ok(run)
    assert "Parent done." in run.process.stdout
    events = workspace.events()
    [parent] = {e["session_id"] for e in events if e["kind"] == "subagent-start"}
    mine = [e for e in events if e["session_id"] == parent]
    # A derived event and its tool event are one dispatch: their order is the bus's.
    assert sorted(kinds(mine)) == sorted([
        "session-start", "prompt-submit", "before-tool", "subagent-start", "after-tool",
        "subagent-stop", "stop", "session-end",
    ])  # fmt: skip
    start = next(e for e in mine if e["kind"] == "subagent-start")
    stop = next(e for e in mine if e["kind"] == "subagent-stop")
    assert start["child"] == {"role": "subagent", "id": None, "type": "counter"}
    assert stop["child"] == {"role": "subagent", "id": None, "type": "counter"}
    assert stop["final_text"] == "CHILD-REPORT: 3 files"
    tool = next(e for e in mine if e["kind"] == "before-tool")["tool"]
    assert (tool["name"], tool["kind"]) == ("subagent", "agent")
    children = {e["session_id"] for e in events} - {parent}
    assert len(children) == 1
    child = [e for e in events if e["session_id"] in children]
    assert "session-start" in kinds(child)
    assert all(e["agent"]["role"] == "main" for e in child)  # Pi does not mark it


#: Pi compacts when a reply's tokens pass the context window less ``reserveTokens``: the
#: fake's 15 tokens in a window of 100 with 90 reserved. It checks before a prompt sent
#: to a continued session (``-c``), and after the last reply.
COMPACTING = {"compaction": {"enabled": True, "reserveTokens": 90, "keepRecentTokens": 1}}


@pytest.mark.parametrize("deny", [False, True], ids=["compacts", "denied"])
def test_compaction_is_a_pre_compact_and_a_deny_cancels_it(
    pi: Pi, workspace: Workspace, deny: bool
) -> None:
    """A continued session over its window: Pi fires session_before_compact, a
    pre-compact of the session with Pi's preparation counts; without a deny Pi asks the
    model for a summary and writes a compaction into the session, with one it does
    neither."""
    install(workspace, {"deny_compact": {"reason": "E2E-NOCOMPACT"}} if deny else {})
    scenario = script("E2E-COMPACT", *[{"text": "Hi."}] * 4)
    assert_ok(pi.run("E2E-COMPACT: hello", scenario))
    (pi.agent_dir / "settings.json").write_text(json.dumps(COMPACTING))
    run = pi.run("E2E-COMPACT: again", scenario, args=["-c"], context_window=100)

    assert_ok(run)
    assert "Hi." in run.process.stdout
    [session] = {e["session_id"] for e in workspace.events()}
    compacts = [e for e in workspace.events() if e["kind"] == "pre-compact"]
    assert compacts, run.describe()
    assert session in compacts[0]["raw"]["sessionFile"]
    assert isinstance(compacts[0]["raw"]["payload"]["preparation"]["tokensBefore"], int)
    entries = read_json_lines(Path(compacts[0]["raw"]["sessionFile"]))
    compactions = [e for e in entries if e["type"] == "compaction"]
    summaries = [r for r in run.model.model_requests()
                 if "context summarization assistant" in json.dumps(r["messages"][0])]  # fmt: skip
    if deny:
        assert (compactions, summaries) == ([], []), run.describe()
    else:
        assert compactions and summaries, run.describe()


def test_a_user_scope_install_under_pi_coding_agent_dir_blocks(
    pi_executable: Path, workspace: Workspace
) -> None:
    """``hookbus install --host pi --scope user`` with ``PI_CODING_AGENT_DIR`` set writes
    the extension where Pi looks for the user's, and Pi, started with the same
    variable in a project of no hookbus configuration, loads it: the deny blocks."""
    reason = "E2E-USERDENY: not in any project"
    agent = workspace.root / "pi-agent"
    config = workspace.home / ".config" / "hookbus" / "config.toml"
    config.parent.mkdir(parents=True)
    shutil.copyfile(HANDLERS, workspace.root / "e2e_handlers.py")
    config.write_text(
        f"python_path = [{json.dumps(str(workspace.root))}]\n"
        'enable = ["e2e_handlers:deny_shell"]\n\n'
        f'[handlers."e2e_handlers:deny_shell"]\nreason = {json.dumps(reason)}\n'
    )
    config.chmod(0o600)
    env = {**workspace.base_env(), "PI_CODING_AGENT_DIR": str(agent)}
    done = subprocess.run(
        [sys.executable, "-m", "hookbus", "install", "--host", "pi", "--scope", "user"],
        cwd=workspace.project, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (agent / "extensions" / "hookbus.ts").is_file()
    assert not (workspace.project / ".pi").exists()
    run = Pi(pi_executable, workspace, str(agent)).run(
        "E2E-USERDENY: please run echo hi", tool_script("E2E-USERDENY")
    )

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    assert run.model.tool_outputs(run.model.conversation("E2E-USERDENY")[1]) == [reason]


def test_with_the_server_path_a_warm_server_answers_the_deny(
    pi: Pi, workspace: Workspace, tmp_path: Path
) -> None:
    """``install --server`` and a running ``hookbus serve``: the extension hands each call
    to the server over its socket (its commands name a missing interpreter: a spawn
    would be the fail-open fallback and the command would run): the deny blocks, the
    model reads the reason, and the server served every event."""
    from . import warm

    reason = "E2E-WARM: echo is not allowed in this repo"
    workspace.install_hookbus({"deny_shell": {"reason": reason}}, host="pi", args=("--server",))
    extension = extensions(workspace) / "hookbus.ts"
    text = extension.read_text().replace(json.dumps(sys.executable),
                                         json.dumps(str(tmp_path / "nowhere" / "python3")))  # fmt: skip
    assert "nowhere" in text
    extension.write_text(text)
    with warm.server(workspace):
        run = pi.run("E2E-WARM: please run echo hi", tool_script("E2E-WARM"))
        served = warm.served(workspace)
    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    _, second = run.model.conversation("E2E-WARM")
    assert run.model.tool_outputs(second) == [reason]
    assert kinds(workspace.events()) == [
        "session-start", "prompt-submit", "before-tool", "stop", "session-end"]  # fmt: skip
    assert served == 5
    assert warm.problems(workspace) == []
