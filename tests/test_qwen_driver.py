"""The Qwen Code driver: the shared contract, plus what is particular to Qwen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

from hookbus import Reply
from hookbus.bus.events import AfterEdit, BeforeTool, Event, PromptSubmit
from hookbus.bus.output import HookOutput
from hookbus.hosts import HOSTS
from hookbus.hosts.qwen import driver as qwen
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "qwen"


def out(data: dict[str, Any]) -> bytes:
    return msgspec.json.encode(data) + b"\n"


def pre_tool(**hso: Any) -> bytes:
    return out({"hookSpecificOutput": {"hookEventName": "PreToolUse", **hso}})


DENY_R = pre_tool(permissionDecision="deny", permissionDecisionReason="R")


class TestQwenContract(DriverContract):
    """The shared contract, on payloads captured from the real Qwen Code 0.24.4
    (``golden/qwen/real``) and on source-built ones."""

    host = "qwen"
    golden_dir = GOLDEN
    before_tool_golden = "real/PreToolUse.run_shell_command"
    refusals: ClassVar[dict[str, HookOutput]] = {
        "PreToolUse": HookOutput(DENY_R),
        "PostToolUse": HookOutput(out({"decision": "block", "reason": "R"})),
        "UserPromptSubmit": HookOutput(out({"decision": "block", "reason": "R"})),
        "PermissionRequest": HookOutput(out({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "R"}}})),
        # Nothing to refuse there: the refusal is the no-opinion.
        "SessionStart": HookOutput(),
        "Stop": HookOutput(),
        "SessionEnd": HookOutput(),
    }  # fmt: skip
    reply_cases = (
        ReplyCase(id="pre-tool-deny", payload="real/PreToolUse.run_shell_command",
                  reply=Reply.deny("no echo"),
                  stdout=pre_tool(permissionDecision="deny", permissionDecisionReason="no echo")),
        ReplyCase(id="pre-tool-deny-without-reason-still-says-why",
                  payload="real/PreToolUse.run_shell_command", reply=Reply(decision="deny"),
                  stdout=pre_tool(permissionDecision="deny",
                                  permissionDecisionReason="Denied by a hookbus handler.")),
        ReplyCase(id="pre-tool-allow-is-no-opinion", payload="real/PreToolUse.run_shell_command",
                  reply=Reply.allow(), stdout=b""),
        ReplyCase(id="pre-tool-ask", payload="real/PreToolUse.run_shell_command",
                  reply=Reply.ask("really?"),
                  stdout=pre_tool(permissionDecision="ask", permissionDecisionReason="really?")),
        ReplyCase(id="pre-tool-rewrite", payload="real/PreToolUse.run_shell_command",
                  reply=Reply.rewrite({"command": "npm test"}),
                  stdout=pre_tool(updatedInput={"command": "npm test"})),
        ReplyCase(id="halt", payload="real/PreToolUse.run_shell_command",
                  reply=Reply.stop_agent("budget exhausted"),
                  stdout=out({"continue": False, "stopReason": "budget exhausted"})),
        ReplyCase(id="user-message", payload="real/PreToolUse.run_shell_command",
                  reply=Reply.tell_user("heads up"), stdout=out({"systemMessage": "heads up"})),
        ReplyCase(id="post-tool-block", payload="real/PostToolUse.run_shell_command",
                  reply=Reply.deny("hidden"), stdout=out({"decision": "block", "reason": "hidden"})),
        ReplyCase(id="post-tool-context", payload="real/PostToolUse.run_shell_command",
                  reply=Reply.add_context("retry with -v"),
                  stdout=out({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                                     "additionalContext": "retry with -v"}})),
        ReplyCase(id="prompt-block", payload="real/UserPromptSubmit", reply=Reply.deny("secrets"),
                  stdout=out({"decision": "block", "reason": "secrets"})),
        ReplyCase(id="session-start-context", payload="real/SessionStart",
                  reply=Reply.add_context("house rules"),
                  stdout=out({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                     "additionalContext": "house rules"}})),
        ReplyCase(id="stop-keep-working", payload="real/Stop",
                  reply=Reply.continue_working("run the tests first"),
                  stdout=out({"decision": "block", "reason": "run the tests first"})),
        ReplyCase(id="notification-takes-nothing", payload="real/Notification",
                  reply=Reply(message="x", context="y"), stdout=b""),
        ReplyCase(id="no-opinion", payload="real/PreToolUse.run_shell_command", reply=Reply(),
                  stdout=b""),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        """Qwen's own rule: stdout is empty or one JSON object, and nothing on stderr
        (with exit 0 Qwen would show it, with exit 2 it would be a block's reason)."""
        assert output.stderr == b""
        if output.stdout:
            assert isinstance(json.loads(output.stdout), dict)


def decode(name: str) -> Event:
    return qwen.driver.decode((GOLDEN / f"{name}.json").read_bytes())


@pytest.mark.parametrize(
    ("payload", "kind", "server"),
    [
        ("real/PreToolUse.run_shell_command", "shell", None),
        ("PreToolUse.read_file", "read", None),
        ("real/PreToolUse.agent", "agent", None),
        ("PreToolUse.mcp", "mcp", "github"),
    ],
)
def test_tool_names_map_to_portable_kinds(payload: str, kind: str, server: str | None) -> None:
    """Qwen tool names become portable kinds; an MCP tool's server is its name's middle."""
    event = decode(payload)
    assert isinstance(event, BeforeTool)
    assert (event.tool.kind, event.tool.mcp_server) == (kind, server)


def test_the_continuation_prompt_is_no_prompt_submit() -> None:
    """The UserPromptSubmit Qwen fires with tool results (empty prompt, no
    ``submitted_prompt``) decodes as ``other``; the user's own prompt as prompt-submit."""
    assert isinstance(decode("real/UserPromptSubmit"), PromptSubmit)
    assert decode("real/UserPromptSubmit.tool-results").kind == "other"


def test_a_subagents_tool_call_names_the_subagent() -> None:
    """``agent_id`` marks a tool call made inside a subagent; the main one is main."""
    assert decode("real/PreToolUse.run_shell_command.in-subagent").agent.role == "subagent"
    assert decode("real/PreToolUse.run_shell_command").agent.role == "main"


def test_edit_tools_also_yield_after_edit() -> None:
    """write_file yields an after-edit of its path."""
    (edit,) = qwen.driver.derive(decode("PostToolUse.write_file"))
    assert isinstance(edit, AfterEdit)
    assert [c.path for c in edit.changes] == ["/home/dev/shop-api/NOTES.md"]


def test_host_facts() -> None:
    """Qwen writes timeouts in milliseconds and names the project in QWEN_PROJECT_DIR."""
    facts = HOSTS["qwen"]
    assert (facts.timeout_unit, facts.timeout_value(60.0)) == ("ms", 60000)
    assert facts.project_dir({"QWEN_PROJECT_DIR": "/p"}, None) == "/p"


_KNOWN = {"session_id", "cwd", "hook_event_name", "tool_name", "tool_input", "tool_response",
          "transcript_path", "timestamp", "permission_mode", "prompt_id", "agent_id",
          "agent_type", "model", "tool_use_id", "duration_ms", "error", "source", "prompt",
          "submitted_prompt", "stop_hook_active", "last_assistant_message",
          "agent_transcript_path", "trigger", "custom_instructions", "reason"}  # fmt: skip

_text = st.text(max_size=40)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _text,
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(_text, kids, max_size=3),
    max_leaves=8,
)


@settings(max_examples=examples(200), deadline=None)
@given(
    name=st.sampled_from(qwen.ALL_EVENTS),
    tool=st.sampled_from([*qwen.TOOLS, "mcp__x__y", "unknown_tool"]),
    tool_input=st.dictionaries(_text, _json, max_size=4),
    response=_json,
    extra=st.dictionaries(_text.filter(lambda k: k not in _KNOWN), _json, max_size=3),
)
def test_any_well_formed_payload_decodes(
    name: str, tool: str, tool_input: dict[str, Any], response: Any, extra: dict[str, Any]
) -> None:
    """Any payload with the base fields decodes to an event of its native name, whatever
    the tool input, tool response or unknown fields; and any reply encodes to JSON."""
    payload = {**extra, "session_id": "s", "cwd": "/p", "hook_event_name": name,
               "tool_name": tool, "tool_input": tool_input, "tool_response": response}  # fmt: skip
    event = qwen.driver.decode(json.dumps(payload).encode())
    assert (event.native, event.host) == (name, "qwen")
    encoded = qwen.driver.encode(name, Reply.deny("no")).output
    assert encoded.stdout == b"" or isinstance(json.loads(encoded.stdout), dict)
