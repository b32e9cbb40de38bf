"""The Pi driver: the shared contract on payloads hookbus's extension sent from the real
Pi 0.73.1 (``golden/pi/real``) and on contract-shaped ones, and what is particular to Pi
(replies in the extension's wire format, the ``subagent`` example tool)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import msgspec
from hypothesis import given
from hypothesis import strategies as st
from support import REPLIES

from hookbus import Reply
from hookbus.bus import events as ev
from hookbus.bus.output import HookOutput
from hookbus.hosts.pi import driver as pi
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "pi"
#: What the extension reads of a reply (``hookbus/hosts/pi/extension.ts``).
REPLY_KEYS = {"result", "input", "append"}
RESULT_KEYS = {
    "tool_call": {"block", "reason"},
    "session_before_compact": {"cancel"},
    "before_agent_start": {"message"},
}


def validate_reply(native: str | None, output: HookOutput) -> None:
    """Exit 0, nothing on stderr, one JSON object of the extension's keys on stdout, each
    only on the event that reads it, in Pi's types."""
    assert (output.exit_code, output.stderr) == (0, b"")
    assert output.stdout.endswith(b"\n")
    sent = json.loads(output.stdout)
    assert isinstance(sent, dict) and set(sent) <= REPLY_KEYS
    if "result" in sent:
        assert native in RESULT_KEYS and set(sent["result"]) <= RESULT_KEYS[native]
        if native == "tool_call":
            assert sent["result"]["block"] is True and isinstance(sent["result"]["reason"], str)
        if native == "before_agent_start":
            message = sent["result"]["message"]
            assert set(message) == {"customType", "content", "display"}
    if "input" in sent:
        assert native == "tool_call" and isinstance(sent["input"], dict)
    if "append" in sent:
        assert native == "tool_result"
        assert all(part["type"] == "text" and isinstance(part["text"], str)
                   for part in sent["append"])  # fmt: skip


class TestPiContract(DriverContract):
    """The shared contract, on payloads captured from the real Pi 0.73.1."""

    host = "pi"
    golden_dir = GOLDEN
    before_tool_golden = "real/tool_call"
    refusals: ClassVar[dict[str, HookOutput]] = {
        "tool_call": HookOutput(b'{"result":{"block":true,"reason":"R"}}\n'),
        "tool_result": HookOutput(b'{"append":[{"type":"text","text":"R"}]}\n'),
        "session_before_compact": HookOutput(b'{"result":{"cancel":true}}\n'),
        "session_start": HookOutput(b"{}\n"),
        "agent_end": HookOutput(b"{}\n"),
    }
    reply_cases = (
        ReplyCase(id="deny-blocks", payload="real/tool_call", reply=Reply.deny("no"),
                  stdout=b'{"result":{"block":true,"reason":"no"}}\n'),
        ReplyCase(id="deny-without-reason-still-says-why", payload="real/tool_call",
                  reply=Reply(decision="deny", reason=" "),
                  stdout=b'{"result":{"block":true,"reason":"Denied by a hookbus handler."}}\n'),
        ReplyCase(id="ask-blocks", payload="real/tool_call", reply=Reply.ask("sure?"),
                  stdout=b'{"result":{"block":true,"reason":"sure?"}}\n'),
        ReplyCase(id="allow-is-no-opinion", payload="real/tool_call", reply=Reply.allow("ok"),
                  stdout=b"{}\n"),
        ReplyCase(id="rewrite", payload="real/tool_call", reply=Reply.rewrite({"command": "ls"}),
                  stdout=b'{"input":{"command":"ls"}}\n'),
        ReplyCase(id="halt-blocks", payload="real/tool_call", reply=Reply.stop_agent("budget"),
                  stdout=b'{"result":{"block":true,"reason":"budget"}}\n'),
        ReplyCase(id="tool-context-is-dropped", payload="real/tool_call",
                  reply=Reply.add_context("x"), stdout=b"{}\n"),
        ReplyCase(id="result-context-is-appended", payload="real/tool_result",
                  reply=Reply.add_context("slow"),
                  stdout=b'{"append":[{"type":"text","text":"slow"}]}\n'),
        ReplyCase(id="result-deny-is-appended", payload="real/tool_result",
                  reply=Reply.deny("looks wrong"),
                  stdout=b'{"append":[{"type":"text","text":"looks wrong"}]}\n'),
        ReplyCase(id="prompt-context-is-a-message", payload="real/before_agent_start",
                  reply=Reply.add_context("ctx"),
                  stdout=b'{"result":{"message":{"customType":"hookbus","content":"ctx",'
                         b'"display":false}}}\n'),
        ReplyCase(id="compaction-deny-cancels", payload="real/session_before_compact",
                  reply=Reply.deny("not now"), stdout=b'{"result":{"cancel":true}}\n'),
        ReplyCase(id="stop-reads-nothing", payload="real/agent_end",
                  reply=Reply.continue_working("more"), stdout=b"{}\n"),
        ReplyCase(id="no-opinion", payload="real/tool_call", reply=Reply(), stdout=b"{}\n"),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        validate_reply(native, output)


def decode(name: str) -> Any:
    return pi.driver.decode((GOLDEN / f"{name}.json").read_bytes())


def test_the_subagent_call_is_a_subagent_start_per_child() -> None:
    """A parallel ``subagent`` call is one before-tool of kind agent and a subagent start
    per task, each naming its agent; no model (the agent file decides it)."""
    event = decode("tool_call.subagent.parallel")
    assert isinstance(event, ev.BeforeTool) and event.tool.kind == "agent"
    starts = pi.driver.derive(event)
    assert [(s.child.type, s.call_id) for s in starts if isinstance(s, ev.SubagentStart)] == [
        ("scout", "call_fake0003"), ("reviewer", "call_fake0003")
    ]  # fmt: skip
    assert [s.model for s in event.tool.spawns] == [None, None]


def test_the_real_subagent_result_is_a_subagent_stop_with_its_final_text() -> None:
    """The real example's result: a stop naming the agent, its last text, usage, status."""
    event = decode("real/tool_result.subagent")
    [stop] = pi.driver.derive(event)
    assert isinstance(stop, ev.SubagentStop)
    assert (stop.child.type, stop.final_text, stop.status) == (
        "counter", "CHILD-REPORT: 3 files", "completed"
    )  # fmt: skip
    assert stop.usage is not None and stop.usage.input_tokens == 10


def test_subagent_kinds_register_the_tool_events() -> None:
    """A subagent-start handler is served by tool_call, a subagent-stop one by tool_result."""
    assert pi.driver.natives("subagent-start") == ("tool_call",)
    assert pi.driver.natives("subagent-stop") == ("tool_result",)


def test_an_edit_result_derives_an_after_edit() -> None:
    """A successful ``edit`` result is also an after-edit of its absolute path."""
    data = json.loads((GOLDEN / "real" / "tool_result.json").read_text())
    data["payload"].update(toolName="edit", input={"path": "a.py", "edits": []})
    event = pi.driver.decode(json.dumps(data).encode())
    [edit] = pi.driver.derive(event)
    assert isinstance(edit, ev.AfterEdit) and edit.changes[0].path == "<project>/a.py"


@given(native=st.sampled_from(pi.ALL_EVENTS), reply=REPLIES)
def test_every_reply_is_one_the_extension_reads(native: str, reply: Reply) -> None:
    """Any reply to any event encodes to what the extension reads; a deny of a tool call
    always blocks it."""
    output = pi.driver.encode(native, reply).output
    validate_reply(native, output)
    if native == "tool_call" and reply.decision == "deny":
        assert json.loads(output.stdout)["result"]["block"] is True


@given(
    payload=st.dictionaries(
        st.sampled_from(
            ["toolName", "input", "content", "messages", "reason", "prompt", "details"]
        ),
        st.none() | st.integers() | st.text() | st.lists(st.text()),
    )
)
def test_loosely_typed_payload_fields_decode_or_fail_cleanly(payload: dict[str, Any]) -> None:
    """Whatever Pi puts in its event's fields, a tool event decodes or raises DecodeError."""
    from hookbus.bus.errors import DecodeError

    for native in pi.ALL_EVENTS:
        data = msgspec.json.encode({"event": native, "payload": payload})
        try:
            event = pi.driver.decode(data)
        except DecodeError:
            continue
        pi.driver.derive(event)
