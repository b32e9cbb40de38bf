"""The Windsurf driver: the shared contract on payloads built from the vendor page (Windsurf
cannot run here), and what is particular to it: the reply is the exit code alone."""

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
from hookbus.bus.events import AfterTool, BeforeTool, Event, PromptSubmit, Stop
from hookbus.bus.host import ToolRoute
from hookbus.bus.output import HookOutput
from hookbus.hosts.windsurf import driver as windsurf
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "windsurf"
BLOCK = HookOutput(stderr=b"R\n", exit_code=2)
REWRITTEN = (
    b"hookbus: a handler rewrote this call's input, which Windsurf cannot apply; "
    b"the call is blocked rather than run unrewritten.\n"
)


def validate_reply(native: str, output: HookOutput) -> None:
    """What Windsurf acts on: exit 0, or exit 2 with a reason on stderr on a pre_* event
    only (any other code, and exit 2 elsewhere, is an error the action ignores); stdout
    only where ``show_output`` shows it."""
    assert output.exit_code in (0, 2)
    if output.exit_code == 2:
        assert native in windsurf.BLOCKING and output.stderr.strip(), (native, output)
    else:
        assert output.stderr == b""
    assert not output.stdout or native in windsurf.SHOWN


class TestWindsurfContract(DriverContract):
    """The shared contract, on the vendor page's examples of every event."""

    host = "windsurf"
    golden_dir = GOLDEN
    before_tool_golden = "pre_run_command"
    exit_codes = frozenset({0, 2})
    refusals: ClassVar[dict[str, HookOutput]] = {
        **{native: BLOCK for native in sorted(windsurf.BLOCKING)},
        "post_run_command": HookOutput(),
        "post_cascade_response": HookOutput(),
        "post_setup_worktree": HookOutput(),
    }
    reply_cases = (
        ReplyCase(id="deny-blocks-with-exit-2", payload="pre_run_command",
                  reply=Reply.deny("no"), stdout=b"", stderr=b"no\n", exit_code=2),
        ReplyCase(id="deny-without-reason-still-says-why", payload="pre_run_command",
                  reply=Reply(decision="deny", reason=" "), stdout=b"",
                  stderr=b"Blocked by a hookbus handler.\n", exit_code=2),
        ReplyCase(id="ask-blocks", payload="pre_write_code", reply=Reply.ask("sure?"),
                  stdout=b"", stderr=b"sure?\n", exit_code=2),
        ReplyCase(id="rewrite-blocks", payload="pre_run_command",
                  reply=Reply.rewrite({"command_line": "ls"}), stdout=b"",
                  stderr=REWRITTEN, exit_code=2),
        ReplyCase(id="halt-blocks-the-action", payload="pre_mcp_tool_use",
                  reply=Reply.stop_agent("budget"), stdout=b"", stderr=b"budget\n", exit_code=2),
        ReplyCase(id="prompt-deny-blocks", payload="pre_user_prompt", reply=Reply.deny("secret"),
                  stdout=b"", stderr=b"secret\n", exit_code=2),
        ReplyCase(id="allow-is-no-opinion", payload="pre_read_code", reply=Reply.allow("fine"),
                  stdout=b""),
        ReplyCase(id="context-is-dropped", payload="pre_read_code",
                  reply=Reply.add_context("slow"), stdout=b""),
        ReplyCase(id="message-is-shown", payload="post_write_code",
                  reply=Reply.tell_user("formatted"), stdout=b"formatted\n"),
        ReplyCase(id="message-on-a-prompt-is-dropped", payload="pre_user_prompt",
                  reply=Reply.tell_user("hi"), stdout=b""),
        ReplyCase(id="post-deny-cannot-block", payload="post_run_command",
                  reply=Reply.deny("late"), stdout=b""),
        ReplyCase(id="stop-keep-working-is-dropped", payload="post_cascade_response",
                  reply=Reply.continue_working("more"), stdout=b""),
        ReplyCase(id="no-opinion", payload="pre_run_command", reply=Reply(), stdout=b""),
    )  # fmt: skip

    #: Only the command events name a folder (post_setup_worktree: its worktree).
    no_cwd = frozenset(windsurf.ALL_EVENTS) - {"pre_run_command", "post_run_command",
                                               "post_setup_worktree"}  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        validate_reply(native or "", output)


def decode(name: str) -> Any:
    return windsurf.driver.decode((GOLDEN / f"{name}.json").read_bytes())


def test_the_event_name_is_agent_action_name() -> None:
    """The payload names its event in ``agent_action_name`` (never ``hook_event_name``),
    which wins over ``--event``."""
    data = (GOLDEN / "pre_read_code.json").read_bytes()
    assert windsurf.driver.decode(data, "post_read_code").native == "pre_read_code"
    with pytest.raises(DecodeError, match="agent_action_name"):
        windsurf.driver.decode(b'{"hook_event_name": "pre_read_code"}')


def test_each_operation_is_a_tool_call_of_its_kind() -> None:
    """Commands, reads, writes and MCP calls become tool calls of their kind, with the
    command, the paths and the MCP server where a handler looks for them."""
    shell, read, write, mcp = (decode(n) for n in (
        "pre_run_command", "pre_read_code", "pre_write_code", "pre_mcp_tool_use"))  # fmt: skip
    assert isinstance(shell, BeforeTool) and shell.tool.command == "npm install package-name"
    assert (shell.tool.kind, shell.cwd) == ("shell", "/Users/yourname/project")
    assert isinstance(read, BeforeTool) and read.tool.paths == ("/Users/yourname/project/file.py",)
    assert isinstance(write, BeforeTool) and write.tool.kind == "edit"
    assert write.tool.input["edits"] == [{"old_string": "def old_function():\n    pass",
                                          "new_string": "def new_function():\n    return True"}]  # fmt: skip
    assert isinstance(mcp, BeforeTool) and mcp.tool.matches("mcp:github")
    assert mcp.tool.name == "mcp__github__create_issue"
    assert mcp.tool.input["title"] == "Bug report"


def test_session_turn_model_and_time_come_from_the_common_fields() -> None:
    """``trajectory_id`` is the session, ``execution_id`` the turn, ``model_name`` (live
    captures) the model, and the ISO timestamp keeps its offset."""
    event = decode("pre_run_command.live")
    assert event.session_id == "5e0c7a9b-1d2e-4f30-8a41-b2c3d4e5f607"
    assert event.turn_id == "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
    assert event.model == "SWE-1.6 Slow"
    assert event.timestamp == pytest.approx(1782771030.653398)


def test_prompt_response_and_results() -> None:
    """The prompt, the turn's response, an MCP result and a written file are read."""
    prompt, stop = decode("pre_user_prompt"), decode("post_cascade_response")
    assert isinstance(prompt, PromptSubmit) and prompt.prompt.startswith("can you run")
    assert isinstance(stop, Stop) and stop.last_message and "Planner Response" in stop.last_message
    result, written = decode("post_mcp_tool_use"), decode("post_write_code")
    assert isinstance(result, AfterTool) and (result.ok, result.output) == (True, "...")
    assert isinstance(written, AfterTool)
    assert [c.path for c in written.changes] == ["/Users/yourname/project/file.py"]
    (edit,) = windsurf.driver.derive(written)
    assert edit.kind == "after-edit"


def test_only_the_wanted_operations_are_registered() -> None:
    """hooks.json has no matcher: a shell guard registers pre_run_command alone, an MCP
    one the MCP event alone, and the transcript stop only when named."""
    driver = windsurf.driver
    shell, mcp = driver.tool_route(("shell",)), driver.tool_route(("mcp:github",))
    before = driver.natives("before-tool")
    assert [n for n in before if driver.can_carry(n, shell)] == ["pre_run_command"]
    assert [n for n in before if driver.can_carry(n, mcp)] == ["pre_mcp_tool_use"]
    assert driver.can_carry("pre_mcp_tool_use", ToolRoute(names=(), unknown=True))
    assert driver.natives("stop") == ("post_cascade_response",)
    assert driver.natives("other") == ("post_setup_worktree",)
    assert "post_cascade_response_with_transcript" in driver.natives(
        "other", ("post_cascade_response_with_transcript",))  # fmt: skip
    assert driver.natives("after-edit") == ("post_write_code",)


REPLIES = [
    Reply.deny("R"), Reply.allow(), Reply.ask("R"), Reply.rewrite({"command_line": "ls"}),
    Reply.add_context("c"), Reply.tell_user("m"), Reply.continue_working("k"),
    Reply.stop_agent("h"), Reply(decision="deny", updated_input={"command_line": "ls"},
                                 context="c", message="m", keep_working="k", halt="h"),
]  # fmt: skip


@pytest.mark.parametrize("native", windsurf.ALL_EVENTS)
@pytest.mark.parametrize("reply", REPLIES, ids=lambda r: ",".join(msgspec.structs.asdict(r)))
def test_every_reply_to_every_event_is_an_exit_code_windsurf_reads(
    native: str, reply: Reply
) -> None:
    """Whatever a merged reply holds, every event gets exit 0 or (pre_* only) exit 2 with
    a reason; what it could not take is reported as dropped, and a capability declared
    is one the output uses."""
    encoded = windsurf.driver.encode(native, reply)
    validate_reply(native, encoded.output)
    refuses = reply.decision in ("deny", "ask") or reply.updated_input is not None
    refuses = refuses or reply.halt is not None
    blocked = encoded.output.exit_code == 2
    assert blocked == (native in windsurf.BLOCKING and refuses)
    assert blocked == (windsurf.driver.capabilities(native).decide and refuses)
    if not blocked and not encoded.output.stdout:
        assert encoded.dropped
    assert bool(encoded.output.stdout) == (bool(reply.message) and native in windsurf.SHOWN)


def test_a_degraded_ask_says_so() -> None:
    """An ask becomes a block, with a diagnostic naming the ask."""
    encoded = windsurf.driver.encode("pre_run_command", Reply.ask("sure?"))
    assert [d.field for d in encoded.dropped] == ["decision"]
    assert "cannot ask" in encoded.dropped[0].why


tool_info = st.dictionaries(
    st.sampled_from(["file_path", "edits", "command_line", "cwd", "mcp_server_name",
                     "mcp_tool_name", "mcp_tool_arguments", "mcp_result", "user_prompt",
                     "response", "transcript_path", "worktree_path"]),
    st.none() | st.booleans() | st.integers() | st.text(max_size=8)
    | st.lists(st.text(max_size=4), max_size=2)
    | st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=2),
    max_size=5,
)  # fmt: skip


@pytest.mark.timeout(300)  # hundreds of examples: minutes on a loaded machine
@settings(max_examples=examples(300), deadline=None)
@given(
    native=st.sampled_from([*windsurf.ALL_EVENTS, "pre_unknown"]),
    info=tool_info,
    common=st.dictionaries(st.sampled_from(["trajectory_id", "execution_id", "timestamp",
                                            "model_name"]),
                           st.none() | st.integers() | st.text(max_size=12), max_size=3),
)  # fmt: skip
def test_any_tool_info_decodes_or_raises_decode_error(
    native: str, info: dict[str, object], common: dict[str, object]
) -> None:
    """Wrong types anywhere in ``tool_info`` or the common fields give an event or a
    DecodeError (fail-open upstream), never a crash; the event name survives."""
    payload = json.dumps({"agent_action_name": native, **common, "tool_info": info}).encode()
    try:
        decoded = windsurf.driver.decode(payload)
    except DecodeError:
        return
    assert isinstance(decoded, Event)
    assert decoded.native == native
