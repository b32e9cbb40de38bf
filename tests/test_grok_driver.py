"""The Grok Build driver: the shared contract on payloads built from Grok's source
(``xai-org/grok-build@19d42e3``), its two reply vocabularies, and what Grok gives a
hook that nobody else does."""

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
from hookbus.bus.events import AfterTool, BeforeTool, Event, SessionEnd, SubagentStart
from hookbus.bus.output import HookOutput
from hookbus.hosts import HOSTS
from hookbus.hosts.grok import driver as grok
from hookbus.runtime.peek import dialect
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "grok"

#: The keys each gate reads (runner/mod.rs ``GateHookJson``, ``StopHookJson``); every
#: other event's stdout is ignored, so nothing is ever sent there.
READS: dict[str, set[str]] = {
    "pre_tool_use": {"decision", "reason", "hookSpecificOutput"},
    "stop": {"decision", "reason", "continue", "stopReason", "hookSpecificOutput"},
    "subagent_stop": {"decision", "reason", "continue", "stopReason", "hookSpecificOutput"},
}
#: The decision words each gate knows; any other is a failure, which fails open.
WORDS = {"pre_tool_use": {"deny", "allow"}, "stop": {"block"}, "subagent_stop": {"block"}}


def validate_reply(native: str, output: HookOutput) -> None:
    """What Grok acts on: exit 0, stdout empty or one object of the keys this gate reads,
    with a decision word it knows (an unknown one would fail open)."""
    assert (output.exit_code, output.stderr) == (0, b"")
    if not output.stdout:
        return
    sent = json.loads(output.stdout)
    assert isinstance(sent, dict)
    assert set(sent) <= READS.get(native, set()), (native, sent)
    if "decision" in sent:
        assert sent["decision"] in WORDS[native], (native, sent)
    specific = sent.get("hookSpecificOutput")
    if specific is not None:
        wanted = {"updatedInput"} if native == "pre_tool_use" else {"additionalContext"}
        assert set(specific) == {"hookEventName", *wanted}, (native, sent)


def flat(**fields: Any) -> bytes:
    return msgspec.json.encode(fields) + b"\n"


SHELL = "pre_tool_use.run_terminal_command"


class TestGrokContract(DriverContract):
    """The shared contract, on payloads built from Grok's envelope types."""

    host = "grok"
    golden_dir = GOLDEN
    before_tool_golden = SHELL
    refusals: ClassVar[dict[str, HookOutput]] = {
        "pre_tool_use": HookOutput(flat(decision="deny", reason="R")),
        # Nothing to refuse: the refusal is the no-opinion, exit 0 with nothing printed.
        "stop": HookOutput(),
        "user_prompt_submit": HookOutput(),
        "session_end": HookOutput(),
    }
    reply_cases = (
        ReplyCase(id="pre-tool-deny", payload=SHELL, reply=Reply.deny("no"),
                  stdout=flat(decision="deny", reason="no")),
        ReplyCase(id="pre-tool-deny-without-reason-still-says-why", payload=SHELL,
                  reply=Reply(decision="deny", reason=" "),
                  stdout=flat(decision="deny", reason="Denied by a hookbus handler.")),
        ReplyCase(id="pre-tool-ask-is-a-deny", payload=SHELL, reply=Reply.ask("sure?"),
                  stdout=flat(decision="deny", reason="sure?")),
        ReplyCase(id="pre-tool-allow", payload=SHELL, reply=Reply.allow("fine"),
                  stdout=flat(decision="allow")),
        ReplyCase(id="pre-tool-rewrite", payload=SHELL, reply=Reply.rewrite({"command": "npm t"}),
                  stdout=flat(hookSpecificOutput={"hookEventName": "PreToolUse",
                                                  "updatedInput": {"command": "npm t"}})),
        ReplyCase(id="pre-tool-allow-and-rewrite", payload="pre_tool_use.task",
                  reply=Reply(decision="allow", updated_input={"model": "grok-code-fast"}),
                  stdout=flat(decision="allow", hookSpecificOutput={
                      "hookEventName": "PreToolUse", "updatedInput": {"model": "grok-code-fast"}})),
        ReplyCase(id="pre-tool-deny-drops-the-rewrite", payload=SHELL,
                  reply=Reply(decision="deny", reason="no", updated_input={"command": "ls"}),
                  stdout=flat(decision="deny", reason="no")),
        ReplyCase(id="pre-tool-context-is-dropped", payload=SHELL,
                  reply=Reply.add_context("slow"), stdout=b""),
        ReplyCase(id="stop-keep-working", payload="stop",
                  reply=Reply.continue_working("run the tests"),
                  stdout=flat(decision="block", reason="run the tests")),
        ReplyCase(id="stop-context-is-feedback", payload="stop", reply=Reply.add_context("lint"),
                  stdout=flat(hookSpecificOutput={"hookEventName": "Stop",
                                                  "additionalContext": "lint"})),
        ReplyCase(id="stop-halt-ends-the-turn", payload="stop", reply=Reply.stop_agent("budget"),
                  stdout=flat(**{"continue": False, "stopReason": "budget"})),
        ReplyCase(id="stop-deny-is-not-a-stop-word", payload="stop", reply=Reply.deny("no"),
                  stdout=b""),
        ReplyCase(id="subagent-stop-keep-working", payload="subagent_stop",
                  reply=Reply.continue_working("more"), stdout=flat(decision="block", reason="more")),
        ReplyCase(id="prompt-deny-cannot-block", payload="user_prompt_submit",
                  reply=Reply.deny("secret"), stdout=b""),
        ReplyCase(id="session-start-context-is-dropped", payload="session_start",
                  reply=Reply.add_context("rules"), stdout=b""),
        ReplyCase(id="no-opinion", payload=SHELL, reply=Reply(), stdout=b""),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        validate_reply(native or "pre_tool_use", output)


def decode(name: str) -> Any:
    return grok.driver.decode((GOLDEN / f"{name}.json").read_bytes())


REPLIES = every_reply_part()


@pytest.mark.parametrize("native", grok.ALL_EVENTS)
@pytest.mark.parametrize("reply", REPLIES, ids=lambda r: ",".join(msgspec.structs.asdict(r)))
def test_every_reply_to_every_event_is_one_grok_reads(native: str, reply: Reply) -> None:
    """Whatever a merged reply holds, each event's stdout holds only what that event
    reads, in words it knows; what it could not take is reported as dropped (an allow,
    which every event does anyway, is no loss)."""
    encoded = grok.driver.encode(native, reply)
    validate_reply(native, encoded.output)
    if not encoded.output.stdout and reply != Reply.allow():
        assert encoded.dropped  # an allow is what every event does anyway
    caps = grok.driver.capabilities(native)
    if reply.context and not caps.context:
        assert any(d.field == "context" for d in encoded.dropped)


def test_an_ask_is_sent_as_a_deny_and_says_so() -> None:
    """Grok has no ask and fails open on an unknown decision word: an ask is a deny, with
    the degradation reported."""
    encoded = grok.driver.encode("pre_tool_use", Reply.ask("check with a human"))
    assert json.loads(encoded.output.stdout) == {"decision": "deny",
                                                 "reason": "check with a human"}  # fmt: skip
    assert [(d.field, d.why) for d in encoded.dropped] == [
        ("decision", "pre_tool_use: Grok has no ask; denied instead")
    ]


def test_the_guides_own_sample_decodes() -> None:
    """The user guide's sample, without toolUseId and toolInputTruncated, is a shell call."""
    event = decode("pre_tool_use.run_terminal_command.doc")
    assert isinstance(event, BeforeTool)
    assert (event.tool.kind, event.tool.command) == ("shell", "npm test")
    assert event.timestamp == 1776168000.0  # 2026-04-14T12:00:00Z


def test_tools_paths_and_subagents() -> None:
    """File tools name their file (``file_path``, ``target_file``: relative ones are the
    workspace's), MCP tools their server, subagents their type."""
    edit = decode("pre_tool_use.search_replace")
    assert (edit.tool.kind, edit.tool.paths) == ("edit", ("/home/dev/shop-api/src/app.ts",))
    read = decode("pre_tool_use.read_file")
    assert (read.tool.kind, read.tool.paths) == ("read", ("/home/dev/shop-api/README.md",))
    mcp = decode("pre_tool_use.mcp")
    assert (mcp.tool.kind, mcp.tool.mcp_server) == ("mcp", "linear")
    spawn = decode("pre_tool_use.task")
    assert spawn.tool.kind == "agent"
    assert spawn.tool.spawns[0].agent_type == "explore"
    inner = decode("pre_tool_use.run_terminal_command.in-subagent")
    assert (inner.agent.role, inner.agent.type) == ("subagent", "explore")
    assert decode(SHELL).agent.role == "main"
    start = decode("subagent_start")
    assert isinstance(start, SubagentStart)
    assert (start.agent.role, start.child.type) == ("main", "explore")
    end = decode("session_end.subagent")
    assert isinstance(end, SessionEnd)
    assert end.agent.type == "explore"


def test_results_failures_and_a_truncated_input() -> None:
    """toolResult is the output (not Claude's tool_response); a failure is an error; an
    input cut to a string reaches handlers as no input at all, never as a crash."""
    ok = decode("post_tool_use.run_terminal_command")
    assert isinstance(ok, AfterTool)
    assert ok.error is None
    assert ok.output is not None and ok.output.startswith("PASS")
    failed = decode("post_tool_use_failure.run_terminal_command")
    assert failed.error is not None and failed.error.startswith("exit code 1")
    (edit,) = grok.driver.derive(decode("post_tool_use.search_replace"))
    assert [c.path for c in edit.changes] == ["/home/dev/shop-api/src/app.ts"]
    cut = decode("pre_tool_use.run_terminal_command.truncated")
    assert (cut.tool.kind, cut.tool.input, cut.tool.command) == ("shell", {}, None)


def test_no_opinion_is_empty_and_timeouts_are_groks() -> None:
    """Every event's no-opinion is exit 0 with nothing printed; a hook gets 5 s, a stop
    gate 600 s (config.rs), configured in whole seconds."""
    for native in grok.ALL_EVENTS:
        assert grok.driver.no_opinion(native) == HookOutput()
    assert grok.driver.timeout("pre_tool_use") == 5.0
    assert grok.driver.timeout("stop") == grok.driver.timeout("subagent_stop") == 600.0
    assert HOSTS["grok"].timeout_value(9.2) == 10


def test_a_tool_event_without_a_tool_name_is_a_decode_error() -> None:
    """A pre_tool_use that names no tool cannot be routed to a guard: a DecodeError."""
    with pytest.raises(DecodeError):
        grok.driver.decode(b'{"hookEventName":"pre_tool_use","sessionId":"s","cwd":"/p"}')


FIELDS = st.sampled_from(["hookEventName", "sessionId", "cwd", "workspaceRoot", "timestamp",
                          "toolName", "toolInput", "toolResult", "subagentType", "subagentId",
                          "stopHookActive", "error", "prompt", "durationMs", "reason"])  # fmt: skip


@settings(max_examples=examples(300), deadline=None)
@given(
    event=st.sampled_from([*grok.ALL_EVENTS, "subagent_end", "PreToolUse"]),
    overrides=st.dictionaries(FIELDS, json_values(), max_size=4),
)
def test_any_field_values_decode_or_raise_decode_error(
    event: str, overrides: dict[str, object]
) -> None:
    """Wrong types anywhere give a DecodeError (answered as no opinion), never a crash."""
    base = {"hookEventName": event, "sessionId": "s", "cwd": "/p", "workspaceRoot": "/p",
            "toolName": "run_terminal_command", "toolInput": {"command": "ls"}}  # fmt: skip
    payload = json.dumps({**base, **overrides})
    try:
        decoded = grok.driver.decode(payload.encode())
    except DecodeError:
        return
    assert isinstance(decoded, Event)
    assert decoded.native == json.loads(payload)["hookEventName"]


def test_a_grok_payload_reaching_a_claude_command_is_groks() -> None:
    """Grok's envelope (what its .claude/settings.json hooks get) is told from Claude's by
    hookEventName, which Claude never sends, before Copilot's timestamp and sessionId
    (Grok's carries those too); Claude's own stays Claude's."""
    claude = HOSTS["claude"]
    payload = json.loads((GOLDEN / f"{SHELL}.json").read_text())
    assert dialect(claude, payload) is HOSTS["grok"]
    own = json.loads((Path(__file__).parent / "golden/claude/PreToolUse.Bash.json").read_text())
    assert dialect(claude, own) is claude
