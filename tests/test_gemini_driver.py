"""The Gemini CLI driver: the shared contract, plus what is particular to Gemini."""

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
from hookbus.bus.errors import DecodeError
from hookbus.bus.events import AfterEdit, AfterTool, BeforeTool, Event
from hookbus.bus.output import HookOutput
from hookbus.hosts import HOSTS
from hookbus.hosts.gemini import driver as gemini
from hookbus.runtime.peek import peek
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "gemini"
NO_OPINION = b"{}\n"


def out(data: dict[str, Any]) -> bytes:
    return msgspec.json.encode(data) + b"\n"


class TestGeminiContract(DriverContract):
    """The shared contract, on payloads captured from the real Gemini CLI 0.61.0
    (``golden/gemini/real``) and on source-built ones."""

    host = "gemini"
    golden_dir = GOLDEN
    before_tool_golden = "real/BeforeTool.run_shell_command"
    refusals: ClassVar[dict[str, HookOutput]] = {
        "BeforeTool": HookOutput(out({"decision": "deny", "reason": "R"})),
        "AfterTool": HookOutput(out({"decision": "deny", "reason": "R"})),
        "BeforeAgent": HookOutput(out({"decision": "deny", "reason": "R"})),
        "BeforeModel": HookOutput(out({"decision": "deny", "reason": "R"})),
        # Nothing to refuse there: the refusal is the no-opinion.
        "SessionStart": HookOutput(NO_OPINION),
        "AfterAgent": HookOutput(NO_OPINION),
        "SessionEnd": HookOutput(NO_OPINION),
        "PreCompress": HookOutput(NO_OPINION),
        "BeforeToolSelection": HookOutput(),
    }
    reply_cases = (
        ReplyCase(id="before-tool-deny", payload="real/BeforeTool.run_shell_command",
                  reply=Reply.deny("no echo"), stdout=out({"decision": "deny", "reason": "no echo"})),
        ReplyCase(id="before-tool-deny-without-reason-still-says-why",
                  payload="real/BeforeTool.run_shell_command", reply=Reply(decision="deny"),
                  stdout=out({"decision": "deny", "reason": "Denied by a hookbus handler."})),
        ReplyCase(id="before-tool-allow-is-no-opinion", payload="real/BeforeTool.run_shell_command",
                  reply=Reply.allow(), stdout=NO_OPINION),
        ReplyCase(id="before-tool-ask", payload="real/BeforeTool.run_shell_command",
                  reply=Reply.ask("really?"),
                  stdout=out({"decision": "ask", "reason": "really?", "systemMessage": "really?"})),
        ReplyCase(id="before-tool-rewrite-replaces-the-arguments",
                  payload="real/BeforeTool.run_shell_command",
                  reply=Reply.rewrite({"command": "npm test"}),
                  stdout=out({"hookSpecificOutput": {"tool_input": {"command": "npm test"}}})),
        ReplyCase(id="halt", payload="real/BeforeTool.run_shell_command",
                  reply=Reply.stop_agent("budget exhausted"),
                  stdout=out({"continue": False, "stopReason": "budget exhausted"})),
        ReplyCase(id="user-message", payload="real/BeforeTool.run_shell_command",
                  reply=Reply.tell_user("heads up"), stdout=out({"systemMessage": "heads up"})),
        ReplyCase(id="after-tool-deny-replaces-the-result", payload="real/AfterTool.run_shell_command",
                  reply=Reply.deny("hidden"), stdout=out({"decision": "deny", "reason": "hidden"})),
        ReplyCase(id="after-tool-context", payload="real/AfterTool.run_shell_command",
                  reply=Reply.add_context("retry with -v"),
                  stdout=out({"hookSpecificOutput": {"additionalContext": "retry with -v"}})),
        ReplyCase(id="prompt-deny", payload="real/BeforeAgent", reply=Reply.deny("secrets"),
                  stdout=out({"decision": "deny", "reason": "secrets"})),
        ReplyCase(id="prompt-context", payload="real/BeforeAgent", reply=Reply.add_context("main"),
                  stdout=out({"hookSpecificOutput": {"additionalContext": "main"}})),
        ReplyCase(id="session-start-context", payload="real/SessionStart",
                  reply=Reply.add_context("house rules"),
                  stdout=out({"hookSpecificOutput": {"additionalContext": "house rules"}})),
        ReplyCase(id="after-agent-keep-working", payload="real/AfterAgent",
                  reply=Reply.continue_working("run the tests first"),
                  stdout=out({"decision": "deny", "reason": "run the tests first"})),
        ReplyCase(id="after-agent-halt", payload="real/AfterAgent", reply=Reply.stop_agent("done"),
                  stdout=out({"continue": False, "stopReason": "done"})),
        ReplyCase(id="session-end-message-only", payload="real/SessionEnd",
                  reply=Reply(context="ignored", message="bye"), stdout=out({"systemMessage": "bye"})),
        ReplyCase(id="pre-compress-cannot-be-denied", payload="real/PreCompress",
                  reply=Reply.deny("not now"), stdout=NO_OPINION),
        ReplyCase(id="tool-selection-takes-nothing", payload="real/BeforeToolSelection",
                  reply=Reply(decision="deny", message="x", context="y"), stdout=b""),
        ReplyCase(id="no-opinion", payload="real/BeforeTool.run_shell_command", reply=Reply(),
                  stdout=NO_OPINION),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        """Gemini's own rule: stdout is one JSON object (or, on BeforeToolSelection,
        nothing), never text that exit code 2 or more would turn into a deny."""
        assert output.stderr == b""
        if native == "BeforeToolSelection":
            assert output.stdout == b""
            return
        assert isinstance(json.loads(output.stdout), dict)


def decode(name: str) -> Any:
    return gemini.driver.decode((GOLDEN / f"{name}.json").read_bytes())


@pytest.mark.parametrize(
    ("payload", "kind", "server"),
    [
        ("real/BeforeTool.run_shell_command", "shell", None),
        ("real/BeforeTool.invoke_agent", "agent", None),
        ("real/BeforeTool.complete_task.in-subagent", "other", None),
        ("BeforeTool.read_file", "read", None),
        ("BeforeTool.search_file_content.legacy", "read", None),
        ("BeforeTool.web_fetch", "web", None),
        ("BeforeTool.mcp", "mcp", "github"),
        ("BeforeTool.mcp.underscore-server", "mcp", "my_db"),
        ("BeforeTool.unknown-tool", "other", None),
    ],
)
def test_tool_names_map_to_portable_kinds(payload: str, kind: str, server: str | None) -> None:
    """Gemini tool names become portable kinds; an MCP tool's server comes from its
    ``mcp_context`` (a server name may hold an underscore the tool name cannot show)."""
    event = decode(payload)
    assert isinstance(event, BeforeTool)
    assert (event.tool.kind, event.tool.mcp_server) == (kind, server)
    assert event.tool.matches(kind)


def test_every_tool_event_has_an_unknown_agent_and_lifecycle_events_the_main_one() -> None:
    """Nothing marks a subagent's tool call: every tool (and model) event's agent is
    ``unknown``, so ``agents="main"`` never matches one; the lifecycle events are main."""
    assert decode("real/AfterTool.run_shell_command.in-subagent").agent.role == "unknown"
    assert decode("real/BeforeTool.run_shell_command").agent.role == "unknown"
    assert decode("real/BeforeModel").agent.role == "unknown"
    assert decode("real/AfterAgent").agent.role == "main"


def test_invoke_agent_is_a_spawn_of_the_named_agent() -> None:
    """An ``invoke_agent`` call has one spawn: the agent named and its prompt."""
    (spawn,) = decode("real/BeforeTool.invoke_agent").tool.spawns
    assert (spawn.agent_type, spawn.prompt) == ("generalist", "SUBTASK-XYZ: run echo from-subagent")
    after = decode("real/AfterTool.invoke_agent")
    assert "Subagent 'generalist' finished." in after.output


def test_edit_tools_also_yield_after_edit_and_a_failure_does_not() -> None:
    """write_file of a new file is an 'add', replace an 'update'; a tool whose response
    carries an error is an after-tool with that error and no after-edit."""
    (added,) = gemini.driver.derive(decode("AfterTool.write_file.create"))
    assert isinstance(added, AfterEdit)
    assert [(c.action, c.path) for c in added.changes] == [("add", "/home/dev/shop-api/NOTES.md")]
    (updated,) = gemini.driver.derive(decode("AfterTool.replace"))
    assert [c.action for c in updated.changes] == ["update"]
    failed = decode("AfterTool.error")
    assert isinstance(failed, AfterTool)
    assert failed.error is not None
    assert "workspace" in failed.error
    assert gemini.driver.derive(failed) == ()


def test_a_failing_shell_command_is_no_tool_error() -> None:
    """Gemini reports a non-zero exit in the output, not as an error."""
    event = decode("AfterTool.run_shell_command.exit1")
    assert event.error is None
    assert "Exit Code: 1" in event.output


def test_timestamp_and_empty_transcript() -> None:
    """The ISO timestamp becomes epoch seconds; an empty transcript path is None."""
    event = decode("real/SessionStart")
    assert event.timestamp == pytest.approx(1796127822.213)
    payload = json.loads((GOLDEN / "real/SessionStart.json").read_text())
    payload["transcript_path"] = ""
    assert gemini.driver.decode(msgspec.json.encode(payload)).transcript_path is None


def test_after_agent_placeholder_is_no_last_message() -> None:
    """AfterAgent's ``[no response text]`` means the agent said nothing."""
    event = decode("AfterAgent.retry")
    assert (event.last_message, event.stop_hook_active) == (None, True)


def test_model_events_are_registered_only_on_request() -> None:
    """BeforeModel, AfterModel (one process per streamed chunk) and BeforeToolSelection
    reach ``other`` handlers only when named; Notification always."""
    assert gemini.driver.natives("other") == ("Notification",)
    assert gemini.driver.natives("other", ("AfterModel",)) == ("AfterModel",)
    assert gemini.driver.natives("stop") == ("AfterAgent",)
    assert gemini.driver.natives("after-edit") == ("AfterTool",)


def test_mcp_routes_use_geminis_single_underscore() -> None:
    """An ``mcp:<server>`` pattern covers ``mcp_<server>_``; ``mcp`` every MCP tool."""
    route = gemini.driver.tool_route(("mcp:github", "shell"))
    assert route is not None
    assert (route.names, route.prefixes) == (("run_shell_command",), ("mcp_github_",))
    route = gemini.driver.tool_route(("mcp",))
    assert route is not None
    assert route.prefixes == ("mcp_",)


def test_unsupported_reply_parts_are_dropped_and_reported() -> None:
    """What Gemini cannot take on an event is not sent, and each drop is named."""
    encoded = gemini.driver.encode("SessionStart", Reply(decision="deny", reason="x",
                                                         updated_input={"a": 1}, halt="h"))  # fmt: skip
    assert encoded.output.stdout == NO_OPINION
    assert sorted(d.field for d in encoded.dropped) == ["decision", "halt", "updated_input"]
    encoded = gemini.driver.encode("BeforeAgent", Reply.ask("sure?"))
    assert encoded.output.stdout == out({"decision": "deny", "reason": "sure?"})
    assert [d.field for d in encoded.dropped] == ["decision"]


def test_capabilities_say_what_each_event_takes() -> None:
    """Only BeforeTool asks and rewrites (replacing the arguments); AfterAgent keeps
    working; context on SessionStart, BeforeAgent and AfterTool."""
    before = gemini.driver.capabilities("BeforeTool")
    assert (before.decide, before.ask, before.rewrite_input, before.rewrite_mode) == (
        True, True, True, "replace")  # fmt: skip
    assert before.context is False
    stop = gemini.driver.capabilities("AfterAgent")
    assert (stop.keep_working, stop.decide, stop.halt) == (True, False, True)
    with_context = [n for n in gemini.ALL_EVENTS if gemini.driver.capabilities(n).context]
    assert with_context == ["SessionStart", "BeforeAgent", "AfterTool"]
    silent = gemini.driver.capabilities("BeforeToolSelection")
    assert silent == type(silent)()


def test_timeouts_are_sixty_seconds_written_in_milliseconds() -> None:
    """Gemini waits 60 s for any hook; its settings write milliseconds."""
    assert gemini.driver.timeout("BeforeTool") == 60
    assert gemini.driver.timeout("SessionEnd") == 60
    assert HOSTS["gemini"].timeout_value(10) == 10_000


def test_project_root_comes_from_gemini_project_dir() -> None:
    """GEMINI_PROJECT_DIR names the project; without it, the payload's cwd does."""
    facts = HOSTS["gemini"]
    assert facts.project_dir({"GEMINI_PROJECT_DIR": "/p"}, {"cwd": "/q"}) == "/p"
    assert facts.project_dir({}, {"cwd": "/q"}) == "/q"


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        (b'{"hook_event_name": 5}', "$.hook_event_name"),
        (b'{"hook_event_name": "BeforeTool", "cwd": "/", "session_id": "s", "tool_name": 3}',
         "$.tool_name"),
        (b'{"hook_event_name": "AfterTool", "cwd": "/", "session_id": "s", "tool_name": "x",'
         b' "tool_response": {"error": "boom"}}', "$.error"),
        (b'{"hook_event_name": "AfterAgent", "cwd": "/"}', None),
    ],
)  # fmt: skip
def test_wrong_types_are_rejected_with_their_json_path(payload: bytes, path: str | None) -> None:
    """Strict decoding: a wrongly typed field is a DecodeError naming where it is."""
    with pytest.raises(DecodeError) as caught:
        gemini.driver.decode(payload)
    assert caught.value.path == path


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(), children, max_size=4)
    ),
    max_leaves=20,
)
field_names = st.sampled_from([
    "session_id", "cwd", "transcript_path", "hook_event_name", "timestamp", "tool_name",
    "tool_input", "tool_response", "mcp_context", "original_request_name", "prompt",
    "prompt_response", "stop_hook_active", "source", "reason", "trigger", "llm_request",
])  # fmt: skip
BASE = {"session_id": "s", "cwd": "/p", "tool_name": "run_shell_command",
        "tool_input": {"command": "ls"}, "timestamp": "2026-12-01T12:23:42.213Z"}  # fmt: skip


@settings(max_examples=examples(300), deadline=None)
@given(
    event=st.sampled_from([*gemini.ALL_EVENTS, "Unknown"]),
    overrides=st.dictionaries(field_names, json_values, max_size=4),
)
def test_any_field_values_decode_or_raise_decode_error(
    event: str, overrides: dict[str, object]
) -> None:
    """Wrong types anywhere give a DecodeError (fail-open upstream), never a crash."""
    payload = json.dumps({**BASE, "hook_event_name": event, **overrides}).encode()
    try:
        decoded = gemini.driver.decode(payload)
    except DecodeError:
        return
    assert isinstance(decoded, Event)
    assert decoded.native == overrides.get("hook_event_name", event)


@settings(max_examples=examples(200), deadline=None)
@given(st.binary(max_size=512))
def test_arbitrary_bytes_never_escape_as_other_errors(data: bytes) -> None:
    """Random bytes: the cold-path peek says ValueError, the decoder DecodeError."""
    try:
        peek(data, HOSTS["gemini"], None)
    except ValueError:
        pass
    try:
        gemini.driver.decode(data)
    except DecodeError:
        pass


@settings(max_examples=examples(200), deadline=None)
@given(
    session=st.text(min_size=1),
    command=st.text(),
    tool=st.sampled_from(
        ["run_shell_command", "replace", "read_file", "invoke_agent", "mcp_srv_t", "zed"]
    ),
)
def test_valid_fields_survive_decoding(session: str, command: str, tool: str) -> None:
    """Session, tool name and shell command come through unchanged."""
    payload = {"session_id": session, "cwd": "/p", "hook_event_name": "BeforeTool",
               "tool_name": tool, "tool_input": {"command": command, "file_path": "/p/f"}}  # fmt: skip
    event = gemini.driver.decode(msgspec.json.encode(payload))
    assert event.session_id == session
    assert event.tool.name == tool  # type: ignore[attr-defined]
    is_shell = tool == "run_shell_command"
    assert event.tool.command == (command if is_shell else None)  # type: ignore[attr-defined]
