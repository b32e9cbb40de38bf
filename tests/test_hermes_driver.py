"""The Hermes Agent driver: the shared contract on envelopes the real Hermes 0.19.0 sent
its shell hooks, and what is particular to Hermes (first turn = session start, a spawn's
two models, block messages never empty)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import JSON_VALUES, REPLIES

from hookbus import Reply
from hookbus.bus.errors import DecodeError
from hookbus.bus.events import BeforeTool, Event, SessionStart, SubagentStart, SubagentStop
from hookbus.bus.output import HookOutput
from hookbus.hosts.hermes import driver as hermes
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "hermes"
TOOL = "real/pre_tool_call.terminal"


@pytest.fixture(autouse=True)
def hermes_home(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test reads the goldens' own ``config.yaml``, never the user's."""
    monkeypatch.setenv("HERMES_HOME", str(GOLDEN / "hermes_home"))


def validate_reply(native: str | None, output: HookOutput) -> None:
    """What Hermes reads (``agent/shell_hooks.py`` ``_parse_response``): exit 0, stdout
    empty or one object; a block or continue always with a non-empty message."""
    assert (output.exit_code, output.stderr) == (0, b"")
    if not output.stdout:
        return
    sent = json.loads(output.stdout)
    assert isinstance(sent, dict) and sent
    assert set(sent) <= {"action", "message", "context", "args"}
    if "action" in sent:
        assert sent["action"] == ("block" if native == "pre_tool_call" else "continue")
        assert isinstance(sent["message"], str) and sent["message"].strip()
    if "args" in sent:
        assert sent["action"] == "block"


class TestHermesContract(DriverContract):
    """The shared contract, on envelopes captured from the real Hermes Agent 0.19.0
    (``golden/hermes/real``) and edited copies of them."""

    host = "hermes"
    golden_dir = GOLDEN
    before_tool_golden = TOOL
    refusals: ClassVar[dict[str, HookOutput]] = {
        "pre_tool_call": HookOutput(b'{"action":"block","message":"R"}\n'),
        "post_tool_call": HookOutput(),
        "pre_llm_call": HookOutput(),
    }
    reply_cases = (
        ReplyCase(id="deny-blocks", payload=TOOL, reply=Reply.deny("no"),
                  stdout=b'{"action":"block","message":"no"}\n'),
        ReplyCase(id="deny-without-reason-still-says-why", payload=TOOL,
                  reply=Reply(decision="deny", reason=" "),
                  stdout=b'{"action":"block","message":"Denied by a hookbus handler."}\n'),
        ReplyCase(id="ask-blocks", payload=TOOL, reply=Reply.ask("sure?"),
                  stdout=b'{"action":"block","message":"sure?"}\n'),
        ReplyCase(id="allow-is-no-opinion", payload=TOOL, reply=Reply.allow("ok"), stdout=b""),
        ReplyCase(id="rewrite-blocks-and-carries-the-args", payload=TOOL,
                  reply=Reply.rewrite({"command": "ls"}, "use ls"),
                  stdout=b'{"args":{"command":"ls"},"action":"block","message":"use ls"}\n'),
        ReplyCase(id="halt-blocks", payload=TOOL, reply=Reply.stop_agent("budget"),
                  stdout=b'{"action":"block","message":"budget"}\n'),
        ReplyCase(id="tool-context-is-dropped", payload=TOOL, reply=Reply.add_context("x"),
                  stdout=b""),
        ReplyCase(id="session-start-context", payload="real/pre_llm_call",
                  reply=Reply.add_context("house rules"), stdout=b'{"context":"house rules"}\n'),
        ReplyCase(id="prompt-context", payload="pre_llm_call.later-turn",
                  reply=Reply.add_context("more"), stdout=b'{"context":"more"}\n'),
        ReplyCase(id="prompt-deny-is-dropped", payload="pre_llm_call.later-turn",
                  reply=Reply.deny("no"), stdout=b""),
        ReplyCase(id="verify-keeps-working", payload="pre_verify",
                  reply=Reply.continue_working("run the tests"),
                  stdout=b'{"action":"continue","message":"run the tests"}\n'),
        ReplyCase(id="post-tool-reads-nothing", payload="real/post_tool_call.terminal",
                  reply=Reply(decision="deny", reason="x", context="y"), stdout=b""),
        ReplyCase(id="no-opinion", payload=TOOL, reply=Reply(), stdout=b""),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        validate_reply(native, output)


def decode(name: str) -> Any:
    return hermes.driver.decode((GOLDEN / f"{name}.json").read_bytes())


def test_first_turn_is_the_session_start_and_later_turns_are_prompts() -> None:
    """``pre_llm_call`` with ``is_first_turn`` is a session start (the one event whose
    context reaches the model at a session's start); later turns are prompts."""
    assert isinstance(decode("real/pre_llm_call"), SessionStart)
    later = decode("pre_llm_call.later-turn")
    assert (later.kind, later.prompt) == ("prompt-submit", "Now run the tests")
    assert hermes.driver.natives("session-start") == ("pre_llm_call",)
    assert hermes.driver.natives("prompt-submit") == ("pre_llm_call",)


def test_a_spawn_names_the_childrens_model_and_the_parents() -> None:
    """A spawning ``delegate_task`` carries ``delegation.model`` on each child and the
    parent's model on the event, both from ``config.yaml``."""
    event = decode("pre_tool_call.delegate_task.batch")
    assert isinstance(event, BeforeTool)
    assert event.model == "fake-model"
    assert [(s.model, s.prompt) for s in event.tool.spawns] == [
        ("cheap-model", "List the tests"), ("cheap-model", "Read the README")]  # fmt: skip


def test_a_spawn_without_delegation_model_inherits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No ``delegation.model`` (or no configuration at all): the child's model is unknown
    (it inherits the parent's), and the event's model is the parent's when configured."""
    (tmp_path / "config.yaml").write_text("model: big-model\n")
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    event = decode("real/pre_tool_call.delegate_task")
    assert (event.model, [s.model for s in event.tool.spawns]) == ("big-model", [None])
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "missing"))
    assert decode("real/pre_tool_call.delegate_task").model is None


@pytest.mark.parametrize(
    ("action", "spawns"),
    [(None, True), ("", True), (" Spawn ", True), ("status", False), (3, True)],
)
def test_delegate_task_spawns_for_an_empty_or_spawn_action(action: object, spawns: bool) -> None:
    """``action`` trimmed and lower-cased, empty or ``spawn``, spawns (absent: 0.19.0)."""
    data: dict[str, Any] = {"goal": "g"} if action is None else {"goal": "g", "action": action}
    assert hermes.spawns(data) is spawns


def test_subagent_start_and_stop_name_the_same_child() -> None:
    """Start and stop name the child by its session, whose own tool calls say they run
    in that subagent; the stop carries its summary."""
    start, stop = decode("real/subagent_start"), decode("real/subagent_stop")
    call = decode("real/pre_tool_call.terminal.in-subagent")
    assert isinstance(start, SubagentStart) and isinstance(stop, SubagentStop)
    assert start.child == stop.child
    assert call.agent == start.child.__class__(role="subagent", id=start.child.id)
    assert start.child.parent_id == start.session_id
    assert stop.final_text == "Subagent finished: printed from-subagent."


def test_a_long_summary_keeps_its_last_4_kib() -> None:
    """``child_summary`` becomes the final text, cut to its last 4 KiB."""
    payload = json.loads((GOLDEN / "real/subagent_stop.json").read_text())
    payload["extra"]["child_summary"] = "x" * 5000 + "END"
    event = hermes.driver.decode(json.dumps(payload).encode())
    assert isinstance(event, SubagentStop) and event.final_text
    assert len(event.final_text) == 4096 and event.final_text.endswith("END")


@given(native=st.sampled_from(hermes.ALL_EVENTS), reply=REPLIES)
def test_every_reply_is_one_hermes_reads(native: str, reply: Reply) -> None:
    """Whatever a merged reply holds, the output is one Hermes parses; a deny on
    ``pre_tool_call`` is always a block with a message; only pre_tool_call, pre_llm_call
    and pre_verify print anything."""
    encoded = hermes.driver.encode(native, reply)
    validate_reply(native, encoded.output)
    sent = json.loads(encoded.output.stdout or b"{}")
    if native not in ("pre_tool_call", "pre_llm_call", "pre_verify"):
        assert sent == {}
    if native == "pre_tool_call" and reply.decision in ("deny", "ask"):
        assert sent["action"] == "block"


ENVELOPE_KEYS = st.sampled_from(["hook_event_name", "tool_name", "tool_input", "session_id",
                                 "cwd", "extra"])  # fmt: skip
EXTRA_KEYS = st.sampled_from(["task_id", "turn_id", "result", "status", "duration_ms",
                              "is_first_turn", "user_message", "child_summary",
                              "child_session_id", "parent_subagent_id", "platform",
                              "interrupted", "final_response", "model"])  # fmt: skip


@given(
    native=st.sampled_from([*hermes.ALL_EVENTS, "on_session_reset"]),
    tool=st.sampled_from(["terminal", "delegate_task", "write_file", "mcp_gh_issue", "zed"]),
    top=st.dictionaries(ENVELOPE_KEYS, JSON_VALUES, max_size=3),
    extra=st.dictionaries(EXTRA_KEYS, JSON_VALUES, max_size=5),
)
def test_any_field_values_decode_or_raise_decode_error(
    native: str, tool: str, top: dict[str, object], extra: dict[str, object]
) -> None:
    """Whatever types an envelope's fields (and ``extra``'s) hold, decoding gives an event
    or a DecodeError (the fail-open path), never anything else."""
    payload = {"hook_event_name": native, "tool_name": tool, "tool_input": {"command": "ls"},
               "session_id": "s", "cwd": "/p", "extra": extra, **top}  # fmt: skip
    try:
        event = hermes.driver.decode(json.dumps(payload).encode())
    except DecodeError:
        return
    assert isinstance(event, Event)


@pytest.mark.parametrize(
    ("tasks", "prompts"),
    [('[{"goal": "a"}, {"goal": "b"}]', ["a", "b"]), ([], ["g"]), ("not json", ["g"])],
    ids=["json-string", "empty-list", "bad-string"],
)
def test_a_batch_is_read_as_delegate_task_reads_it(tasks: object, prompts: list[str]) -> None:
    """``tasks`` as a JSON string is a batch too; empty or unreadable, the call's ``goal``
    is the one child."""
    payload = json.loads((GOLDEN / "real/pre_tool_call.delegate_task.json").read_text())
    payload["tool_input"] = {"goal": "g", "tasks": tasks}
    event = hermes.driver.decode(json.dumps(payload).encode())
    assert isinstance(event, BeforeTool)
    assert [s.prompt for s in event.tool.spawns] == prompts
