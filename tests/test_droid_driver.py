"""The Factory Droid driver: the shared contract, every reply checked against the fields
Factory's hooks reference documents per event, and what is particular to Droid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import JSON_VALUES, SHORT_TEXT, examples, hook_specific, json_line

from hookbus import Reply
from hookbus.bus.events import AfterEdit, BeforeTool, Event
from hookbus.bus.output import HookOutput
from hookbus.hosts import HOSTS
from hookbus.hosts.droid import driver as droid
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "droid"


#: What the reference's "Hook Output" section lets each event's JSON hold.
COMMON = {"continue", "stopReason", "suppressOutput", "systemMessage"}
DECISION = {"PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop"}
SPECIFIC = {
    "PreToolUse": {"permissionDecision", "permissionDecisionReason", "updatedInput"},
    "PostToolUse": {"additionalContext"},
    "UserPromptSubmit": {"additionalContext"},
    "SessionStart": {"additionalContext"},
}


class TestDroidContract(DriverContract):
    """The shared contract, on payloads built from Factory's hooks reference."""

    host = "droid"
    golden_dir = GOLDEN
    before_tool_golden = "PreToolUse.Execute"
    refusals: ClassVar[dict[str, HookOutput]] = {
        "PreToolUse": HookOutput(hook_specific("PreToolUse", permissionDecision="deny",
                                     permissionDecisionReason="R")),
        "PostToolUse": HookOutput(json_line({"decision": "block", "reason": "R"})),
        "UserPromptSubmit": HookOutput(json_line({"decision": "block", "reason": "R"})),
        # Nothing to refuse there: the refusal is the no-opinion.
        "SessionStart": HookOutput(),
        "Stop": HookOutput(),
        "Notification": HookOutput(),
        "SessionEnd": HookOutput(),
    }  # fmt: skip
    reply_cases = (
        ReplyCase(id="pre-tool-deny", payload="PreToolUse.Execute", reply=Reply.deny("no rm"),
                  stdout=hook_specific("PreToolUse", permissionDecision="deny",
                             permissionDecisionReason="no rm")),
        ReplyCase(id="pre-tool-deny-without-reason-still-says-why", payload="PreToolUse.Execute",
                  reply=Reply(decision="deny"),
                  stdout=hook_specific("PreToolUse", permissionDecision="deny",
                             permissionDecisionReason="Denied by a hookbus handler.")),
        ReplyCase(id="pre-tool-allow-is-no-opinion", payload="PreToolUse.Execute",
                  reply=Reply.allow(), stdout=b""),
        ReplyCase(id="pre-tool-ask", payload="PreToolUse.Execute", reply=Reply.ask("really?"),
                  stdout=hook_specific("PreToolUse", permissionDecision="ask",
                             permissionDecisionReason="really?")),
        ReplyCase(id="pre-tool-rewrite", payload="PreToolUse.Execute",
                  reply=Reply.rewrite({"command": "rm -rf ./build"}),
                  stdout=hook_specific("PreToolUse", updatedInput={"command": "rm -rf ./build"})),
        ReplyCase(id="halt", payload="PreToolUse.Execute", reply=Reply.stop_agent("budget"),
                  stdout=json_line({"continue": False, "stopReason": "budget"})),
        ReplyCase(id="user-message", payload="PreToolUse.Execute", reply=Reply.tell_user("hi"),
                  stdout=json_line({"systemMessage": "hi"})),
        ReplyCase(id="post-tool-block", payload="PostToolUse.Create", reply=Reply.deny("lint"),
                  stdout=json_line({"decision": "block", "reason": "lint"})),
        ReplyCase(id="post-tool-context", payload="PostToolUse.Create",
                  reply=Reply.add_context("run the formatter"),
                  stdout=hook_specific("PostToolUse", additionalContext="run the formatter")),
        ReplyCase(id="prompt-block", payload="UserPromptSubmit", reply=Reply.deny("secrets"),
                  stdout=json_line({"decision": "block", "reason": "secrets"})),
        ReplyCase(id="prompt-context", payload="UserPromptSubmit",
                  reply=Reply.add_context("time: noon"),
                  stdout=hook_specific("UserPromptSubmit", additionalContext="time: noon")),
        ReplyCase(id="session-start-context", payload="SessionStart.startup",
                  reply=Reply.add_context("house rules"),
                  stdout=hook_specific("SessionStart", additionalContext="house rules")),
        ReplyCase(id="stop-keep-working", payload="Stop", reply=Reply.continue_working("tests"),
                  stdout=json_line({"decision": "block", "reason": "tests"})),
        ReplyCase(id="subagent-stop-keep-working", payload="SubagentStop",
                  reply=Reply.continue_working("check again"),
                  stdout=json_line({"decision": "block", "reason": "check again"})),
        ReplyCase(id="notification-takes-no-decision", payload="Notification",
                  reply=Reply.deny("x"), stdout=b""),
        ReplyCase(id="no-opinion", payload="PreToolUse.Execute", reply=Reply(), stdout=b""),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        """Droid's own rules: nothing on stderr (exit 0 shows it nowhere useful, exit 2
        would make it a block's reason); stdout empty (plain text would be context on
        UserPromptSubmit and SessionStart) or one JSON object holding only the fields the
        reference documents for the event."""
        assert output.stderr == b""
        if not output.stdout:
            return
        reply = json.loads(output.stdout)
        assert isinstance(reply, dict)
        allowed = COMMON | ({"decision", "reason"} if native in DECISION else set())
        assert set(reply) - {"hookSpecificOutput"} <= allowed, reply
        if reply.get("decision") is not None:
            assert reply["decision"] == "block" and reply.get("reason")
        if "hookSpecificOutput" in reply:
            specific = reply["hookSpecificOutput"]
            assert specific.pop("hookEventName") == native
            assert set(specific) <= SPECIFIC.get(native or "", set()), reply


def decode(name: str) -> Event:
    return droid.driver.decode((GOLDEN / f"{name}.json").read_bytes())


@pytest.mark.parametrize(
    ("payload", "kind", "server"),
    [
        ("PreToolUse.Execute", "shell", None),
        ("PreToolUse.Read", "read", None),
        ("PreToolUse.Create", "edit", None),
        ("PreToolUse.ApplyPatch", "edit", None),
        ("PreToolUse.FetchUrl", "web", None),
        ("PreToolUse.Task", "agent", None),
        ("PreToolUse.mcp", "mcp", "github"),
        ("PreToolUse.unknown-tool", "other", None),
    ],
)
def test_tool_names_map_to_portable_kinds(payload: str, kind: str, server: str | None) -> None:
    """Droid's tool IDs become portable kinds; an MCP tool's server is its name's middle."""
    event = decode(payload)
    assert isinstance(event, BeforeTool)
    assert (event.tool.kind, event.tool.mcp_server) == (kind, server)


def test_an_apply_patch_names_every_file_it_touches_under_any_key() -> None:
    """The envelope is found whatever key holds it (the docs never show ApplyPatch's
    input), and its adds, updates and moves are the call's paths, made absolute."""
    patch = "*** Begin Patch\n*** Add File: a.py\n+x\n*** End Patch\n"
    for key in ("input", "patch"):
        payload = {"session_id": "s", "cwd": "/p", "hook_event_name": "PreToolUse",
                   "tool_name": "ApplyPatch", "tool_input": {key: patch}}  # fmt: skip
        event = droid.driver.decode(json.dumps(payload).encode())
        assert isinstance(event, BeforeTool)
        assert event.tool.paths == ("/p/a.py",)


def test_edit_tools_also_yield_after_edit() -> None:
    """Create adds its file; ApplyPatch's changes keep their actions."""
    (created,) = droid.driver.derive(decode("PostToolUse.Create"))
    assert isinstance(created, AfterEdit)
    assert [(c.action, c.path) for c in created.changes] == [("add", "/path/to/file.txt")]
    (patched,) = droid.driver.derive(decode("PostToolUse.ApplyPatch"))
    assert isinstance(patched, AfterEdit)
    assert [c.action for c in patched.changes] == ["update", "add", "move"]


def test_tool_calls_do_not_claim_to_be_the_main_agents() -> None:
    """Nothing in a tool event says whether a sub-droid made it: its agent is unknown (a
    filter on the main agent must not match it); the other events are the main agent's."""
    assert decode("PreToolUse.Execute").agent.role == "unknown"
    assert decode("PostToolUse.Task").agent.role == "unknown"
    assert decode("Stop").agent.role == "main"


def test_droid_has_no_subagent_start() -> None:
    """The reference's nine events have no SubagentStart: such a payload decodes as
    ``other`` and is never registered."""
    payload = b'{"session_id": "s", "cwd": "/p", "hook_event_name": "SubagentStart"}'
    assert droid.driver.decode(payload).kind == "other"
    assert "SubagentStart" not in droid.ALL_EVENTS
    assert len(droid.ALL_EVENTS) == 9


def test_unsupported_reply_parts_are_dropped_and_reported() -> None:
    """What Droid cannot take on an event is not sent, and each drop is reported: no
    context before a tool runs, no rewrite after it, no stopping a session that ends."""
    pre = droid.driver.encode("PreToolUse", Reply.add_context("x"))
    assert (pre.output.stdout, [d.field for d in pre.dropped]) == (b"", ["context"])
    post = droid.driver.encode("PostToolUse", Reply.rewrite({"a": 1}))
    assert (post.output.stdout, [d.field for d in post.dropped]) == (b"", ["updated_input"])
    end = droid.driver.encode("SessionEnd", Reply.stop_agent("now"))
    assert (end.output.stdout, [d.field for d in end.dropped]) == (b"", ["halt"])


def test_an_allow_never_overrules_another_hooks_deny() -> None:
    """Droid merges hook decisions with no deny-over-allow priority, so a PreToolUse
    allow (which would also skip Droid's own permission prompt) is not sent, and the
    drop is reported; a rewrite still goes without it."""
    encoded = droid.driver.encode("PreToolUse", Reply(decision="allow", updated_input={"a": 1}))
    assert encoded.output.stdout == hook_specific("PreToolUse", updatedInput={"a": 1})
    assert [d.field for d in encoded.dropped] == ["decision"]


def test_ask_degrades_to_a_block_where_droid_has_no_ask() -> None:
    """An ask on a prompt blocks it (documented degradation) and says so."""
    encoded = droid.driver.encode("UserPromptSubmit", Reply.ask("sure?"))
    assert encoded.output.stdout == b'{"decision":"block","reason":"sure?"}\n'
    assert [d.field for d in encoded.dropped] == ["decision"]


def test_host_facts() -> None:
    """Droid writes timeouts in whole seconds (60 by default) and names the project in
    FACTORY_PROJECT_DIR, else the payload's cwd."""
    facts = HOSTS["droid"]
    assert (facts.timeout_unit, facts.timeout_value(10.5), facts.timeout_for(None)) == (
        "s", 11, 60.0,
    )  # fmt: skip
    assert facts.project_dir({"FACTORY_PROJECT_DIR": "/p"}, {"cwd": "/q"}) == "/p"
    assert facts.project_dir({}, {"cwd": "/q"}) == "/q"


_KNOWN = {"session_id", "cwd", "hook_event_name", "tool_name", "tool_input", "tool_response",
          "transcript_path", "permission_mode", "prompt_id", "agent_id", "agent_type", "model",
          "tool_use_id", "source", "prompt", "stop_hook_active", "last_assistant_message",
          "agent_transcript_path", "trigger", "custom_instructions", "reason", "mcp_server",
          "duration_ms"}  # fmt: skip


PATCH = "*** Begin Patch\n*** Add File: a\n"


@settings(max_examples=examples(200), deadline=None)
@given(
    name=st.sampled_from(droid.ALL_EVENTS),
    tool=st.sampled_from([*droid.TOOLS, "mcp__x__y", "UnknownTool"]),
    tool_input=st.dictionaries(SHORT_TEXT, JSON_VALUES | st.just(PATCH), max_size=4),
    response=JSON_VALUES,
    extra=st.dictionaries(SHORT_TEXT.filter(lambda k: k not in _KNOWN), JSON_VALUES, max_size=3),
)  # fmt: skip
def test_any_well_formed_payload_decodes(
    name: str, tool: str, tool_input: dict[str, Any], response: Any, extra: dict[str, Any]
) -> None:
    """Any payload with the base fields decodes to an event of its native name, whatever
    the tool input, tool response or unknown fields; and any reply encodes to JSON."""
    payload = {**extra, "session_id": "s", "cwd": "/p", "hook_event_name": name,
               "tool_name": tool, "tool_input": tool_input, "tool_response": response}  # fmt: skip
    event = droid.driver.decode(json.dumps(payload).encode())
    assert (event.native, event.host) == (name, "droid")
    encoded = droid.driver.encode(name, Reply.deny("no")).output
    assert encoded.stdout == b"" or isinstance(json.loads(encoded.stdout), dict)
