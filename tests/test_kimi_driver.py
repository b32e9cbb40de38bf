"""The Kimi Code CLI driver: the shared contract, plus what is particular to Kimi."""

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
from hookbus.bus.events import AfterEdit, AfterTool, BeforeTool, Event, SubagentStop
from hookbus.bus.output import HookOutput
from hookbus.hosts import HOSTS
from hookbus.hosts.kimi import driver as kimi
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "kimi"
SHELL = "PreToolUse.Shell"


def deny(event: str, reason: str) -> bytes:
    return msgspec.json.encode({"hookSpecificOutput": {
        "hookEventName": event, "permissionDecision": "deny",
        "permissionDecisionReason": reason}}) + b"\n"  # fmt: skip


class TestKimiContract(DriverContract):
    """The shared contract, on payloads built from kimi-cli 1.49.0's ``hooks/events.py``."""

    host = "kimi"
    golden_dir = GOLDEN
    before_tool_golden = SHELL
    refusals: ClassVar[dict[str, HookOutput]] = {
        "PreToolUse": HookOutput(deny("PreToolUse", "R")),
        "UserPromptSubmit": HookOutput(deny("UserPromptSubmit", "R")),
        # Nothing to refuse there (a block is read only by the three events above, and
        # Stop's is keep-working): the refusal is the no-opinion.
        "Stop": HookOutput(),
        "PostToolUse": HookOutput(),
        "SessionStart": HookOutput(),
        "SubagentStart": HookOutput(),
        "PreCompact": HookOutput(),
        "Notification": HookOutput(),
    }  # fmt: skip
    reply_cases = (
        ReplyCase(id="pre-tool-deny", payload=SHELL, reply=Reply.deny("no rm"),
                  stdout=deny("PreToolUse", "no rm")),
        ReplyCase(id="pre-tool-deny-without-reason-still-says-why", payload=SHELL,
                  reply=Reply(decision="deny"),
                  stdout=deny("PreToolUse", "Denied by a hookbus handler.")),
        ReplyCase(id="pre-tool-ask-is-a-deny", payload=SHELL, reply=Reply.ask("really?"),
                  stdout=deny("PreToolUse", "really?")),
        ReplyCase(id="pre-tool-allow-is-no-opinion", payload=SHELL, reply=Reply.allow(),
                  stdout=b""),
        ReplyCase(id="pre-tool-rewrite-is-dropped", payload=SHELL,
                  reply=Reply.rewrite({"command": "ls"}), stdout=b""),
        ReplyCase(id="prompt-deny", payload="UserPromptSubmit", reply=Reply.deny("secrets"),
                  stdout=deny("UserPromptSubmit", "secrets")),
        ReplyCase(id="stop-keep-working", payload="Stop",
                  reply=Reply.continue_working("run the tests first"),
                  stdout=deny("Stop", "run the tests first")),
        ReplyCase(id="stop-keep-working-always-has-a-reason", payload="Stop",
                  reply=Reply.continue_working(" "),
                  stdout=deny("Stop", "Blocked by a hookbus handler.")),
        ReplyCase(id="post-tool-deny-is-nothing", payload="PostToolUse.Shell",
                  reply=Reply.deny("x"), stdout=b""),
        ReplyCase(id="context-message-halt-are-nothing", payload="SessionStart",
                  reply=Reply(context="c", message="m", halt="h"), stdout=b""),
        ReplyCase(id="no-opinion", payload=SHELL, reply=Reply(), stdout=b""),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        """Kimi's own rule: exit 0 with nothing, or one JSON object whose
        ``hookSpecificOutput.permissionDecision`` is ``deny`` with a reason."""
        assert output.stderr == b""
        if output.stdout:
            hso = json.loads(output.stdout)["hookSpecificOutput"]
            assert hso["permissionDecision"] == "deny" and hso["permissionDecisionReason"]


def decode(name: str) -> Event:
    return kimi.driver.decode((GOLDEN / f"{name}.json").read_bytes())


@pytest.mark.parametrize(
    ("payload", "kind", "paths"),
    [
        (SHELL, "shell", ()),
        ("PreToolUse.ReadFile", "read", ("/home/dev/shop-api/README.md",)),
        ("PreToolUse.WriteFile", "edit", ("/home/dev/shop-api/NOTES.md",)),
        ("PreToolUse.StrReplaceFile", "edit", ("/home/dev/shop-api/README.md",)),
        ("PreToolUse.Agent", "agent", ()),
        ("PreToolUse.FetchURL", "web", ()),
        ("PreToolUse.mcp-tool", "other", ()),
    ],
)
def test_tool_names_map_to_kinds_and_paths(payload: str, kind: str, paths: tuple[str, ...]) -> None:
    """Kimi's tool names become portable kinds; the file tools name their file ``path``;
    an MCP tool keeps its server's bare name and is ``other``."""
    event = decode(payload)
    assert isinstance(event, BeforeTool)
    assert (event.tool.kind, event.tool.paths) == (kind, paths)


def test_tool_events_run_in_an_unknown_agent() -> None:
    """A subagent's tool calls carry nothing of it: the agent of a tool event is unknown,
    a session's own events are the main agent's, and SubagentStop names the child."""
    assert decode(SHELL).agent.role == "unknown"
    assert decode("SessionStart").agent.role == "main"
    stop = decode("SubagentStop")
    assert isinstance(stop, SubagentStop)
    assert (stop.child.type, stop.final_text) == ("coder", "Found 3 tests.")


def test_results_failures_and_edits() -> None:
    """PostToolUse's ``tool_output`` is the output; a PostToolUseFailure's ``error`` the
    failure; StrReplaceFile's PostToolUse yields an after-edit of its path."""
    ok, failed = decode("PostToolUse.StrReplaceFile"), decode("PostToolUseFailure.Shell")
    assert isinstance(ok, AfterTool) and ok.output == "File successfully edited."
    assert isinstance(failed, AfterTool) and failed.error == "Command failed with exit code 1"
    (edit,) = kimi.driver.derive(ok)
    assert isinstance(edit, AfterEdit)
    assert [c.path for c in edit.changes] == ["/home/dev/shop-api/README.md"]


def test_what_kimi_cannot_say_is_reported() -> None:
    """Ask is a deny; a rewrite, context, a message and a halt are dropped, each saying why."""
    found = kimi.driver.encode("PreToolUse", Reply(decision="ask", updated_input={},
                                                   context="c", message="m", halt="h"))  # fmt: skip
    assert sorted(d.field for d in found.dropped) == [
        "context", "decision", "halt", "message", "updated_input"]  # fmt: skip


def test_host_facts() -> None:
    """Seconds, 30 by default; the project is the payload's cwd."""
    facts = HOSTS["kimi"]
    assert (facts.timeout_unit, facts.default_timeout) == ("s", 30.0)
    assert facts.project_dir({}, {"cwd": "/p"}) == "/p"


_FIELDS = st.sampled_from(
    [
        "session_id",
        "cwd",
        "hook_event_name",
        "tool_name",
        "tool_input",
        "tool_call_id",
        "tool_output",
        "error",
        "prompt",
        "source",
        "stop_hook_active",
        "agent_name",
        "response",
        "trigger",
    ]
)


@settings(max_examples=examples(200), deadline=None)
@given(
    name=st.sampled_from([*kimi.ALL_EVENTS, "MessageDisplay"]),
    tool=st.sampled_from([*kimi.TOOLS, "unknown_tool"]),
    tool_input=st.dictionaries(st.text(max_size=20), json_values, max_size=4),
    overrides=st.dictionaries(_FIELDS, json_values, max_size=3),
)
def test_any_payload_decodes_or_is_a_decode_error(
    name: str, tool: str, tool_input: dict[str, Any], overrides: dict[str, Any]
) -> None:
    """A well-formed payload decodes to an event of its name whatever the tool input;
    wrong-typed fields give a DecodeError, never another error; any reply encodes to
    nothing or one JSON object."""
    base = {"hook_event_name": name, "session_id": "s", "cwd": "/p", "tool_name": tool,
            "tool_input": tool_input}  # fmt: skip
    assert kimi.driver.decode(msgspec.json.encode(base)).native == name
    try:
        event = kimi.driver.decode(msgspec.json.encode({**base, **overrides}))
    except DecodeError:
        return
    assert event.host == "kimi"
    encoded = kimi.driver.encode(event.native, Reply.deny("no")).output
    assert encoded.stdout == b"" or isinstance(json.loads(encoded.stdout), dict)
