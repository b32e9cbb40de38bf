"""The VS Code agent-hooks driver: the shared contract, plus what is particular to VS Code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples
from test_decode_properties import json_values

from hookbus import Reply
from hookbus.bus.errors import DecodeError
from hookbus.bus.events import AfterEdit, AfterTool, BeforeTool, Event, SessionStart, SubagentStart
from hookbus.bus.output import HookOutput
from hookbus.hosts import HOSTS
from hookbus.hosts.vscode import driver as vscode
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "vscode"
SHELL = "PreToolUse.run_in_terminal"


def out(data: dict[str, Any]) -> bytes:
    return msgspec.json.encode(data) + b"\n"


def pre_tool(**hso: Any) -> bytes:
    return out({"hookSpecificOutput": {"hookEventName": "PreToolUse", **hso}})


class TestVscodeContract(DriverContract):
    """The shared contract, on payloads built from the hooks reference's shapes."""

    host = "vscode"
    golden_dir = GOLDEN
    before_tool_golden = SHELL
    refusals: ClassVar[dict[str, HookOutput]] = {
        "PreToolUse": HookOutput(pre_tool(permissionDecision="deny", permissionDecisionReason="R")),
        "PostToolUse": HookOutput(out({"decision": "block", "reason": "R"})),
        # No block of one prompt: the request is stopped (reported as degraded).
        "UserPromptSubmit": HookOutput(out({"continue": False, "stopReason": "R"})),
        # Nothing to refuse there: the refusal is the no-opinion.
        "SessionStart": HookOutput(),
        "PreCompact": HookOutput(),
        "SubagentStart": HookOutput(),
        "SubagentStop": HookOutput(),
        "Stop": HookOutput(),
    }  # fmt: skip
    reply_cases = (
        ReplyCase(id="pre-tool-deny", payload=SHELL, reply=Reply.deny("no rm"),
                  stdout=pre_tool(permissionDecision="deny", permissionDecisionReason="no rm")),
        ReplyCase(id="pre-tool-deny-without-reason-still-says-why", payload=SHELL,
                  reply=Reply(decision="deny"),
                  stdout=pre_tool(permissionDecision="deny",
                                  permissionDecisionReason="Denied by a hookbus handler.")),
        ReplyCase(id="pre-tool-allow", payload=SHELL, reply=Reply.allow(),
                  stdout=pre_tool(permissionDecision="allow")),
        ReplyCase(id="pre-tool-ask", payload=SHELL, reply=Reply.ask("really?"),
                  stdout=pre_tool(permissionDecision="ask", permissionDecisionReason="really?")),
        ReplyCase(id="pre-tool-rewrite", payload=SHELL,
                  reply=Reply.rewrite({"command": "git status --short"}),
                  stdout=pre_tool(updatedInput={"command": "git status --short"})),
        ReplyCase(id="pre-tool-context", payload=SHELL, reply=Reply.add_context("mind the CI"),
                  stdout=pre_tool(additionalContext="mind the CI")),
        ReplyCase(id="halt", payload=SHELL, reply=Reply.stop_agent("budget exhausted"),
                  stdout=out({"continue": False, "stopReason": "budget exhausted"})),
        ReplyCase(id="user-message", payload=SHELL, reply=Reply.tell_user("heads up"),
                  stdout=out({"systemMessage": "heads up"})),
        ReplyCase(id="post-tool-block", payload="PostToolUse.run_in_terminal",
                  reply=Reply.deny("hidden"), stdout=out({"decision": "block", "reason": "hidden"})),
        ReplyCase(id="post-tool-context", payload="PostToolUse.create_file",
                  reply=Reply.add_context("format it"),
                  stdout=out({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                                                     "additionalContext": "format it"}})),
        ReplyCase(id="prompt-deny-stops-the-request", payload="UserPromptSubmit",
                  reply=Reply.deny("secrets"),
                  stdout=out({"continue": False, "stopReason": "secrets"})),
        ReplyCase(id="prompt-takes-no-context", payload="UserPromptSubmit",
                  reply=Reply.add_context("x"), stdout=b""),
        ReplyCase(id="session-start-context", payload="SessionStart",
                  reply=Reply.add_context("house rules"),
                  stdout=out({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                     "additionalContext": "house rules"}})),
        ReplyCase(id="subagent-start-context", payload="SubagentStart",
                  reply=Reply.add_context("be brief"),
                  stdout=out({"hookSpecificOutput": {"hookEventName": "SubagentStart",
                                                     "additionalContext": "be brief"}})),
        # Top level (the extension's StopHookOutput) and nested (the hooks reference).
        ReplyCase(id="stop-keep-working", payload="Stop",
                  reply=Reply.continue_working("run the tests first"),
                  stdout=out({"decision": "block", "reason": "run the tests first",
                              "hookSpecificOutput": {"hookEventName": "Stop", "decision": "block",
                                                     "reason": "run the tests first"}})),
        ReplyCase(id="subagent-stop-keep-working", payload="SubagentStop",
                  reply=Reply.continue_working("check the edge cases"),
                  stdout=out({"decision": "block", "reason": "check the edge cases"})),
        ReplyCase(id="stop-deny-is-nothing", payload="Stop", reply=Reply.deny("x"), stdout=b""),
        ReplyCase(id="no-opinion", payload=SHELL, reply=Reply(), stdout=b""),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        """VS Code's own rule: exit 0 with empty stdout or one JSON object (other text is
        logged and ignored), nothing on stderr (shown to the user as a warning)."""
        assert output.stderr == b""
        if output.stdout:
            assert isinstance(json.loads(output.stdout), dict)


def decode(name: str) -> Event:
    return vscode.driver.decode((GOLDEN / f"{name}.json").read_bytes())


@pytest.mark.parametrize(
    ("payload", "kind", "paths"),
    [
        (SHELL, "shell", ()),
        ("PreToolUse.read_file", "read", ("/home/dev/shop-api/README.md",)),
        ("PreToolUse.replace_string_in_file", "edit", ("/home/dev/shop-api/README.md",)),
        ("PreToolUse.apply_patch", "edit", ("/home/dev/shop-api/README.md",)),
        ("PreToolUse.multi_replace_string_in_file", "edit",
         ("/home/dev/shop-api/README.md", "/home/dev/shop-api/docs/index.md")),
        ("PreToolUse.runSubagent", "agent", ()),
        ("PreToolUse.mcp_github_get_issue", "mcp", ()),
        ("PreToolUse.docs-example", "other", ()),
    ],
)  # fmt: skip
def test_tool_names_map_to_kinds_and_paths(payload: str, kind: str, paths: tuple[str, ...]) -> None:
    """Copilot Chat's tool ids become portable kinds; each edit tool's files are read
    from its own input (``filePath``, the patch's file lines, each replacement)."""
    event = decode(payload)
    assert isinstance(event, BeforeTool)
    assert (event.tool.kind, event.tool.paths) == (kind, paths)


def test_the_shell_command_and_the_spawn_are_read() -> None:
    """run_in_terminal's ``command``; runSubagent's agentName, prompt and description."""
    shell, spawn = decode(SHELL), decode("PreToolUse.runSubagent")
    assert isinstance(shell, BeforeTool) and shell.tool.command == "git status"
    assert isinstance(spawn, BeforeTool)
    (child,) = spawn.tool.spawns
    assert (child.agent_type, child.description) == ("Plan", "Find tests")


def test_an_mcp_tool_names_its_server_as_its_prefix_does() -> None:
    """``mcp_<server>_<tool>``: the server is the prefix's word, and a handler's
    ``mcp:<server>`` route is the prefix VS Code builds from the server's label."""
    event = decode("PreToolUse.mcp_github_get_issue")
    assert isinstance(event, BeforeTool) and event.tool.mcp_server == "github"
    assert event.tool.matches("mcp:github")
    route = vscode.driver.tool_route(("mcp:GitHub Server",))
    assert route is not None and route.prefixes == ("mcp_github_server_",)
    long = vscode.driver.mcp_tool_prefix("a-very-long-server-label")
    assert long == "mcp_a-very-long-s_"  # 18 characters, as VS Code cuts it


def test_mixed_case_common_fields_and_the_timestamp() -> None:
    """``sessionId`` and ``hookEventName`` are camelCase, ``transcript_path`` snake_case;
    the ISO timestamp becomes seconds; ``source: "new"`` is a startup."""
    event = decode("SessionStart")
    assert isinstance(event, SessionStart)
    assert event.session_id == "7c5e9a0e-1b2f-4c43-9d51-3f0e8f9a2b10"
    assert event.transcript_path and event.transcript_path.endswith(".json")
    assert event.timestamp == 1796121000.0
    assert event.source == "startup"


def test_subagent_events_name_the_child_and_run_in_the_parent() -> None:
    """SubagentStart's agent_id and agent_type are the child's; the event is the parent's."""
    event = decode("SubagentStart")
    assert isinstance(event, SubagentStart)
    assert (event.child.id, event.child.type, event.agent.role) == ("subagent-7f3c", "Plan", "main")


def test_an_edit_yields_an_after_edit_and_the_result_is_text() -> None:
    """create_file's PostToolUse yields an after-edit of its path; its result is the text."""
    event = decode("PostToolUse.create_file")
    assert isinstance(event, AfterTool) and event.output and "NOTES.md" in event.output
    (edit,) = vscode.driver.derive(event)
    assert isinstance(edit, AfterEdit)
    assert [c.path for c in edit.changes] == ["/home/dev/shop-api/NOTES.md"]


def test_what_vscode_cannot_say_is_reported() -> None:
    """A prompt's deny is degraded to stopping the request, a rewrite off PreToolUse and
    context where VS Code reads none are dropped: each with a reason."""
    prompt = vscode.driver.encode("UserPromptSubmit", Reply.deny("no"))
    assert [d.field for d in prompt.dropped] == ["decision"]
    rest = vscode.driver.encode("PreCompact", Reply(context="x", updated_input={"a": 1}))
    assert sorted(d.field for d in rest.dropped) == ["context", "updated_input"]
    assert rest.output.stdout == b""


def test_host_facts() -> None:
    """Seconds, 30 by default; the project is the payload's cwd (the hook runs in the
    home folder); a Copilot CLI payload is told apart by hook_event_name."""
    facts = HOSTS["vscode"]
    assert (facts.timeout_unit, facts.default_timeout) == ("s", 30.0)
    assert facts.project_dir({}, {"cwd": "/p"}) == "/p"
    assert [d.host for d in facts.dialects] == ["copilot"]
    assert "vscode" in [d.host for d in HOSTS["claude"].dialects]
    assert "vscode" in [d.host for d in HOSTS["copilot"].dialects]


#: Where VS Code's payloads put their fields: a wrong-typed value in any is a DecodeError.
_FIELDS = st.sampled_from(
    [
        "sessionId",
        "cwd",
        "hookEventName",
        "timestamp",
        "transcript_path",
        "tool_name",
        "tool_input",
        "tool_use_id",
        "tool_response",
        "prompt",
        "source",
        "stop_hook_active",
        "agent_id",
        "agent_type",
        "trigger",
    ]
)


@settings(max_examples=examples(200), deadline=None)
@given(
    name=st.sampled_from([*vscode.ALL_EVENTS, "FutureEvent"]),
    tool=st.sampled_from([*vscode.TOOLS, "mcp_x_y", "unknown_tool"]),
    tool_input=st.dictionaries(st.text(max_size=20), json_values, max_size=4),
    overrides=st.dictionaries(_FIELDS, json_values, max_size=3),
)
def test_any_payload_decodes_or_is_a_decode_error(
    name: str, tool: str, tool_input: dict[str, Any], overrides: dict[str, Any]
) -> None:
    """Whatever the tool input, a well-formed payload decodes to an event of its name;
    wrong-typed common fields give a DecodeError (the host's no-opinion upstream), never
    another error; and any reply to the event encodes to one JSON object or nothing."""
    base = {"sessionId": "s", "cwd": "/p", "hookEventName": name, "tool_name": tool,
            "tool_input": tool_input, "tool_response": "done"}  # fmt: skip
    assert vscode.driver.decode(msgspec.json.encode(base)).native == name
    try:
        event = vscode.driver.decode(msgspec.json.encode({**base, **overrides}))
    except DecodeError:
        return
    assert isinstance(event, Event) and event.host == "vscode"
    encoded = vscode.driver.encode(event.native, Reply.deny("no")).output
    assert encoded.stdout == b"" or isinstance(json.loads(encoded.stdout), dict)
