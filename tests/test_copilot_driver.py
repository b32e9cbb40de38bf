"""The Copilot CLI driver: the shared contract on payloads the real Copilot 1.0.102 sent,
both of its dialects, and a Claude install that Copilot runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import examples

from hookbus import Reply
from hookbus.bus.errors import DecodeError
from hookbus.bus.events import AfterTool, BeforeTool, Event, PromptSubmit, Stop, SubagentStop
from hookbus.bus.host import Encoded
from hookbus.bus.output import HookOutput
from hookbus.hosts import HOSTS
from hookbus.hosts.claude import driver as claude
from hookbus.hosts.copilot import driver as copilot
from hookbus.runtime.peek import dialect
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "copilot"

#: The keys each event reads (the hooks reference and the runtime's schema, 1.0.102).
READS: dict[str, set[str]] = {
    "preToolUse": {"permissionDecision", "permissionDecisionReason", "modifiedArgs",
                   "additionalContext"},
    "permissionRequest": {"behavior", "message", "interrupt"},
    "agentStop": {"decision", "reason"},
    "subagentStop": {"decision", "reason"},
    "sessionStart": {"additionalContext"},
    "subagentStart": {"additionalContext"},
    "postToolUse": {"additionalContext"},
    "postToolUseFailure": {"additionalContext"},
    "userPromptSubmitted": {"additionalContext", "handled", "responseContent"},
}  # fmt: skip


#: The top-level keys of a Claude reply, which a Claude-named event's reply carries too
#: (it may be Claude's own payload).
CLAUDE_KEYS = {"hookSpecificOutput", "decision", "reason", "systemMessage", "continue",
               "stopReason"}  # fmt: skip


def validate_reply(native: str, output: HookOutput) -> None:
    """What Copilot acts on: exit 0 (exit 1 blocks), and stdout empty or one object of the
    keys this event reads; Claude's keys besides only for a Claude-named event, never for
    a camelCase one."""
    assert output.exit_code == 0
    assert output.stderr == b""
    if not output.stdout:
        return
    sent = json.loads(output.stdout)
    assert isinstance(sent, dict)
    keys = set(sent) if native in copilot.ALIASES else set(sent) - CLAUDE_KEYS
    assert keys <= READS.get(copilot.camel(native), set()), (native, sent)
    if "hookSpecificOutput" in sent:
        assert sent["hookSpecificOutput"]["hookEventName"] == native


def both(claude_part: dict[str, Any], **fields: Any) -> bytes:
    """A reply to a Claude-named event: Claude's, then Copilot's flat keys."""
    return msgspec.json.encode({**claude_part, **fields}) + b"\n"


def nested(event: str, **fields: Any) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, **fields}}


def flat(**fields: Any) -> bytes:
    return msgspec.json.encode(fields) + b"\n"


class TestCopilotContract(DriverContract):
    """The shared contract, on payloads captured from the real Copilot 1.0.102
    (``golden/copilot/real``) and on reference-built ones."""

    host = "copilot"
    golden_dir = GOLDEN
    before_tool_golden = "real/preToolUse.bash"
    refusals: ClassVar[dict[str, HookOutput]] = {
        "preToolUse": HookOutput(flat(permissionDecision="deny", permissionDecisionReason="R")),
        # The reply seen to block in both Copilot 1.0.102 and Claude Code 2.1.332.
        "PreToolUse": HookOutput(
            both(
                nested("PreToolUse", permissionDecision="deny", permissionDecisionReason="R"),
                permissionDecision="deny",
                permissionDecisionReason="R",
            )
        ),
        # Both block the prompt on decision "block" (Copilot: policy_blocked).
        "UserPromptSubmit": HookOutput(
            both({"decision": "block", "reason": "R"}, handled=True, responseContent="R")
        ),
        "permissionRequest": HookOutput(flat(behavior="deny", message="R")),
        "userPromptSubmitted": HookOutput(flat(handled=True, responseContent="R")),
        # Nothing to refuse: the refusal is the no-opinion, empty stdout, exit 0.
        "postToolUse": HookOutput(),
        "agentStop": HookOutput(),
        "sessionEnd": HookOutput(),
    }
    reply_cases = (
        ReplyCase(id="pre-tool-deny", payload="real/preToolUse.bash", reply=Reply.deny("no"),
                  stdout=flat(permissionDecision="deny", permissionDecisionReason="no")),
        ReplyCase(id="pre-tool-deny-without-reason-still-says-why", payload="real/preToolUse.bash",
                  reply=Reply(decision="deny", reason=" "),
                  stdout=flat(permissionDecision="deny",
                              permissionDecisionReason="Denied by a hookbus handler.")),
        ReplyCase(id="pascal-pre-tool-deny-is-claudes-and-copilots", payload="PreToolUse.bash.pascal",
                  reply=Reply.deny("no"),
                  stdout=both(nested("PreToolUse", permissionDecision="deny",
                                     permissionDecisionReason="no"),
                              permissionDecision="deny", permissionDecisionReason="no")),
        ReplyCase(id="pascal-prompt-deny-blocks-in-both", payload="UserPromptSubmit.pascal",
                  reply=Reply.deny("secret"),
                  stdout=both({"decision": "block", "reason": "secret"}, handled=True,
                              responseContent="secret")),
        ReplyCase(id="pascal-context-is-in-both-places", payload="PreToolUse.bash.pascal",
                  reply=Reply.add_context("slow"),
                  stdout=both(nested("PreToolUse", additionalContext="slow"),
                              additionalContext="slow")),
        ReplyCase(id="pre-tool-allow", payload="real/preToolUse.bash", reply=Reply.allow(),
                  stdout=flat(permissionDecision="allow")),
        ReplyCase(id="pre-tool-ask", payload="real/preToolUse.bash", reply=Reply.ask("sure?"),
                  stdout=flat(permissionDecision="ask", permissionDecisionReason="sure?")),
        ReplyCase(id="pre-tool-rewrite", payload="real/preToolUse.bash",
                  reply=Reply.rewrite({"command": "npm test"}),
                  stdout=flat(modifiedArgs={"command": "npm test"})),
        ReplyCase(id="pre-tool-context", payload="real/preToolUse.bash",
                  reply=Reply.add_context("slow"), stdout=flat(additionalContext="slow")),
        ReplyCase(id="pre-tool-message-is-dropped", payload="real/preToolUse.bash",
                  reply=Reply.tell_user("hi"), stdout=b""),
        ReplyCase(id="permission-deny-halts", payload="real/permissionRequest.bash",
                  reply=Reply(decision="deny", reason="no", halt="stop"),
                  stdout=flat(behavior="deny", message="no", interrupt=True)),
        ReplyCase(id="permission-allow", payload="real/permissionRequest.bash",
                  reply=Reply.allow(), stdout=flat(behavior="allow")),
        ReplyCase(id="post-tool-context", payload="real/postToolUse.bash",
                  reply=Reply.add_context("note"), stdout=flat(additionalContext="note")),
        ReplyCase(id="post-tool-deny-is-dropped", payload="real/postToolUse.bash",
                  reply=Reply.deny("late"), stdout=b""),
        ReplyCase(id="stop-keep-working", payload="real/agentStop",
                  reply=Reply.continue_working("test first"),
                  stdout=flat(decision="block", reason="test first")),
        ReplyCase(id="pascal-stop-keep-working", payload="Stop.pascal",
                  reply=Reply.continue_working("again"), stdout=flat(decision="block", reason="again")),
        ReplyCase(id="subagent-stop-keep-working", payload="real/subagentStop",
                  reply=Reply.continue_working("more"), stdout=flat(decision="block", reason="more")),
        ReplyCase(id="prompt-deny-answers-it", payload="real/userPromptSubmitted",
                  reply=Reply.deny("secret"), stdout=flat(handled=True, responseContent="secret")),
        ReplyCase(id="session-start-context", payload="real/sessionStart",
                  reply=Reply.add_context("rules"), stdout=flat(additionalContext="rules")),
        ReplyCase(id="session-end-says-nothing", payload="real/sessionEnd",
                  reply=Reply(context="x", message="y", halt="z"), stdout=b""),
        ReplyCase(id="no-opinion", payload="real/preToolUse.bash", reply=Reply(), stdout=b""),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        validate_reply(native or "preToolUse", output)


def decode(name: str, native: str | None = None) -> Any:
    return copilot.driver.decode((GOLDEN / f"{name}.json").read_bytes(),
                                 native or name.rsplit("/", 1)[-1].split(".", 1)[0])  # fmt: skip


REPLIES = [
    Reply.deny("R"), Reply.allow(), Reply.ask("R"), Reply.rewrite({"command": "ls"}),
    Reply.add_context("c"), Reply.tell_user("m"), Reply.continue_working("k"),
    Reply.stop_agent("h"), Reply(decision="deny", updated_input={"command": "ls"}, context="c",
                                 message="m", keep_working="k", halt="h"),
]  # fmt: skip


@pytest.mark.parametrize("native", [*copilot.ALL_EVENTS, *copilot.CAMEL])
@pytest.mark.parametrize("reply", REPLIES, ids=lambda r: ",".join(msgspec.structs.asdict(r)))
def test_every_reply_to_every_event_is_flat_and_read_by_it(native: str, reply: Reply) -> None:
    """Whatever a merged reply holds, each event's stdout holds only keys it reads, in
    either spelling of the event (and Claude's, for a Claude-named one); what a camelCase
    event could not take is reported as dropped."""
    encoded = copilot.driver.encode(native, reply)
    validate_reply(native, encoded.output)
    if not encoded.output.stdout and native in copilot.ALIASES:
        assert encoded.dropped


@pytest.mark.parametrize("native", list(copilot.CAMEL))
@pytest.mark.parametrize("reply", REPLIES, ids=lambda r: ",".join(msgspec.structs.asdict(r)))
def test_a_claude_named_event_gets_claudes_reply_with_copilots_over_it(
    native: str, reply: Reply
) -> None:
    """A Claude-named event may be Claude's own payload: its reply is Claude's, with
    Copilot's flat keys over it, and a part is reported dropped only when neither carries
    it."""

    def sent(encoded: Encoded) -> dict[str, Any]:
        return json.loads(encoded.output.stdout) if encoded.output.stdout else {}

    ours, theirs = copilot.driver.encode(native, reply), claude.driver.encode(native, reply)
    flat_only = copilot.driver.encode(copilot.camel(native), reply)
    assert sent(ours) == {**sent(theirs), **sent(flat_only)}
    unsent = {d.field for d in theirs.dropped} & {d.field for d in flat_only.dropped}
    assert {d.field for d in ours.dropped} == unsent


def test_both_dialects_decode_to_the_same_event() -> None:
    """A camelCase and a PascalCase payload of one call decode alike (the names aside)."""
    camel, pascal = decode("real/preToolUse.bash"), decode("PreToolUse.bash.pascal")
    assert isinstance(camel, BeforeTool)
    assert isinstance(pascal, BeforeTool)
    assert camel.tool == pascal.tool
    assert camel.tool.command == "echo hi | tee ran_proof.txt"
    assert camel.timestamp == pascal.timestamp == 1796105894.282


def test_tool_args_as_a_json_string_are_parsed() -> None:
    """Older builds send ``toolArgs`` JSON-encoded in a string: it is read as an object."""
    event = decode("preToolUse.edit.args-string")
    assert isinstance(event, BeforeTool)
    assert event.tool.kind == "edit"
    assert event.tool.paths == ("/tmp/e2e/proj/README.md",)


def test_the_event_name_comes_from_the_event_argument() -> None:
    """A camelCase payload names no event: without ``--event`` it is a DecodeError."""
    data = (GOLDEN / "real/preToolUse.bash.json").read_bytes()
    with pytest.raises(DecodeError):
        copilot.driver.decode(data)
    assert copilot.driver.decode(data, "preToolUse").native == "preToolUse"


def test_subagent_identity_and_results() -> None:
    """A subagent's own calls name it; its stop carries its answer; failures are errors."""
    inner = decode("real/preToolUse.bash.in-subagent")
    assert inner.agent.role == "subagent"
    assert inner.agent.parent_id == "44f2d232-9035-46d7-bb70-17f36beb9d2f"
    stop = decode("real/subagentStop")
    assert isinstance(stop, SubagentStop)
    assert stop.final_text == "Subagent finished: printed from-subagent."
    failed = decode("postToolUseFailure.bash")
    assert isinstance(failed, AfterTool)
    assert failed.error == "exit code 1"
    ok = decode("real/postToolUse.bash")
    assert isinstance(ok, AfterTool)
    assert ok.error is None
    assert ok.output is not None and ok.output.startswith("hi")
    assert isinstance(decode("real/agentStop"), Stop)
    assert isinstance(decode("real/userPromptSubmitted"), PromptSubmit)


def test_no_opinion_is_empty_and_timeouts_are_copilots() -> None:
    """Every event's no-opinion is exit 0 with nothing printed (exit 1 would block), and
    a hook gets Copilot's 30 s, configured in whole seconds."""
    for native in copilot.ALL_EVENTS:
        assert copilot.driver.no_opinion(native) == HookOutput()
        assert copilot.driver.timeout(native) == 30.0
    assert HOSTS["copilot"].timeout_value(29.2) == 30


FIELDS = st.sampled_from(["sessionId", "cwd", "timestamp", "toolName", "toolArgs", "toolResult",
                          "agentId", "stop_hook_active", "hook_event_name", "session_id",
                          "tool_input", "error", "prompt"])  # fmt: skip
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
BASE = {"sessionId": "s", "session_id": "s", "cwd": "/p", "toolName": "bash",
        "tool_name": "bash", "toolArgs": {"command": "ls"}}  # fmt: skip


@settings(max_examples=examples(300), deadline=None)
@given(
    event=st.sampled_from([*copilot.ALL_EVENTS, *copilot.CAMEL, "notification"]),
    overrides=st.dictionaries(FIELDS, json_values, max_size=4),
)
def test_any_field_values_decode_or_raise_decode_error(
    event: str, overrides: dict[str, object]
) -> None:
    """Wrong types anywhere, in either dialect, give a DecodeError (answered as no
    opinion), never a crash: in Copilot a crashing hook would block the tool."""
    payload = json.dumps({**BASE, **overrides})
    try:
        decoded = copilot.driver.decode(payload.encode(), event)
    except DecodeError:
        return
    assert isinstance(decoded, Event)
    named = overrides.get("hook_event_name")
    assert decoded.native == (named if isinstance(named, str) and named else event)


def test_a_copilot_payload_reaching_a_claude_command_is_copilots() -> None:
    """Copilot's PascalCase payload (what ``.claude/settings.json`` hooks get) is told
    from Claude's by the keys Claude never sends; Claude's own stays Claude's."""
    claude = HOSTS["claude"]
    pascal = json.loads((GOLDEN / "real/PreToolUse.Bash.claude-settings.json").read_text())
    assert dialect(claude, pascal) is HOSTS["copilot"]
    own = json.loads((Path(__file__).parent / "golden/claude/PreToolUse.Bash.json").read_text())
    assert dialect(claude, own) is claude


DENY_HANDLER = """
import hookbus

@hookbus.handler("before-tool", tools="shell")
def no(event):
    return hookbus.Reply.deny(f"no from {event.host}")
"""


def test_a_claude_install_run_by_copilot_denies_in_both_hosts_forms(tmp_path: Path) -> None:
    """``hookbus run --host claude`` given Copilot's PascalCase payload (or Claude's own
    with a ``timestamp``: the two cannot be told apart) denies with the flat
    ``permissionDecision`` Copilot acts on and Claude's nested one."""
    (tmp_path / "guards_no.py").write_text(DENY_HANDLER)
    config = tmp_path / "no.toml"
    config.write_text('python_path = ["."]\nenable = ["guards_no:no"]\n')
    # What a real 1.0.102 run gave a .claude/settings.json hook: Claude's tool name, too.
    payload = json.loads((GOLDEN / "real/PreToolUse.Bash.claude-settings.json").read_text())
    payload["cwd"] = str(tmp_path)
    env = {**os.environ, "HOOKBUS_CONFIG": str(config), "HOOKBUS_STATE_DIR": str(tmp_path / "st")}
    done = subprocess.run([sys.executable, "-m", "hookbus", "run", "--host", "claude"],
                          input=json.dumps(payload).encode(), capture_output=True, cwd=tmp_path,
                          env=env, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done
    decision = {"permissionDecision": "deny", "permissionDecisionReason": "no from copilot"}
    assert json.loads(done.stdout) == {
        **decision,
        "hookSpecificOutput": {"hookEventName": "PreToolUse", **decision},
    }


def test_every_claude_tool_has_its_claude_kind() -> None:
    """A Claude payload with a ``timestamp`` is decoded by this driver: each of Claude's
    tools (``PowerShell`` ...) keeps its kind, so a guard on that kind still sees it."""
    assert {name: copilot.TOOLS.get(name) for name in claude.TOOLS} == claude.TOOLS
