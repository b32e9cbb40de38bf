"""The Antigravity driver: the shared contract on payloads shaped after live agy 1.3.1
captures, and what is particular to agy: a PreToolUse that fails closed, strict protojson
replies, no event name in the payload, and a project named by ``workspacePaths``."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import REPLIES, TEXT, examples

from hookbus import Reply
from hookbus.bus.errors import DecodeError
from hookbus.bus.events import AfterEdit, AfterTool, BeforeTool, Other, PromptSubmit, SessionStart
from hookbus.bus.output import HookOutput
from hookbus.hosts.antigravity import driver as antigravity
from hookbus.testing import run_cli
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "antigravity"
ASK = b'{"decision":"ask"}\n'
EMPTY = b"{}\n"

#: Each event's result message as protojson names it (exa.hooks_pb, the 1.1.20 and 1.0.7
#: descriptors: htsave, academicOps): any other field rejects the whole reply.
RESULT_FIELDS: dict[str, set[str]] = {
    "PreToolUse": {"decision", "reason", "overwrite", "permissionOverrides", "allowTool",
                   "denyReason"},
    "PostToolUse": set(),
    "PreInvocation": {"injectSteps"},
    "PostInvocation": {"injectSteps", "terminationBehavior"},
    "Stop": {"decision", "reason"},
}  # fmt: skip
#: ``HookInjectedStep``'s oneof.
STEP_FIELDS = {"toolCall", "userMessage", "ephemeralMessage", "systemMessage"}
PRE_TOOL_DECISIONS = {"allow", "deny", "ask", "force_ask"}


def out(data: dict[str, Any]) -> bytes:
    return msgspec.json.encode(data) + b"\n"


def validate_reply(native: str | None, output: HookOutput) -> None:
    """What agy accepts: exit 0, nothing on stderr, one JSON object of the event's result
    message fields, typed as protojson reads them; PreToolUse always with a decision (one
    without denies the tool)."""
    assert (output.exit_code, output.stderr) == (0, b"")
    assert output.stdout.endswith(b"\n")
    sent = json.loads(output.stdout)
    assert isinstance(sent, dict)
    allowed = RESULT_FIELDS.get(native or "", set())
    assert set(sent) <= allowed, (native, sent)
    for key in ("decision", "reason"):
        assert isinstance(sent.get(key, ""), str)
    if native == "PreToolUse":
        assert sent["decision"] in PRE_TOOL_DECISIONS
    for step in sent.get("injectSteps", []):
        [(kind, text)] = step.items()
        assert kind in STEP_FIELDS and isinstance(text, str)


class TestAntigravityContract(DriverContract):
    """The shared contract, on payloads shaped after live agy 1.3.1 captures."""

    host = "antigravity"
    golden_dir = GOLDEN
    before_tool_golden = "PreToolUse.run_command"
    refusals: ClassVar[dict[str, HookOutput]] = {
        "PreToolUse": HookOutput(out({"decision": "deny", "reason": "R"})),
        # Nothing to refuse there: the refusal is the no-opinion, never a decision.
        "PreInvocation": HookOutput(EMPTY),
        "PostToolUse": HookOutput(EMPTY),
        "PostInvocation": HookOutput(EMPTY),
        "Stop": HookOutput(EMPTY),
    }
    reply_cases = (
        ReplyCase(id="pre-tool-no-opinion-is-ask", payload="PreToolUse.run_command",
                  reply=Reply(), stdout=ASK),
        ReplyCase(id="pre-tool-deny", payload="PreToolUse.run_command",
                  reply=Reply.deny("no network"),
                  stdout=out({"decision": "deny", "reason": "no network"})),
        ReplyCase(id="pre-tool-deny-without-reason-still-says-why",
                  payload="PreToolUse.run_command", reply=Reply(decision="deny", reason=" "),
                  stdout=out({"decision": "deny", "reason": "Denied by a hookbus handler."})),
        ReplyCase(id="pre-tool-allow", payload="PreToolUse.run_command", reply=Reply.allow(),
                  stdout=out({"decision": "allow"})),
        ReplyCase(id="pre-tool-ask-always-prompts", payload="PreToolUse.run_command",
                  reply=Reply.ask("sure?"), stdout=out({"decision": "force_ask", "reason": "sure?"})),
        ReplyCase(id="pre-tool-rewrite-is-not-sent", payload="PreToolUse.run_command",
                  reply=Reply.rewrite({"CommandLine": "ls"}), stdout=ASK),
        ReplyCase(id="pre-tool-halt-denies-the-tool", payload="PreToolUse.run_command",
                  reply=Reply.stop_agent("budget"),
                  stdout=out({"decision": "deny", "reason": "budget"})),
        ReplyCase(id="pre-tool-context-and-message-are-dropped", payload="PreToolUse.run_command",
                  reply=Reply(context="x", message="y"), stdout=ASK),
        ReplyCase(id="subagent-spawn-deny", payload="PreToolUse.invoke_subagent",
                  reply=Reply.deny("no subagents"),
                  stdout=out({"decision": "deny", "reason": "no subagents"})),
        ReplyCase(id="session-start-context-is-an-ephemeral-step", payload="PreInvocation.first",
                  reply=Reply.add_context("house rules"),
                  stdout=out({"injectSteps": [{"ephemeralMessage": "house rules"}]})),
        ReplyCase(id="session-start-deny-never-sends-a-decision", payload="PreInvocation.first",
                  reply=Reply.deny("no"), stdout=EMPTY),
        ReplyCase(id="later-invocation-no-opinion", payload="PreInvocation.later", reply=Reply(),
                  stdout=EMPTY),
        ReplyCase(id="post-tool-takes-nothing", payload="PostToolUse.run_command",
                  reply=Reply(decision="deny", context="c", message="m"), stdout=EMPTY),
        ReplyCase(id="post-invocation-takes-nothing", payload="PostInvocation",
                  reply=Reply.add_context("c"), stdout=EMPTY),
        ReplyCase(id="stop-keep-working-continues", payload="Stop.fully_idle",
                  reply=Reply.continue_working("tests fail"),
                  stdout=out({"decision": "continue", "reason": "tests fail"})),
        ReplyCase(id="stop-halt-wins-over-keep-working", payload="Stop.fully_idle",
                  reply=Reply(keep_working="more", halt="enough"), stdout=EMPTY),
        ReplyCase(id="stop-no-opinion", payload="Stop.fully_idle", reply=Reply(), stdout=EMPTY),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        validate_reply(native, output)


def decode(name: str) -> Any:
    path = GOLDEN / f"{name}.json"
    return antigravity.driver.decode(path.read_bytes(), path.name.split(".")[0])


# -- through the real CLI, as agy runs it ----------------------------------------------

STUCK = """
import ctypes
import hookbus

@hookbus.handler("before-tool", "session-start", timeout=1)
def stuck(event):
    # Stuck in C code holding the GIL (a ctypes.PyDLL call keeps it), so only the process
    # watchdog can end it; asleep rather than spinning, it leaves the CPU to other tests.
    while True:
        ctypes.PyDLL(None).sleep(3600)
"""


def agy(tmp_path: Path, event: str, data: bytes, config: str = "") -> tuple[HookOutput, set[str]]:
    """``hookbus run --host antigravity --event EVENT`` with ``data`` on stdin, run where
    agy runs hooks (the ``.agents/`` folder), with ``config`` as the configuration: its
    output, and the codes of the problems it logged."""
    (tmp_path / "hooks_stuck.py").write_text(STUCK)
    (tmp_path / "agy.toml").write_text(textwrap.dedent(config))
    agents = tmp_path / ".agents"
    agents.mkdir(exist_ok=True)
    env = {**os.environ, "HOOKBUS_STATE_DIR": str(tmp_path / "state"),
           "HOOKBUS_CONFIG": str(tmp_path / "agy.toml")}  # fmt: skip
    result = run_cli("antigravity", data, env=env, cwd=agents, args=["--event", event])
    assert b"Traceback" not in result.stdout + result.stderr
    log = tmp_path / "state" / "diagnostics.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    codes = {line["event"] for line in lines if line["level"] != "info"}
    return HookOutput(result.stdout, result.stderr, result.exit_code), codes


STUCK_CONFIG = """
    budget = 1.5
    python_path = ["."]
    enable = ["hooks_stuck:stuck"]
"""
CASES = {
    "no-opinion": (None, ""),
    "garbage": (b"this is not json {", ""),
    "empty": (b"", ""),
    "watchdog": (None, STUCK_CONFIG),
}
#: What each case must have logged (the watchdog: either of its two codes).
LOGGED = {"no-opinion": set(), "garbage": {"input-invalid"}, "empty": {"input-invalid"},
          "watchdog": {"watchdog-fired", "handler-timeout"}}  # fmt: skip


def check_logged(case: str, codes: set[str]) -> None:
    if case == "watchdog":
        assert codes & LOGGED[case], codes
    else:
        assert codes == LOGGED[case]


@pytest.mark.parametrize("case", list(CASES))
def test_pre_tool_use_answers_exactly_ask_on_every_path(case: str, tmp_path: Path) -> None:
    """No opinion, garbage input, no input and the watchdog's answer to a stuck handler
    are each exactly ``{"decision":"ask"}`` with exit 0 (empty output would deny)."""
    data, config = CASES[case]
    payload = data if data is not None else (GOLDEN / "PreToolUse.run_command.json").read_bytes()
    output, codes = agy(tmp_path, "PreToolUse", payload, config)
    assert output == HookOutput(ASK)
    check_logged(case, codes)


@pytest.mark.parametrize("case", list(CASES))
def test_pre_invocation_never_answers_a_decision(case: str, tmp_path: Path) -> None:
    """On PreInvocation every path answers ``{}`` (a decision there aborts the turn)."""
    data, config = CASES[case]
    payload = data if data is not None else (GOLDEN / "PreInvocation.first.json").read_bytes()
    output, codes = agy(tmp_path, "PreInvocation", payload, config)
    assert output == HookOutput(EMPTY)
    assert b"decision" not in output.stdout
    check_logged(case, codes)


def test_the_project_is_the_first_workspace_path_not_the_hooks_folder(tmp_path: Path) -> None:
    """agy runs the hook in ``.agents/``; the project's ``.hookbus.toml`` is found from
    ``workspacePaths[0]``, so its guard denies."""
    project = tmp_path / "shop-api"
    (project / ".agents").mkdir(parents=True)
    (project / "guard.py").write_text(
        textwrap.dedent("""
        import hookbus

        @hookbus.handler("before-tool", tools="shell")
        def guard(event):
            return hookbus.Reply.deny("not " + event.tool.command)
    """)
    )
    (project / ".hookbus.toml").write_text('python_path = ["."]\nenable = ["guard:guard"]\n')
    payload = json.loads((GOLDEN / "PreToolUse.run_command.json").read_text())
    payload["workspacePaths"] = [str(project)]
    env = {k: v for k, v in os.environ.items() if k != "HOOKBUS_CONFIG"}
    env |= {"HOOKBUS_STATE_DIR": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "x")}
    result = run_cli("antigravity", json.dumps(payload), env=env, cwd=project / ".agents",
                     args=["--event", "PreToolUse"])  # fmt: skip
    assert json.loads(result.stdout) == {
        "decision": "deny",
        "reason": "not npm test -- --runInBand",
    }
    assert result.exit_code == 0


# -- decode ----------------------------------------------------------------------------


def test_a_new_conversations_first_call_is_a_session_start_and_a_prompt() -> None:
    """``invocationNum`` 0 with an empty trajectory is a session-start, from which the
    turn's prompt-submit is derived."""
    event = decode("PreInvocation.first")
    assert isinstance(event, SessionStart) and event.source == "startup"
    assert [e.kind for e in antigravity.driver.derive(event)] == ["prompt-submit"]


def test_a_later_turns_first_call_is_a_prompt_and_other_calls_are_other() -> None:
    """A later turn's first model call is its prompt-submit; later calls are ``other``."""
    assert isinstance(decode("PreInvocation.next-turn"), PromptSubmit)
    assert isinstance(decode("PreInvocation.later"), Other)
    assert antigravity.driver.natives("prompt-submit") == ("PreInvocation",)


def test_a_subagent_spawn_names_each_child_asked_for() -> None:
    """``invoke_subagent`` is an agent spawn with one Spawn per ``Subagents`` item; an
    ``inherit`` model is no model asked for."""
    event = decode("PreToolUse.invoke_subagent")
    assert isinstance(event, BeforeTool) and event.tool.kind == "agent"
    [spawn] = event.tool.spawns
    assert (spawn.agent_type, spawn.description, spawn.model) == (
        "research", "Codebase Researcher", None)  # fmt: skip
    assert spawn.prompt and spawn.prompt.startswith("Find every caller")


def test_a_subagents_events_are_its_own_conversation_of_unknown_agent() -> None:
    """A child's hooks carry its own conversationId and no parent: no event is marked
    main, so a main-only handler never mistakes a child's call for the parent's."""
    parent, child = decode("PreToolUse.run_command"), decode("subagent/PreToolUse.grep_search")
    assert parent.session_id != child.session_id
    assert {parent.agent.role, child.agent.role, decode("subagent/Stop").agent.role} == {"unknown"}
    assert child.tool.kind == "read" and child.tool.paths == ("/home/dev/shop-api/src",)


def test_a_post_tool_use_without_its_tool_call_still_decodes() -> None:
    """One live subagent PostToolUse had no ``toolCall``: a nameless tool of kind other."""
    event = decode("subagent/PostToolUse.no-tool-call")
    assert isinstance(event, AfterTool) and (event.tool.name, event.tool.kind) == ("", "other")


def test_an_edit_result_derives_an_after_edit_and_a_failure_does_not() -> None:
    """A ``write_to_file`` result is an after-edit of its ``TargetFile``; a failed tool
    (``error`` set) is not ok."""
    event = decode("PostToolUse.write_to_file")
    [edit] = antigravity.driver.derive(event)
    assert isinstance(edit, AfterEdit)
    assert [c.path for c in edit.changes] == ["/home/dev/shop-api/src/discount.ts"]
    assert decode("PostToolUse.run_command.error").error == "exit status 1"


def test_an_mcp_tool_names_its_server() -> None:
    """``mcp_<server>_<tool>``: kind mcp, the server the first part."""
    tool = decode("PreToolUse.mcp").tool
    assert (tool.kind, tool.mcp_server) == ("mcp", "github")
    assert antigravity.driver.mcp_tool_prefix("git-hub") == "mcp_git_hub_"


def test_without_an_event_name_nothing_decodes() -> None:
    """The payload never names its event: without ``--event`` it is a DecodeError."""
    with pytest.raises(DecodeError, match="--event"):
        antigravity.driver.decode((GOLDEN / "Stop.fully_idle.json").read_bytes())


# -- properties --------------------------------------------------------------------------


@settings(max_examples=examples(300), deadline=None)
@given(native=st.sampled_from(antigravity.ALL_EVENTS), reply=REPLIES)
def test_every_reply_is_one_agy_accepts(native: str, reply: Reply) -> None:
    """Whatever a merged reply holds, the output has only the event's result fields; a
    PreToolUse always carries a decision, and a deny or halt there always denies."""
    encoded = antigravity.driver.encode(native, reply)
    validate_reply(native, encoded.output)
    sent = json.loads(encoded.output.stdout)
    if native == "PreToolUse" and (reply.decision == "deny" or reply.halt is not None):
        assert sent["decision"] == "deny" and sent["reason"].strip()
    if native != "PreToolUse":
        assert sent.get("decision") in (None, "continue")


FIELDS = st.sampled_from([
    "conversationId", "workspacePaths", "transcriptPath", "modelName", "stepIdx", "toolCall",
    "error", "invocationNum", "initialNumSteps", "fullyIdle", "finalModelOutput",
])  # fmt: skip
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(TEXT, children, max_size=3),
    max_leaves=10,
)


@settings(max_examples=examples(300), deadline=None)
@given(native=st.sampled_from(antigravity.ALL_EVENTS),
       overrides=st.dictionaries(FIELDS, VALUES, max_size=4))  # fmt: skip
def test_any_field_values_decode_or_raise_decode_error(
    native: str, overrides: dict[str, object]
) -> None:
    """Wrong types anywhere give a DecodeError (answered with the no-opinion), never a
    crash; what decodes is the event asked for."""
    base = json.loads((GOLDEN / "PreToolUse.run_command.json").read_text())
    try:
        event = antigravity.driver.decode(json.dumps({**base, **overrides}).encode(), native)
    except DecodeError:
        return
    assert event.native == native and event.host == "antigravity"
