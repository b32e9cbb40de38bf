"""The Claude Code driver: the shared contract, plus what is particular to Claude."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pytest

from hookbus import Reply
from hookbus.bus.errors import DecodeError
from hookbus.bus.events import AfterEdit, BeforeTool
from hookbus.bus.output import HookOutput
from hookbus.hosts.claude import driver as claude
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "claude"


def hso(event: str, fields: str) -> bytes:
    return (
        b'{"hookSpecificOutput":{"hookEventName":"'
        + event.encode()
        + b'",'
        + fields.encode()
        + b"}}\n"
    )


PRE_TOOL_DENY_R = hso("PreToolUse", '"permissionDecision":"deny","permissionDecisionReason":"R"')


class TestClaudeContract(DriverContract):
    """The shared contract, on schema-built goldens and on payloads captured from the real
    Claude Code (``golden/claude/real``)."""

    host = "claude"
    golden_dir = GOLDEN
    before_tool_golden = "PreToolUse.Bash"
    refusals: ClassVar[dict[str, HookOutput]] = {
        "PreToolUse": HookOutput(PRE_TOOL_DENY_R),
        "PreSkillShellCommand": HookOutput(
            hso(
                "PreSkillShellCommand", '"permissionDecision":"deny","permissionDecisionReason":"R"'
            )
        ),
        "PermissionRequest": HookOutput(
            hso("PermissionRequest", '"decision":{"behavior":"deny","message":"R"}')
        ),
        "UserPromptSubmit": HookOutput(b'{"decision":"block","reason":"R"}\n'),
        # Nothing to refuse: a deny has no effect there, so the refusal is no opinion.
        "SessionStart": HookOutput(),
        "SessionEnd": HookOutput(),
        "Stop": HookOutput(),
    }
    reply_cases = (
        ReplyCase(
            id="pre-tool-deny",
            payload="PreToolUse.Bash",
            reply=Reply.deny("no force push"),
            stdout=hso(
                "PreToolUse",
                '"permissionDecision":"deny","permissionDecisionReason":"no force push"',
            ),
        ),
        ReplyCase(
            id="pre-tool-deny-without-reason-still-says-why",
            payload="PreToolUse.Bash",
            reply=Reply(decision="deny"),
            stdout=hso(
                "PreToolUse",
                '"permissionDecision":"deny","permissionDecisionReason":"Denied by a hookbus handler."',
            ),
        ),
        ReplyCase(
            id="pre-tool-allow",
            payload="PreToolUse.Bash",
            reply=Reply.allow(),
            stdout=hso("PreToolUse", '"permissionDecision":"allow"'),
        ),
        ReplyCase(
            id="pre-tool-ask",
            payload="PreToolUse.Bash",
            reply=Reply.ask("really run the tests?"),
            stdout=hso(
                "PreToolUse",
                '"permissionDecision":"ask","permissionDecisionReason":"really run the tests?"',
            ),
        ),
        ReplyCase(
            id="pre-tool-rewrite-without-granting",
            payload="PreToolUse.Bash",
            reply=Reply.rewrite({"command": "npm test"}),
            stdout=hso("PreToolUse", '"updatedInput":{"command":"npm test"}'),
        ),
        ReplyCase(
            id="pre-tool-context",
            payload="PreToolUse.Bash",
            reply=Reply.add_context("tests take 2 minutes"),
            stdout=hso("PreToolUse", '"additionalContext":"tests take 2 minutes"'),
        ),
        ReplyCase(
            id="user-message",
            payload="PreToolUse.Bash",
            reply=Reply.tell_user("heads up"),
            stdout=b'{"systemMessage":"heads up"}\n',
        ),
        ReplyCase(
            id="halt",
            payload="PreToolUse.Bash",
            reply=Reply.stop_agent("budget exhausted"),
            stdout=b'{"continue":false,"stopReason":"budget exhausted"}\n',
        ),
        ReplyCase(
            id="stop-keep-working",
            payload="Stop",
            reply=Reply.continue_working("run the tests first"),
            stdout=b'{"decision":"block","reason":"run the tests first"}\n',
        ),
        ReplyCase(
            id="stop-context",
            payload="Stop",
            reply=Reply.add_context("note"),
            stdout=hso("Stop", '"additionalContext":"note"'),
        ),
        ReplyCase(
            id="subagent-stop-keep-working",
            payload="SubagentStop",
            reply=Reply.continue_working("restate with Result: and Verified: lines"),
            stdout=b'{"decision":"block","reason":"restate with Result: and Verified: lines"}\n',
        ),
        ReplyCase(
            id="prompt-deny-blocks",
            payload="UserPromptSubmit",
            reply=Reply.deny("secrets in prompt"),
            stdout=b'{"decision":"block","reason":"secrets in prompt"}\n',
        ),
        ReplyCase(
            id="prompt-context",
            payload="UserPromptSubmit",
            reply=Reply.add_context("branch: main"),
            stdout=hso("UserPromptSubmit", '"additionalContext":"branch: main"'),
        ),
        ReplyCase(
            id="session-start-context",
            payload="SessionStart.startup",
            reply=Reply.add_context("house rules"),
            stdout=hso("SessionStart", '"additionalContext":"house rules"'),
        ),
        ReplyCase(
            id="subagent-start-context",
            payload="SubagentStart",
            reply=Reply.add_context("child rules"),
            stdout=hso("SubagentStart", '"additionalContext":"child rules"'),
        ),
        ReplyCase(
            id="post-tool-deny-is-feedback",
            payload="real.PostToolUse.Bash",
            reply=Reply.deny("output looks wrong"),
            stdout=b'{"decision":"block","reason":"output looks wrong"}\n',
        ),
        ReplyCase(
            id="post-tool-failure-context",
            payload="real.PostToolUseFailure.Bash",
            reply=Reply.add_context("retry with -v"),
            stdout=hso("PostToolUseFailure", '"additionalContext":"retry with -v"'),
        ),
        ReplyCase(
            id="pre-compact-block",
            payload="PreCompact.manual",
            reply=Reply.deny("not now"),
            stdout=b'{"decision":"block","reason":"not now"}\n',
        ),
        ReplyCase(
            id="permission-request-allow",
            payload="PermissionRequest",
            reply=Reply.allow(),
            stdout=hso("PermissionRequest", '"decision":{"behavior":"allow"}'),
        ),
        ReplyCase(
            id="permission-request-deny",
            payload="PermissionRequest",
            reply=Reply.deny("not in CI"),
            stdout=hso("PermissionRequest", '"decision":{"behavior":"deny","message":"not in CI"}'),
        ),
        ReplyCase(
            id="session-end-says-nothing",
            payload="SessionEnd",
            reply=Reply(context="ignored", message="ignored"),
            stdout=b"",
        ),
        ReplyCase(
            id="allow-after-tool-is-no-opinion",
            payload="real.PostToolUse.Bash",
            reply=Reply.allow(),
            stdout=b"",
        ),
        ReplyCase(id="no-opinion", payload="PreToolUse.Bash", reply=Reply(), stdout=b""),
        # On payloads captured from the real Claude Code 2.1.197 (tests/e2e,
        # HOOKBUS_E2E_GOLDEN=1 captures them again).
        ReplyCase(
            id="real-pre-tool-deny",
            payload="real/PreToolUse",
            reply=Reply.deny("E2E"),
            stdout=hso(
                "PreToolUse", '"permissionDecision":"deny","permissionDecisionReason":"E2E"'
            ),
        ),
        ReplyCase(
            id="real-stop-keep-working",
            payload="real/Stop",
            reply=Reply.continue_working("again"),
            stdout=b'{"decision":"block","reason":"again"}\n',
        ),
    )


def decode(name: str) -> Any:
    return claude.driver.decode((GOLDEN / f"{name}.json").read_bytes())


@pytest.mark.parametrize(
    ("payload", "kind", "server"),
    [
        ("PreToolUse.Bash", "shell", None),
        ("PreToolUse.Agent", "agent", None),
        ("PreToolUse.Task.legacy", "agent", None),
        ("PreToolUse.Read", "read", None),
        ("PreToolUse.WebFetch", "web", None),
        ("PreToolUse.mcp", "mcp", "github"),
        ("PreToolUse.mcp.plugin", "mcp", "plugin_acme_db"),
        ("PreToolUse.unknown-tool", "other", None),
    ],
)
def test_tool_names_map_to_portable_kinds(payload: str, kind: str, server: str | None) -> None:
    """Claude tool names become portable tool kinds; MCP tools keep their server name."""
    event = decode(payload)
    assert isinstance(event, BeforeTool)
    assert (event.tool.kind, event.tool.mcp_server) == (kind, server)
    assert event.tool.matches("any")
    assert event.tool.matches(kind)


def test_all_34_reference_events_decode() -> None:
    """Every event of the reference decodes: typed where portable, else as ``other``."""
    assert len(claude.ALL_EVENTS) == 34
    for name in claude.ALL_EVENTS:
        payload = msgspec.json.encode({"session_id": "s", "cwd": "/p", "hook_event_name": name,
                                       "tool_name": "Bash", "agent_id": "a", "agent_type": "t"})  # fmt: skip
        event = claude.driver.decode(payload)
        assert event.native == name
        assert event.kind == claude.KIND_OF.get(name, "other")


def test_edit_tools_also_yield_after_edit() -> None:
    """A Write that created a file is an after-tool and, derived, an after-edit 'add'."""
    derived = claude.driver.derive
    (edit,) = derived(decode("PostToolUse.Write.create"))
    assert isinstance(edit, AfterEdit)
    assert [(c.action, c.path) for c in edit.changes] == [("add", "/home/dev/proj/src/new.py")]
    assert derived(decode("real.PostToolUse.Bash")) == ()
    assert derived(decode("real.PostToolUseFailure.Bash")) == ()


def test_subagent_identity_is_the_child_not_the_event_thread() -> None:
    """SubagentStop names the child (id, type, final text); the event runs in the parent."""
    event = decode("real.SubagentStop")
    assert event.child.id == "a48e146ef6f51cac4"  # type: ignore[attr-defined]
    assert event.agent.id is None
    in_child = decode("PreToolUse.Bash.in-subagent")
    assert in_child.agent.is_subagent  # type: ignore[attr-defined]


def test_final_text_keeps_only_the_last_4_kib() -> None:
    """A long final message is cut to its tail, on a character boundary."""
    long = "é" * 5000 + "Result: ok"
    payload = msgspec.json.encode({"session_id": "s", "cwd": "/p", "hook_event_name": "SubagentStop",
                                   "agent_id": "a", "agent_type": "t", "last_assistant_message": long})  # fmt: skip
    text = claude.driver.decode(payload).final_text  # type: ignore[attr-defined]
    assert text.endswith("Result: ok")
    assert len(text.encode()) <= 4096


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        (b'{"hook_event_name": 5}', "$.hook_event_name"),
        (
            b'{"hook_event_name": "PreToolUse", "cwd": "/", "session_id": "s", "tool_name": 3}',
            "$.tool_name",
        ),
        (
            b'{"hook_event_name": "PreToolUse", "cwd": "/", "session_id": "s", "tool_name": "Bash", "tool_input": "x"}',
            "$.tool_input",
        ),
        (b'{"hook_event_name": "Stop", "cwd": "/"}', None),
    ],
)
def test_wrong_types_are_rejected_with_their_json_path(payload: bytes, path: str | None) -> None:
    """Strict decoding: a wrongly typed field is a DecodeError naming where it is."""
    with pytest.raises(DecodeError) as caught:
        claude.driver.decode(payload)
    assert caught.value.path == path


def test_event_name_may_come_from_the_command_line() -> None:
    """``--event`` names the event when the payload does not."""
    event = claude.driver.decode(b'{"session_id": "s", "cwd": "/p"}', "SessionEnd")
    assert event.kind == "session-end"
    with pytest.raises(DecodeError):
        claude.driver.decode(b'{"session_id": "s", "cwd": "/p"}')


def test_unsupported_reply_parts_are_dropped_and_reported() -> None:
    """What Claude cannot take on an event is not sent, and each drop is reported."""
    encoded = claude.driver.encode(decode("SessionStart.startup").native, Reply(decision="deny", reason="x",
                                                                   updated_input={"a": 1}))  # fmt: skip
    assert encoded.output.stdout == b""
    assert sorted(d.field for d in encoded.dropped) == ["decision", "updated_input"]


def test_ask_degrades_to_a_block_where_claude_has_no_ask() -> None:
    """An ask on a prompt blocks it (documented degradation) and says so."""
    encoded = claude.driver.encode(decode("UserPromptSubmit").native, Reply.ask("sure?"))
    assert encoded.output.stdout == b'{"decision":"block","reason":"sure?"}\n'
    assert [d.field for d in encoded.dropped] == ["decision"]


def test_timeouts_follow_the_reference() -> None:
    """600 s by default, 30 s for prompts, 1.5 s for all SessionEnd hooks together."""
    assert claude.driver.timeout("PreToolUse") == 600
    assert claude.driver.timeout("UserPromptSubmit") == 30
    assert claude.driver.timeout("SessionEnd") == 1.5


def test_worktree_create_is_never_registered_and_message_display_only_on_request() -> None:
    """WorktreeCreate hooks replace Claude's own worktree creation, so hookbus never takes
    them; MessageDisplay (one process per message) only when a handler names it."""
    assert "WorktreeCreate" not in claude.driver.natives("other")
    assert "WorktreeCreate" not in claude.driver.natives("other", ("WorktreeCreate",))
    assert "MessageDisplay" not in claude.driver.natives("other")
    assert claude.driver.natives("other", ("MessageDisplay",)) == ("MessageDisplay",)
    assert claude.driver.natives("before-tool") == ("PreToolUse", "PreSkillShellCommand")


def test_permission_request_ask_leaves_the_dialog_alone() -> None:
    """On PermissionRequest, ask is what the dialog does: no output, and the drop is said."""
    encoded = claude.driver.encode(decode("PermissionRequest").native, Reply.ask("you decide"))
    assert encoded.output.stdout == b""
    assert [d.field for d in encoded.dropped] == ["decision"]


def test_skill_shell_commands_are_before_tool_shell_events() -> None:
    """PreSkillShellCommand reaches shell guards; its deny uses permissionDecision."""
    payload = msgspec.json.encode({"session_id": "s", "cwd": "/p", "hook_event_name": "PreSkillShellCommand",
                                   "tool_name": "Bash", "tool_input": {"command": "rm -rf build"},
                                   "tool_use_id": "x", "command_name": "clean", "invoked_by": "user"})  # fmt: skip
    event = claude.driver.decode(payload)
    assert isinstance(event, BeforeTool)
    assert (event.tool.kind, event.tool.command) == ("shell", "rm -rf build")
    out = claude.driver.encode(event.native, Reply.deny("no")).output.stdout
    assert out == hso(
        "PreSkillShellCommand", '"permissionDecision":"deny","permissionDecisionReason":"no"'
    )


def test_in_process_path_repairs_lone_surrogates_too() -> None:
    """HookClient decodes like ``hookbus run``: bad characters replaced, and said."""
    from hookbus.testing import HookClient

    payload = (GOLDEN / "PreToolUse.Bash.json").read_text().replace("npm test", "npm \\ud800 test")
    result = HookClient("claude").run(payload)
    assert result.event is not None
    assert result.event.tool.command == "npm ? test -- --runInBand"  # type: ignore[attr-defined]
    assert result.codes() == ["input-repaired"]
