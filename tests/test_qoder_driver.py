"""The Qoder CLI driver: the shared contract, every reply checked against the fields
Qoder's SDK reference documents per event, and what is particular to Qoder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import JSON_VALUES, SHORT_TEXT, examples, hook_specific, json_line

from hookbus import Reply
from hookbus.bus.events import AfterEdit, AfterTool, BeforeTool, Event
from hookbus.bus.output import HookOutput
from hookbus.hosts import HOSTS
from hookbus.hosts.qoder import driver as qoder
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "qoder"


#: ``HookJSONOutput`` and each event's ``hookSpecificOutput`` in the SDK reference.
TOP = {"continue", "stopReason", "decision", "reason"}
SPECIFIC = {
    "PreToolUse": {"permissionDecision", "permissionDecisionReason", "updatedInput",
                   "additionalContext"},
    "PostToolUse": {"updatedToolOutput", "additionalContext"},
    "UserPromptSubmit": {"additionalContext"},
    "SessionStart": {"additionalContext"},
    "PermissionRequest": {"decision"},
}  # fmt: skip


class TestQoderContract(DriverContract):
    """The shared contract, on payloads composed from Qoder's SDK reference."""

    host = "qoder"
    golden_dir = GOLDEN
    before_tool_golden = "PreToolUse.Bash"
    refusals: ClassVar[dict[str, HookOutput]] = {
        "PreToolUse": HookOutput(hook_specific("PreToolUse", permissionDecision="deny",
                                     permissionDecisionReason="R")),
        "PostToolUse": HookOutput(json_line({"decision": "block", "reason": "R"})),
        "UserPromptSubmit": HookOutput(json_line({"decision": "block", "reason": "R"})),
        "PermissionRequest": HookOutput(hook_specific("PermissionRequest",
                                            decision={"behavior": "deny", "message": "R"})),
        "SessionStart": HookOutput(),
        "Stop": HookOutput(),
        "SubagentStop": HookOutput(),
        "FileChanged": HookOutput(),
    }  # fmt: skip
    reply_cases = (
        ReplyCase(id="pre-tool-deny", payload="PreToolUse.Bash", reply=Reply.deny("no rm"),
                  stdout=hook_specific("PreToolUse", permissionDecision="deny",
                             permissionDecisionReason="no rm")),
        ReplyCase(id="pre-tool-allow", payload="PreToolUse.Bash", reply=Reply.allow(),
                  stdout=hook_specific("PreToolUse", permissionDecision="allow")),
        ReplyCase(id="pre-tool-ask", payload="PreToolUse.Bash", reply=Reply.ask("sure?"),
                  stdout=hook_specific("PreToolUse", permissionDecision="ask",
                             permissionDecisionReason="sure?")),
        ReplyCase(id="pre-tool-rewrite", payload="PreToolUse.Bash",
                  reply=Reply.rewrite({"command": "rm -rf ./build"}),
                  stdout=hook_specific("PreToolUse", updatedInput={"command": "rm -rf ./build"})),
        ReplyCase(id="pre-tool-context", payload="PreToolUse.Bash",
                  reply=Reply.add_context("the build dir is generated"),
                  stdout=hook_specific("PreToolUse", additionalContext="the build dir is generated")),
        ReplyCase(id="halt", payload="PreToolUse.Bash", reply=Reply.stop_agent("budget"),
                  stdout=json_line({"continue": False, "stopReason": "budget"})),
        ReplyCase(id="user-message-is-not-sent", payload="PreToolUse.Bash",
                  reply=Reply.tell_user("hi"), stdout=b""),
        ReplyCase(id="permission-request-deny", payload="PermissionRequest",
                  reply=Reply.deny("no publishing"),
                  stdout=hook_specific("PermissionRequest",
                             decision={"behavior": "deny", "message": "no publishing"})),
        ReplyCase(id="permission-request-allow", payload="PermissionRequest",
                  reply=Reply.allow(), stdout=hook_specific("PermissionRequest",
                                                  decision={"behavior": "allow"})),
        ReplyCase(id="post-tool-block", payload="PostToolUse.Bash", reply=Reply.deny("flaky"),
                  stdout=json_line({"decision": "block", "reason": "flaky"})),
        ReplyCase(id="post-tool-context", payload="PostToolUse.Bash",
                  reply=Reply.add_context("rerun with -v"),
                  stdout=hook_specific("PostToolUse", additionalContext="rerun with -v")),
        ReplyCase(id="prompt-block", payload="UserPromptSubmit", reply=Reply.deny("secrets"),
                  stdout=json_line({"decision": "block", "reason": "secrets"})),
        ReplyCase(id="session-start-context", payload="SessionStart.startup",
                  reply=Reply.add_context("house rules"),
                  stdout=hook_specific("SessionStart", additionalContext="house rules")),
        ReplyCase(id="stop-keep-working", payload="Stop", reply=Reply.continue_working("tests"),
                  stdout=json_line({"decision": "block", "reason": "tests"})),
        ReplyCase(id="subagent-stop-cannot-keep-working", payload="SubagentStop",
                  reply=Reply.continue_working("again"), stdout=b""),
        ReplyCase(id="no-opinion", payload="PreToolUse.Bash", reply=Reply(), stdout=b""),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        """Qoder's own rules: nothing on stderr; stdout empty (plain text would be context
        on UserPromptSubmit and SessionStart) or one JSON object holding only
        ``HookJSONOutput``'s fields and the event's own ``hookSpecificOutput``."""
        assert output.stderr == b""
        if not output.stdout:
            return
        reply = json.loads(output.stdout)
        assert isinstance(reply, dict)
        assert set(reply) - {"hookSpecificOutput"} <= TOP, reply
        if reply.get("decision") is not None:
            assert reply["decision"] == "block" and reply.get("reason")
        if "continue" in reply:
            assert native in qoder.HALT
        if "hookSpecificOutput" in reply:
            specific = reply["hookSpecificOutput"]
            assert specific.pop("hookEventName") == native
            assert set(specific) <= SPECIFIC.get(native or "", set()), reply


def decode(name: str) -> Event:
    return qoder.driver.decode((GOLDEN / f"{name}.json").read_bytes())


@pytest.mark.parametrize(
    ("payload", "kind", "server"),
    [
        ("PreToolUse.Bash", "shell", None),
        ("PreToolUse.Read", "read", None),
        ("PreToolUse.Edit", "edit", None),
        ("PreToolUse.NotebookEdit", "edit", None),
        ("PreToolUse.Agent", "agent", None),
        ("PreToolUse.mcp", "mcp", "github"),
        ("PreToolUse.Mcp.generic", "mcp", "github"),
        ("PreToolUse.unknown-tool", "other", None),
    ],
)
def test_tool_names_map_to_portable_kinds(payload: str, kind: str, server: str | None) -> None:
    """Qoder's built-in tools become portable kinds; an MCP tool's server is its name's
    middle, or the generic Mcp tool's ``server_name``."""
    event = decode(payload)
    assert isinstance(event, BeforeTool)
    assert (event.tool.kind, event.tool.mcp_server) == (kind, server)


def test_a_subagents_tool_call_names_the_subagent() -> None:
    """``agent_id`` marks a tool call made inside a subagent; SubagentStart names the
    child and runs in the main agent."""
    assert decode("PreToolUse.Bash.in-subagent").agent.id == "agent-7c1e"
    assert decode("PreToolUse.Bash").agent.role == "main"
    start = decode("SubagentStart")
    assert (start.agent.role, start.child.type) == ("main", "reviewer")


def test_edit_tools_yield_after_edit_only_when_they_took() -> None:
    """Write yields an after-edit of its path; an Edit whose output says
    ``success: false`` is a failed after-tool with the output's error, and no edit."""
    (edit,) = qoder.driver.derive(decode("PostToolUse.Write"))
    assert isinstance(edit, AfterEdit)
    assert [c.path for c in edit.changes] == ["/home/dev/shop-api/NOTES.md"]
    failed = decode("PostToolUse.Edit.failed")
    assert isinstance(failed, AfterTool)
    assert failed.error == "old_string not found"
    assert qoder.driver.derive(failed) == ()


def test_unsupported_reply_parts_are_dropped_and_reported() -> None:
    """What Qoder does not document is not sent, and each drop is reported: no
    systemMessage anywhere, no continue outside its six events, no keep-working on
    SubagentStop."""
    message = qoder.driver.encode("Stop", Reply.tell_user("x"))
    assert (message.output.stdout, [d.field for d in message.dropped]) == (b"", ["message"])
    halt = qoder.driver.encode("SessionEnd", Reply.stop_agent("now"))
    assert (halt.output.stdout, [d.field for d in halt.dropped]) == (b"", ["halt"])
    sub = qoder.driver.encode("SubagentStop", Reply.continue_working("more"))
    assert [d.why for d in sub.dropped] == ["SubagentStop: only Stop can keep working"]


def test_host_facts() -> None:
    """Qoder writes timeouts in whole seconds; the project root is the input's cwd."""
    facts = HOSTS["qoder"]
    assert (facts.timeout_unit, facts.timeout_value(10.5), facts.timeout_for(None)) == (
        "s", 11, 60.0,
    )  # fmt: skip
    assert facts.project_dir({"QODER_PROJECT_DIR": "/p"}, {"cwd": "/q"}) == "/q"


_KNOWN = {"session_id", "cwd", "hook_event_name", "tool_name", "tool_input", "tool_response",
          "transcript_path", "permission_mode", "prompt_id", "agent_id", "agent_type", "model",
          "tool_use_id", "source", "prompt", "stop_hook_active", "last_assistant_message",
          "agent_transcript_path", "trigger", "custom_instructions", "reason", "mcp_server",
          "duration_ms", "error", "compact_summary"}  # fmt: skip


@settings(max_examples=examples(200), deadline=None)
@given(
    name=st.sampled_from(qoder.ALL_EVENTS),
    tool=st.sampled_from([*qoder.TOOLS, "mcp__x__y", "UnknownTool"]),
    tool_input=st.dictionaries(SHORT_TEXT, JSON_VALUES, max_size=4),
    response=JSON_VALUES,
    extra=st.dictionaries(SHORT_TEXT.filter(lambda k: k not in _KNOWN), JSON_VALUES, max_size=3),
)
def test_any_well_formed_payload_decodes(
    name: str, tool: str, tool_input: dict[str, Any], response: Any, extra: dict[str, Any]
) -> None:
    """Any payload with the base fields decodes to an event of its native name, whatever
    the tool input, tool response or unknown fields; and any reply encodes to JSON."""
    payload = {**extra, "session_id": "s", "cwd": "/p", "hook_event_name": name,
               "tool_name": tool, "tool_input": tool_input, "tool_response": response}  # fmt: skip
    event = qoder.driver.decode(json.dumps(payload).encode())
    assert (event.native, event.host) == (name, "qoder")
    encoded = qoder.driver.encode(name, Reply.deny("no")).output
    assert encoded.stdout == b"" or isinstance(json.loads(encoded.stdout), dict)
