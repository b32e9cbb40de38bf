"""The Cursor driver: the shared contract on payloads built from cursor.com/docs/hooks,
the answers Cursor owes on every path, and a Claude install that Cursor runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import FAIL_CLOSED_SHELL, examples

from hookbus import Reply
from hookbus.bus.errors import DecodeError
from hookbus.bus.events import (
    AfterEdit,
    AfterTool,
    BeforeTool,
    Event,
    Other,
    PromptSubmit,
    Stop,
    SubagentStart,
    SubagentStop,
)
from hookbus.bus.output import HookOutput
from hookbus.hosts import HOSTS
from hookbus.hosts.cursor import driver as cursor
from hookbus.runtime.peek import dialect
from hookbus.testing import HookClient
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "cursor"

#: The keys each event reads (cursor.com/docs/hooks, "Output"): nothing else is sent.
PERMISSION = {"permission", "user_message", "agent_message"}
READS: dict[str, set[str]] = {
    "preToolUse": {*PERMISSION, "updated_input"},
    "beforeShellExecution": PERMISSION,
    "beforeMCPExecution": PERMISSION,
    "subagentStart": PERMISSION,
    "beforeReadFile": {"permission", "user_message"},
    "beforeTabFileRead": {"permission"},
    "beforeSubmitPrompt": {"continue", "user_message"},
    "postToolUse": {"additional_context"},
    "sessionStart": {"additional_context"},
    "stop": {"followup_message"},
    "subagentStop": {"followup_message"},
    "preCompact": {"user_message"},
}
#: Where an answer is owed whatever happens (never "{}").
OWED = {"subagentStart": {"permission"}, "beforeSubmitPrompt": {"continue"}}


def validate_reply(native: str, output: HookOutput) -> None:
    """What Cursor acts on: exit 0 (2 would block, others are failures), and one JSON
    object on stdout of the keys the event reads, with the answers it owes."""
    assert (output.exit_code, output.stderr) == (0, b"")
    sent = json.loads(output.stdout)
    assert isinstance(sent, dict)
    key = cursor.own(native)
    assert set(sent) <= READS.get(key, set()), (native, sent)
    assert OWED.get(key, set()) <= set(sent), (native, sent)
    if "permission" in sent:
        assert sent["permission"] in ("allow", "deny", "ask")
        assert sent["permission"] != "ask" or key in cursor.ASKS


def out(**fields: Any) -> bytes:
    return msgspec.json.encode(fields) + b"\n"


QUIET = b"{}\n"


class TestCursorContract(DriverContract):
    """The shared contract, on payloads built from Cursor's documented fields."""

    host = "cursor"
    golden_dir = GOLDEN
    before_tool_golden = "preToolUse.Shell"
    refusals: ClassVar[dict[str, HookOutput]] = {
        "preToolUse": HookOutput(out(permission="deny", user_message="R", agent_message="R")),
        "beforeShellExecution": HookOutput(
            out(permission="deny", user_message="R", agent_message="R")
        ),
        "beforeReadFile": HookOutput(out(permission="deny", user_message="R")),
        "beforeTabFileRead": HookOutput(out(permission="deny")),
        "subagentStart": HookOutput(out(permission="deny", user_message="R", agent_message="R")),
        "beforeSubmitPrompt": HookOutput(out(**{"continue": False, "user_message": "R"})),
        # Nothing to refuse: the refusal is the no-opinion.
        "postToolUse": HookOutput(QUIET),
        "stop": HookOutput(QUIET),
        "sessionEnd": HookOutput(QUIET),
    }
    reply_cases = (
        ReplyCase(id="pre-tool-deny", payload="preToolUse.Shell", reply=Reply.deny("no"),
                  stdout=out(permission="deny", user_message="no", agent_message="no")),
        ReplyCase(id="pre-tool-deny-tells-the-user-their-own-text",
                  payload="preToolUse.Shell",
                  reply=Reply(decision="deny", reason="for the agent", message="for you"),
                  stdout=out(permission="deny", user_message="for you",
                             agent_message="for the agent")),
        ReplyCase(id="pre-tool-deny-without-reason-still-says-why", payload="preToolUse.Shell",
                  reply=Reply(decision="deny", reason=" "),
                  stdout=out(permission="deny", user_message="Denied by a hookbus handler.",
                             agent_message="Denied by a hookbus handler.")),
        ReplyCase(id="pre-tool-allow", payload="preToolUse.Shell", reply=Reply.allow(),
                  stdout=out(permission="allow")),
        ReplyCase(id="pre-tool-ask-is-a-deny", payload="preToolUse.Shell",
                  reply=Reply.ask("sure?"),
                  stdout=out(permission="deny", user_message="sure?", agent_message="sure?")),
        ReplyCase(id="pre-tool-rewrite-is-an-allow", payload="preToolUse.Shell",
                  reply=Reply.rewrite({"command": "npm test -- --offline"}),
                  stdout=out(permission="allow",
                             updated_input={"command": "npm test -- --offline"})),
        ReplyCase(id="pre-tool-context-is-dropped", payload="preToolUse.Shell",
                  reply=Reply.add_context("slow"), stdout=QUIET),
        ReplyCase(id="shell-ask", payload="beforeShellExecution", reply=Reply.ask("db!"),
                  stdout=out(permission="ask", user_message="db!", agent_message="db!")),
        ReplyCase(id="shell-rewrite-is-dropped", payload="beforeShellExecution",
                  reply=Reply.rewrite({"command": "ls"}), stdout=QUIET),
        ReplyCase(id="mcp-deny", payload="beforeMCPExecution", reply=Reply.deny("no db"),
                  stdout=out(permission="deny", user_message="no db", agent_message="no db")),
        ReplyCase(id="read-ask-is-a-deny", payload="beforeReadFile", reply=Reply.ask("secret"),
                  stdout=out(permission="deny", user_message="secret")),
        ReplyCase(id="tab-read-deny-says-no-message", payload="beforeTabFileRead",
                  reply=Reply.deny("secret"), stdout=out(permission="deny")),
        ReplyCase(id="subagent-deny", payload="subagentStart", reply=Reply.deny("no agents"),
                  stdout=out(permission="deny", user_message="no agents",
                             agent_message="no agents")),
        ReplyCase(id="subagent-ask-is-a-deny", payload="subagentStart", reply=Reply.ask("?"),
                  stdout=out(permission="deny", user_message="?", agent_message="?")),
        ReplyCase(id="subagent-no-opinion-allows", payload="subagentStart", reply=Reply(),
                  stdout=out(permission="allow")),
        ReplyCase(id="prompt-deny", payload="beforeSubmitPrompt", reply=Reply.deny("secret"),
                  stdout=out(**{"continue": False, "user_message": "secret"})),
        ReplyCase(id="prompt-allow", payload="beforeSubmitPrompt", reply=Reply.allow(),
                  stdout=out(**{"continue": True})),
        ReplyCase(id="prompt-no-opinion-continues", payload="beforeSubmitPrompt",
                  reply=Reply(), stdout=out(**{"continue": True})),
        ReplyCase(id="post-tool-context", payload="postToolUse.Shell",
                  reply=Reply.add_context("flaky"), stdout=out(additional_context="flaky")),
        ReplyCase(id="post-tool-deny-is-dropped", payload="postToolUse.Shell",
                  reply=Reply.deny("late"), stdout=QUIET),
        ReplyCase(id="session-start-context", payload="sessionStart",
                  reply=Reply.add_context("rules"), stdout=out(additional_context="rules")),
        ReplyCase(id="stop-follow-up", payload="stop", reply=Reply.continue_working("test first"),
                  stdout=out(followup_message="test first")),
        ReplyCase(id="subagent-stop-follow-up", payload="subagentStop",
                  reply=Reply.continue_working("more"), stdout=out(followup_message="more")),
        ReplyCase(id="compact-message", payload="preCompact", reply=Reply.tell_user("compacting"),
                  stdout=out(user_message="compacting")),
        ReplyCase(id="session-end-says-nothing", payload="sessionEnd",
                  reply=Reply(context="x", message="y", halt="z"), stdout=QUIET),
        ReplyCase(id="no-opinion", payload="preToolUse.Shell", reply=Reply(), stdout=QUIET),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        validate_reply(native or "preToolUse", output)


def decode(name: str) -> Any:
    return cursor.driver.decode((GOLDEN / f"{name}.json").read_bytes())


REPLIES = [
    Reply.deny("R"), Reply.allow(), Reply.ask("R"), Reply.rewrite({"command": "ls"}),
    Reply.add_context("c"), Reply.tell_user("m"), Reply.continue_working("k"),
    Reply.stop_agent("h"), Reply(), Reply(decision="allow", updated_input={"command": "ls"},
                                          context="c", message="m", keep_working="k", halt="h"),
]  # fmt: skip


@pytest.mark.parametrize("native", [*cursor.ALL_EVENTS, "PreToolUse", "Stop", "workspaceOpen"])
@pytest.mark.parametrize("reply", REPLIES, ids=lambda r: ",".join(msgspec.structs.asdict(r)))
def test_every_reply_to_every_event_is_valid_json_it_reads(native: str, reply: Reply) -> None:
    """Whatever a merged reply holds, each event's stdout is one JSON object of keys it
    reads, with the answer it owes; what it could not take is reported as dropped."""
    encoded = cursor.driver.encode(native, reply)
    validate_reply(native, encoded.output)
    if encoded.output.stdout == QUIET and not reply.empty:
        assert encoded.dropped


def test_json_strings_are_read_as_objects() -> None:
    """``tool_output`` and the MCP ``tool_input``/``result_json`` arrive as JSON strings."""
    post = decode("postToolUse.Shell")
    assert isinstance(post, AfterTool)
    assert json.loads(bytes(post.response)) == {"exitCode": 1, "stdout": "Tests: 1 failed, 41 passed",
                                                "stderr": ""}  # fmt: skip
    mcp = decode("beforeMCPExecution")
    assert isinstance(mcp, BeforeTool)
    assert (mcp.tool.kind, mcp.tool.input) == ("mcp", {"sql": "SELECT count(*) FROM orders"})
    after = decode("afterMCPExecution")
    assert isinstance(after, AfterTool)
    assert after.output == '{"rows": [[1042]]}'


def test_tools_kinds_and_paths() -> None:
    """Shell carries its command, Write its path, Task what it spawns, MCP: is mcp."""
    shell, write, task, mcp = (decode(f"preToolUse.{t}") for t in ("Shell", "Write", "Task", "MCP"))
    assert (shell.tool.kind, shell.tool.command) == ("shell", "npm test -- --runInBand")
    assert (write.tool.kind, write.tool.paths) == ("edit", ("/home/dev/shop-api/src/checkout.ts",))
    assert task.tool.kind == "agent"
    assert task.tool.spawns[0].agent_type == "explore"
    assert mcp.tool.kind == "mcp"
    before = decode("beforeShellExecution")
    assert (before.tool.name, before.tool.command) == ("Shell", "npm test -- --runInBand")
    edit = decode("afterFileEdit")
    assert isinstance(edit, AfterEdit)
    assert [c.path for c in edit.changes] == ["/home/dev/shop-api/src/checkout.ts"]


def test_subagent_identity_and_the_loop_guard() -> None:
    """subagentStart names the child, its call and model; loop_count past 0 is the loop
    guard of stop and subagentStop; a tool call's agent is unknown (Cursor says not)."""
    start = decode("subagentStart")
    assert isinstance(start, SubagentStart)
    assert (start.child.id, start.child.type, start.child.parent_id) == (
        "sa-3b8e61f0",
        "explore",
        "5e2c9a17-83b4-4f6d-a0c1-9d7e3b2f4a68",
    )
    assert (start.call_id, start.child_model) == ("toolu_01Task9bX4", "inherit")
    stop = decode("subagentStop")
    assert isinstance(stop, SubagentStop)
    assert stop.final_text is not None and stop.final_text.startswith("Callers:")
    assert (stop.status, stop.stop_hook_active) == ("completed", False)
    first, again = decode("stop"), decode("stop.followup-sent")
    assert isinstance(first, Stop) and isinstance(again, Stop)
    assert (first.stop_hook_active, again.stop_hook_active) == (False, True)
    assert decode("preToolUse.Shell").agent.role == "unknown"
    assert isinstance(decode("beforeSubmitPrompt"), PromptSubmit)
    assert isinstance(decode("afterAgentResponse"), Other)


def test_specific_events_are_registered_only_when_named() -> None:
    """A shell call fires preToolUse and beforeShellExecution: a before-tool handler is
    registered on preToolUse alone, so it runs once per call; named, the other too."""
    assert cursor.driver.natives("before-tool") == ("preToolUse",)
    assert cursor.driver.natives("after-tool") == ("postToolUse", "postToolUseFailure")
    assert cursor.driver.natives("before-tool", ("beforeShellExecution",)) == (
        "beforeShellExecution",
    )
    assert cursor.driver.natives("other") == ()
    assert cursor.driver.natives("after-edit") == ("afterFileEdit",)


FIELDS = st.sampled_from(["conversation_id", "workspace_roots", "tool_name", "tool_input",
                          "tool_output", "loop_count", "subagent_id", "edits", "file_path",
                          "command", "duration", "result_json", "hook_event_name", "prompt"])  # fmt: skip
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=examples(300), deadline=None)
@given(
    event=st.sampled_from([*cursor.ALL_EVENTS, "PreToolUse", "somethingNew"]),
    overrides=st.dictionaries(FIELDS, json_values, max_size=4),
)
def test_any_field_values_decode_or_raise_decode_error(
    event: str, overrides: dict[str, object]
) -> None:
    """Wrong types anywhere give a DecodeError (answered as no opinion), never a crash."""
    payload = {"conversation_id": "c", "workspace_roots": ["/p"], "hook_event_name": event,
               "tool_name": "Shell", "tool_input": {"command": "ls"}, **overrides}  # fmt: skip
    try:
        decoded = cursor.driver.decode(json.dumps(payload).encode())
    except DecodeError:
        return
    assert isinstance(decoded, Event)
    assert decoded.native == payload["hook_event_name"]


CRASHES = """
import hookbus

@hookbus.handler("subagent-start")
def crashes(event):
    raise RuntimeError("boom")
"""


def test_a_subagent_start_handler_that_crashes_answers_allow(tmp_path: Path) -> None:
    """subagentStart always gets allow or deny: a handler that raises leaves the allow
    (any failure allows), with a diagnostic, never an empty answer."""
    (tmp_path / "hooks_crash.py").write_text(CRASHES)
    config = tmp_path / "crash.toml"
    config.write_text('python_path = ["."]\nenable = ["hooks_crash:crashes"]\n')
    env = {**os.environ, "HOOKBUS_CONFIG": str(config), "HOOKBUS_STATE_DIR": str(tmp_path / "st")}
    done = subprocess.run([sys.executable, "-m", "hookbus", "run", "--host", "cursor"],
                          input=(GOLDEN / "subagentStart.json").read_bytes(), cwd=tmp_path,
                          capture_output=True, env=env, timeout=60, check=False)  # fmt: skip
    assert (done.returncode, done.stdout) == (0, b'{"permission":"allow"}\n'), done
    lines = (tmp_path / "st" / "diagnostics.jsonl").read_text().splitlines()
    assert "handler-error" in [json.loads(line)["event"] for line in lines]


@pytest.mark.parametrize("name", [None, "missing"])
def test_a_tool_call_naming_no_tool_is_refused_by_a_fail_closed_guard(
    tmp_path: Path, name: str | None
) -> None:
    """A preToolUse whose ``tool_name`` is null or missing is unreadable (it could be a
    shell command), so a fail-closed shell guard's refusal answers it, not an allow."""
    (tmp_path / "hooks_shell.py").write_text(FAIL_CLOSED_SHELL)
    config = tmp_path / "shell.toml"
    config.write_text('python_path = ["."]\nenable = ["hooks_shell:no_shell"]\n')
    payload = json.loads((GOLDEN / "preToolUse.Shell.json").read_text())
    if name == "missing":
        del payload["tool_name"]
    else:
        payload["tool_name"] = name
    env = {**os.environ, "HOOKBUS_CONFIG": str(config), "HOOKBUS_STATE_DIR": str(tmp_path / "st")}
    done = subprocess.run([sys.executable, "-m", "hookbus", "run", "--host", "cursor",
                           "--event", "preToolUse"], input=json.dumps(payload).encode(),
                          cwd=tmp_path, capture_output=True, env=env, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done
    assert json.loads(done.stdout)["permission"] == "deny", done
    with pytest.raises(DecodeError, match="without a tool name"):
        cursor.driver.decode(json.dumps(payload).encode())


def test_garbage_on_subagent_start_still_allows() -> None:
    """Input that cannot be read, on subagentStart: the allow, never nothing."""
    result = HookClient("cursor").run(b'{"hook_event_name": "subagentStart", "workspace_roots": 5}')
    assert (result.exit_code, result.stdout) == (0, b'{"permission":"allow"}\n')


def test_a_cursor_payload_reaching_a_claude_command_is_cursors() -> None:
    """Cursor's payload (what ``.claude/settings.json`` hooks get in Cursor) is told from
    Claude's by cursor_version and conversation_id; Claude's own stays Claude's."""
    claude = HOSTS["claude"]
    payload = json.loads((GOLDEN / "preToolUse.Shell.json").read_text())
    assert dialect(claude, payload) is HOSTS["cursor"]
    own = json.loads((Path(__file__).parent / "golden/claude/PreToolUse.Bash.json").read_text())
    assert dialect(claude, own) is claude


def test_no_opinion_and_timeouts() -> None:
    """Every no-opinion is valid JSON that grants nothing; subagentStart allows and
    beforeSubmitPrompt continues; timeouts are whole seconds."""
    for native in cursor.ALL_EVENTS:
        expected = OWED.get(native) and cursor.driver.no_opinion(native).stdout != QUIET
        assert bool(expected) == (native in OWED)
        assert b"deny" not in cursor.driver.no_opinion(native).stdout
    assert cursor.driver.no_opinion("preToolUse") == HookOutput(QUIET)
    assert HOSTS["cursor"].timeout_value(12.2) == 13
