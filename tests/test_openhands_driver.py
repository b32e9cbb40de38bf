"""The OpenHands driver: the shared contract on payloads built from the Agent SDK's source
(``OpenHands/software-agent-sdk@611629e``), and the one reply shape OpenHands reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import every_reply_part, examples, json_values

from hookbus import Reply
from hookbus.bus.errors import DecodeError
from hookbus.bus.events import BeforeTool, Event, PromptSubmit
from hookbus.bus.output import HookOutput
from hookbus.hosts.openhands import driver as openhands
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "openhands"
#: What ``HookExecutor.execute`` reads from stdout, on any event.
READS = {"decision", "reason", "additionalContext", "continue"}


def validate_reply(native: str, output: HookOutput) -> None:
    """What OpenHands acts on: exit 0 (only 2 blocks; we block by JSON), and stdout empty
    or one object of the keys it reads, only on an event that reads a reply."""
    assert (output.exit_code, output.stderr) == (0, b"")
    if not output.stdout:
        return
    sent = json.loads(output.stdout)
    assert isinstance(sent, dict)
    assert set(sent) <= READS, sent
    assert native in openhands.BLOCKS, (native, sent)
    assert sent.get("decision") in (None, "deny", "allow"), sent


def flat(**fields: Any) -> bytes:
    return msgspec.json.encode(fields) + b"\n"


SHELL = "PreToolUse.terminal"


class TestOpenHandsContract(DriverContract):
    """The shared contract, on payloads built from ``HookEvent``."""

    host = "openhands"
    golden_dir = GOLDEN
    before_tool_golden = SHELL
    refusals: ClassVar[dict[str, HookOutput]] = {
        "PreToolUse": HookOutput(flat(decision="deny", reason="R")),
        "UserPromptSubmit": HookOutput(flat(decision="deny", reason="R")),
        # A refusal is a decision, and a Stop takes none: keep working is not a refusal.
        "Stop": HookOutput(),
        "PostToolUse": HookOutput(),
    }
    reply_cases = (
        ReplyCase(id="pre-tool-deny", payload=SHELL, reply=Reply.deny("no"),
                  stdout=flat(decision="deny", reason="no")),
        ReplyCase(id="pre-tool-deny-without-reason-still-says-why", payload=SHELL,
                  reply=Reply(decision="deny", reason=""),
                  stdout=flat(decision="deny", reason="Denied by a hookbus handler.")),
        ReplyCase(id="pre-tool-ask-is-a-deny", payload=SHELL, reply=Reply.ask("sure?"),
                  stdout=flat(decision="deny", reason="sure?")),
        ReplyCase(id="pre-tool-allow", payload=SHELL, reply=Reply.allow(),
                  stdout=flat(decision="allow")),
        ReplyCase(id="pre-tool-rewrite-is-dropped", payload=SHELL,
                  reply=Reply.rewrite({"command": "ls"}), stdout=b""),
        ReplyCase(id="prompt-deny-blocks-it", payload="UserPromptSubmit",
                  reply=Reply.deny("secret"), stdout=flat(decision="deny", reason="secret")),
        ReplyCase(id="prompt-context", payload="UserPromptSubmit",
                  reply=Reply.add_context("rules"), stdout=flat(additionalContext="rules")),
        ReplyCase(id="stop-keep-working", payload="Stop",
                  reply=Reply.continue_working("run the tests"),
                  stdout=flat(decision="deny", reason="run the tests")),
        ReplyCase(id="stop-keep-working-with-context-feeds-back-both", payload="Stop",
                  reply=Reply(keep_working="run the tests", context="npm test"),
                  stdout=flat(decision="deny", reason="run the tests",
                              additionalContext="run the tests\n\nnpm test")),
        ReplyCase(id="stop-context-alone-is-dropped", payload="Stop",
                  reply=Reply.add_context("x"), stdout=b""),
        ReplyCase(id="stop-halt-is-dropped", payload="Stop", reply=Reply.stop_agent("h"),
                  stdout=b""),
        ReplyCase(id="post-tool-deny-is-dropped", payload="PostToolUse.terminal",
                  reply=Reply.deny("late"), stdout=b""),
        ReplyCase(id="no-opinion", payload=SHELL, reply=Reply(), stdout=b""),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        validate_reply(native or "PreToolUse", output)


def decode(name: str) -> Any:
    return openhands.driver.decode((GOLDEN / f"{name}.json").read_bytes())


REPLIES = every_reply_part()


@pytest.mark.parametrize("native", openhands.ALL_EVENTS)
@pytest.mark.parametrize("reply", REPLIES, ids=lambda r: ",".join(msgspec.structs.asdict(r)))
def test_every_reply_to_every_event_is_one_openhands_reads(native: str, reply: Reply) -> None:
    """Whatever a merged reply holds, stdout holds only what OpenHands reads, and only
    where it acts on it; what it could not take is reported as dropped."""
    encoded = openhands.driver.encode(native, reply)
    validate_reply(native, encoded.output)
    if not encoded.output.stdout and reply != Reply.allow():
        assert encoded.dropped


def test_tools_kinds_and_paths() -> None:
    """terminal is a shell; file_editor an edit, but its view a read; both name the file;
    browser tools are web, task an agent spawn."""
    shell = decode(SHELL)
    assert isinstance(shell, BeforeTool)
    assert (shell.tool.kind, shell.tool.command) == ("shell", "npm test -- --runInBand")
    edit, view = decode("PreToolUse.file_editor.str_replace"), decode("PreToolUse.file_editor.view")
    assert (edit.tool.kind, view.tool.kind) == ("edit", "read")
    assert edit.tool.paths == view.tool.paths == ("/workspace/shop-api/src/app.ts",)
    assert decode("PreToolUse.browser_navigate").tool.kind == "web"
    assert decode("PreToolUse.task").tool.spawns[0].agent_type == "explore"
    (changed,) = openhands.driver.derive(decode("PostToolUse.file_editor.str_replace"))
    assert [c.path for c in changed.changes] == ["/workspace/shop-api/src/app.ts"]


def test_the_browser_tools_are_routed_to_web_handlers() -> None:
    """A web handler's route takes every ``browser_*`` tool; a read handler's does not take
    the file editors, whose calls are edits unless they view."""
    web = openhands.driver.tool_route(("web",))
    assert web is not None and web.prefixes == ("browser_",)
    read = openhands.driver.tool_route(("read",))
    assert read is not None and "file_editor" not in read.names


def test_nulls_and_the_prompt() -> None:
    """A payload without a session or working dir decodes to empty ones; the prompt is
    ``message``."""
    bare = decode("PreToolUse.no-session")
    assert (bare.session_id, bare.cwd) == ("", "")
    prompt = decode("UserPromptSubmit")
    assert isinstance(prompt, PromptSubmit)
    assert prompt.prompt == "Make the checkout tests pass"


def test_no_opinion_is_empty_and_timeouts_are_openhands() -> None:
    """Every event's no-opinion is exit 0 with nothing printed; 60 s per hook."""
    for native in openhands.ALL_EVENTS:
        assert openhands.driver.no_opinion(native) == HookOutput()
        assert openhands.driver.timeout(native) == 60.0


FIELDS = st.sampled_from(["event_type", "tool_name", "tool_input", "tool_response", "message",
                          "session_id", "working_dir", "metadata"])  # fmt: skip


@settings(max_examples=examples(300), deadline=None)
@given(event=st.sampled_from([*openhands.ALL_EVENTS, "Notification"]),
       overrides=st.dictionaries(FIELDS, json_values(), max_size=4))  # fmt: skip
def test_any_field_values_decode_or_raise_decode_error(
    event: str, overrides: dict[str, object]
) -> None:
    """Wrong types anywhere give a DecodeError (answered as no opinion), never a crash."""
    base = {"event_type": event, "tool_name": "terminal", "tool_input": {"command": "ls"},
            "session_id": "s", "working_dir": "/w"}  # fmt: skip
    payload = {**base, **overrides}
    try:
        decoded = openhands.driver.decode(json.dumps(payload).encode())
    except DecodeError:
        return
    assert isinstance(decoded, Event)
    assert decoded.native == payload["event_type"]
