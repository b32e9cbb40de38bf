"""The Goose driver: the shared contract on payloads built from goose's source and docs
(goose cannot run here), and what is particular to it: ``block`` is the deny word."""

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
from hookbus.bus.events import AfterTool, BeforeTool, Event, Stop
from hookbus.bus.output import HookOutput
from hookbus.hosts.goose import driver as goose
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "goose"
BLOCK = HookOutput(b'{"decision":"block","reason":"R"}\n')


def validate_reply(native: str, output: HookOutput) -> None:
    """What goose reads as a decision: exit 0, nothing on stderr, and stdout empty (an
    allow) or exactly ``{"decision":"block","reason":...}`` (anything else is *no
    decision*), on PreToolUse and Stop only."""
    assert (output.exit_code, output.stderr) == (0, b"")
    if not output.stdout:
        return
    assert native in ("PreToolUse", "Stop"), native
    sent = json.loads(output.stdout)
    assert set(sent) == {"decision", "reason"} and sent["decision"] == "block"
    assert isinstance(sent["reason"], str) and sent["reason"]


class TestGooseContract(DriverContract):
    """The shared contract, on goose's documented and source-built payloads."""

    host = "goose"
    golden_dir = GOLDEN
    before_tool_golden = "PreToolUse.developer__shell"
    #: Only the tool events carry working_dir.
    no_cwd = frozenset({"SessionStart", "SessionEnd", "UserPromptSubmit", "Stop"})
    refusals: ClassVar[dict[str, HookOutput]] = {
        "PreToolUse": BLOCK,
        "Stop": HookOutput(),
        "PostToolUse": HookOutput(),
        "SessionStart": HookOutput(),
    }
    reply_cases = (
        ReplyCase(id="deny-is-block", payload="PreToolUse.developer__shell",
                  reply=Reply.deny("no"), stdout=b'{"decision":"block","reason":"no"}\n'),
        ReplyCase(id="deny-without-reason-still-says-why", payload="PreToolUse.developer__shell",
                  reply=Reply(decision="deny", reason=" "),
                  stdout=b'{"decision":"block","reason":"Blocked by a hookbus handler."}\n'),
        ReplyCase(id="ask-blocks", payload="PreToolUse.developer__edit", reply=Reply.ask("sure?"),
                  stdout=b'{"decision":"block","reason":"sure?"}\n'),
        ReplyCase(id="rewrite-blocks", payload="PreToolUse.developer__shell",
                  reply=Reply.rewrite({"command": "ls"}, "use ls"),
                  stdout=b'{"decision":"block","reason":"use ls"}\n'),
        ReplyCase(id="halt-blocks-the-call", payload="PreToolUse.mcp",
                  reply=Reply.stop_agent("budget"), stdout=b'{"decision":"block","reason":"budget"}\n'),
        ReplyCase(id="allow-is-no-opinion", payload="PreToolUse.developer__shell",
                  reply=Reply.allow("fine"), stdout=b""),
        ReplyCase(id="stop-keep-working-is-block", payload="Stop",
                  reply=Reply.continue_working("run the tests"),
                  stdout=b'{"decision":"block","reason":"run the tests"}\n'),
        ReplyCase(id="prompt-deny-is-ignored-by-goose", payload="UserPromptSubmit",
                  reply=Reply.deny("no"), stdout=b""),
        ReplyCase(id="context-is-dropped", payload="PostToolUse.developer__shell",
                  reply=Reply.add_context("c"), stdout=b""),
        ReplyCase(id="no-opinion", payload="PreToolUse.developer__shell", reply=Reply(), stdout=b""),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        validate_reply(native or "", output)


def decode(name: str) -> Any:
    return goose.driver.decode((GOLDEN / f"{name}.json").read_bytes())


def test_the_event_name_is_event() -> None:
    """The payload names its event in ``event``, which wins over ``--event``."""
    data = (GOLDEN / "Stop.json").read_bytes()
    assert goose.driver.decode(data, "SessionEnd").native == "Stop"
    with pytest.raises(DecodeError, match="no event"):
        goose.driver.decode(b'{"hook_event_name": "Stop", "session_id": "s"}')


def test_tools_and_their_kinds() -> None:
    """The developer tools by the table, any other extension's tool as an MCP server's,
    with the command, the paths and the server where a handler looks."""
    shell, edit, mcp = (decode(n) for n in (
        "PreToolUse.developer__shell", "PreToolUse.developer__edit", "PreToolUse.mcp"))  # fmt: skip
    assert isinstance(shell, BeforeTool) and shell.tool.command == "sudo rm -rf /"
    assert (shell.tool.call_id, shell.cwd) == ("call_1", "/Users/you/project")
    assert isinstance(edit, BeforeTool) and edit.tool.paths == ("/Users/you/project/src/main.rs",)
    assert isinstance(mcp, BeforeTool) and mcp.tool.matches("mcp:github")
    assert mcp.tool.kind == "mcp" and not shell.tool.matches("mcp:developer")


def test_results_failures_and_the_turns_end() -> None:
    """A write's output and its after-edit, a failure's error, the last message."""
    written, failed = decode("PostToolUse.developer__write"), decode(
        "PostToolUseFailure.developer__shell")  # fmt: skip
    assert isinstance(written, AfterTool) and written.ok
    assert written.output == "Wrote /Users/you/project/notes.md"
    (edit,) = goose.driver.derive(written)
    assert [c.path for c in edit.changes] == ["/Users/you/project/notes.md"]
    assert isinstance(failed, AfterTool) and failed.error and "test failed" in failed.error
    assert not goose.driver.derive(failed)
    stop = decode("Stop")
    assert isinstance(stop, Stop) and stop.last_message and stop.last_message.startswith("Done")


def test_routes_for_mcp_servers_and_the_echo_events() -> None:
    """``mcp:github`` is the prefix ``github__``; ``mcp`` is every tool the table does not
    name; the shell and file echo events register only when named."""
    route = goose.driver.tool_route(("mcp:github",))
    assert route is not None and route.prefixes == ("github__",) and not route.unknown
    every = goose.driver.tool_route(("mcp",))
    assert every is not None and every.unknown and "developer__shell" in every.known
    assert goose.driver.natives("other") == ()
    assert goose.driver.natives("other", ("BeforeShellExecution",)) == ("BeforeShellExecution",)
    assert goose.driver.natives("before-tool") == ("PreToolUse",)


REPLIES = [
    Reply.deny("R"), Reply.allow(), Reply.ask("R"), Reply.rewrite({"command": "ls"}),
    Reply.add_context("c"), Reply.tell_user("m"), Reply.continue_working("k"),
    Reply.stop_agent("h"), Reply(decision="deny", updated_input={"command": "ls"}, context="c",
                                 message="m", keep_working="k", halt="h"),
]  # fmt: skip


@pytest.mark.parametrize("native", goose.ALL_EVENTS)
@pytest.mark.parametrize("reply", REPLIES, ids=lambda r: ",".join(msgspec.structs.asdict(r)))
def test_every_reply_to_every_event_is_a_decision_goose_reads(native: str, reply: Reply) -> None:
    """Whatever a merged reply holds, stdout is empty or goose's exact block, on the two
    events that read one; what could not be sent is reported as dropped."""
    encoded = goose.driver.encode(native, reply)
    validate_reply(native, encoded.output)
    refuses = reply.decision in ("deny", "ask") or reply.updated_input is not None
    refuses = refuses or reply.halt is not None
    blocked = bool(encoded.output.stdout)
    expected = (native == "PreToolUse" and refuses) or (
        native == "Stop" and reply.keep_working is not None)  # fmt: skip
    assert blocked == expected
    if not blocked:
        assert encoded.dropped or reply == Reply()


@pytest.mark.timeout(300)  # hundreds of examples: minutes on a loaded machine
@settings(max_examples=examples(300), deadline=None)
@given(
    native=st.sampled_from([*goose.ALL_EVENTS, "Unknown"]),
    fields=st.dictionaries(
        st.sampled_from(["session_id", "matcher_context", "tool_call_id", "tool_name",
                         "tool_input", "tool_output", "message", "last_assistant_message",
                         "working_dir"]),
        st.none() | st.booleans() | st.integers() | st.text(max_size=8)
        | st.lists(st.text(max_size=4), max_size=2)
        | st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=2),
        max_size=5),
)  # fmt: skip
def test_any_field_values_decode_or_raise_decode_error(
    native: str, fields: dict[str, object]
) -> None:
    """Wrong types anywhere give an event or a DecodeError (fail-open upstream), never a
    crash; the event name survives."""
    payload = json.dumps({"event": native, **fields}).encode()
    try:
        decoded = goose.driver.decode(payload)
    except DecodeError:
        return
    assert isinstance(decoded, Event)
    assert decoded.native == native
