"""The OpenCode and Kilo driver: the shared contract on payloads the real OpenCode 1.18.33
and Kilo 7.7.7 sent through hookbus's shim (``golden/*/real``) and on contract ones (v2,
and the events a headless run does not fire), and what is particular to them: a deny is a
block the model reads, a rewrite is the whole new input, a subagent is its own session."""

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
from hookbus.bus.events import AfterEdit, AfterTool, BeforeTool, Event, SubagentStart
from hookbus.bus.output import HookOutput
from hookbus.hosts.kilo import driver as kilo
from hookbus.hosts.opencode import driver as opencode
from hookbus.testing.contract import SAMPLE_CWD, SAMPLE_SESSION, DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden"
REPLY_KEYS = {"block", "args", "context"}
BEFORE = "real/tool.execute.before.bash"
AFTER = "real/tool.execute.after.bash"


def validate_reply(output: HookOutput) -> None:
    """What the shim reads: exit 0, one JSON object of its reply keys, typed as it
    applies them."""
    assert (output.exit_code, output.stderr) == (0, b"")
    sent = json.loads(output.stdout)
    assert isinstance(sent, dict) and set(sent) <= REPLY_KEYS, sent
    assert isinstance(sent.get("block", ""), str)
    assert isinstance(sent.get("context", ""), str)
    assert isinstance(sent.get("args", {}), dict)


REPLY_CASES = (
    ReplyCase(id="before-deny-blocks", payload=BEFORE, reply=Reply.deny("no"),
              stdout=b'{"block":"no"}\n'),
    ReplyCase(id="before-deny-without-reason-still-says-why", payload=BEFORE,
              reply=Reply(decision="deny", reason=" "),
              stdout=b'{"block":"Denied by a hookbus handler."}\n'),
    ReplyCase(id="before-ask-blocks", payload=BEFORE, reply=Reply.ask("sure?"),
              stdout=b'{"block":"sure?"}\n'),
    ReplyCase(id="before-allow-is-no-opinion", payload=BEFORE, reply=Reply.allow("fine"),
              stdout=b"{}\n"),
    ReplyCase(id="before-rewrite", payload=BEFORE, reply=Reply.rewrite({"command": "ls"}),
              stdout=b'{"args":{"command":"ls"}}\n'),
    ReplyCase(id="before-rewrite-lost-in-a-deny", payload=BEFORE,
              reply=Reply(decision="deny", reason="no", updated_input={"command": "ls"}),
              stdout=b'{"block":"no"}\n'),
    ReplyCase(id="before-halt-blocks", payload=BEFORE, reply=Reply.stop_agent("budget"),
              stdout=b'{"block":"budget"}\n'),
    ReplyCase(id="before-context-is-dropped", payload=BEFORE, reply=Reply.add_context("x"),
              stdout=b"{}\n"),
    ReplyCase(id="after-context", payload=AFTER, reply=Reply.add_context("slow"),
              stdout=b'{"context":"slow"}\n'),
    ReplyCase(id="after-deny-is-context", payload=AFTER, reply=Reply.deny("looks wrong"),
              stdout=b'{"context":"looks wrong"}\n'),
    ReplyCase(id="compacting-context", payload="real/experimental.session.compacting",
              reply=Reply.add_context("keep the plan"), stdout=b'{"context":"keep the plan"}\n'),
    ReplyCase(id="session-start-reads-nothing", payload="real/session.created",
              reply=Reply(decision="deny", context="x", halt="y", message="m"), stdout=b"{}\n"),
    ReplyCase(id="stop-cannot-keep-working", payload="real/session.idle",
              reply=Reply.continue_working("more"), stdout=b"{}\n"),
    ReplyCase(id="no-opinion", payload=BEFORE, reply=Reply(), stdout=b"{}\n"),
)  # fmt: skip
REFUSALS = {
    "tool.execute.before": HookOutput(b'{"block":"R"}\n'),
    "tool.execute.after": HookOutput(b'{"context":"R"}\n'),
    "session.created": HookOutput(b"{}\n"),
    "chat.message": HookOutput(b"{}\n"),
}


class TestOpenCodeContract(DriverContract):
    """The shared contract, on payloads captured from the real OpenCode 1.18.33 through
    the shim (``golden/opencode/real``) and contract ones (``golden/opencode/contract``)."""

    host = "opencode"
    golden_dir = GOLDEN / "opencode"
    before_tool_golden = BEFORE
    refusals: ClassVar[dict[str, HookOutput]] = REFUSALS
    reply_cases = REPLY_CASES
    #: file.edited names the file only: no session, no folder of its own (the shim adds
    #: the plugin's directory).
    no_session: ClassVar[frozenset[str]] = frozenset({"file.edited"})

    def validate(self, native: str | None, output: HookOutput) -> None:
        validate_reply(output)

    def test_every_native_event_has_a_sample_that_decodes_back(self, sample_native: str) -> None:
        """As the contract's, except that file.edited carries no session (OpenCode's bus
        event names the file alone)."""
        event = self.sampled(sample_native)
        session = "" if sample_native in self.no_session else SAMPLE_SESSION
        assert (event.native, event.session_id, event.cwd) == (sample_native, session, SAMPLE_CWD)


class TestKiloContract(TestOpenCodeContract):
    """The same contract on payloads captured from the real Kilo 7.7.7
    (``golden/kilo/real``)."""

    host = "kilo"
    golden_dir = GOLDEN / "kilo"
    before_tool_golden = BEFORE
    reply_cases = tuple(c for c in REPLY_CASES if (GOLDEN / "kilo" / f"{c.payload}.json").exists())

    def test_every_registrable_event_has_a_golden(self) -> None:
        """Kilo is OpenCode's driver: the events no Kilo run fired are pinned by
        OpenCode's goldens (the driver is one)."""
        covered = {self.native_of(g) for g in self.goldens()}
        assert {"tool.execute.before", "tool.execute.after", "session.created"} <= covered


def decode(name: str, host: str = "opencode") -> Any:
    return opencode.driver.decode((GOLDEN / host / f"{name}.json").read_bytes())


def test_kilo_is_opencodes_driver_with_its_own_name() -> None:
    data = (GOLDEN / "opencode" / f"{BEFORE}.json").read_bytes()
    event = kilo.driver.decode(data)
    assert event.host == "kilo"
    assert msgspec.structs.replace(event, host="opencode") == opencode.driver.decode(data)
    assert kilo.driver.encode("tool.execute.before", Reply.deny("no")).dropped == ()


def test_a_subagents_calls_run_in_the_child_session_naming_the_parent() -> None:
    """The shim adds the parentID it saw in the child's session.created: the child's calls
    are a subagent's, in the child's own session."""
    start = decode("real/session.created.in-subagent")
    call = decode("real/tool.execute.before.bash.in-subagent")
    assert isinstance(start, SubagentStart) and isinstance(call, BeforeTool)
    assert call.session_id == start.child.id != start.session_id
    assert (call.agent.role, call.agent.parent_id, call.agent.type) == (
        "subagent", start.session_id, "general")  # fmt: skip


def test_task_is_the_spawn_tool_and_its_result_names_the_child() -> None:
    before, after = decode("real/tool.execute.before.task"), decode("real/tool.execute.after.task")
    assert isinstance(before, BeforeTool) and isinstance(after, AfterTool)
    assert before.tool.kind == "agent"
    assert before.tool.spawns[0].agent_type == "general"
    child = decode("real/session.created.in-subagent").child.id
    assert after.child_ids == (child,)


def test_v2_reads_the_input_from_the_event_and_knows_the_renamed_tools() -> None:
    """Plugin API v2 (OpenCode 2.0's contract): the arguments are the event's ``input``,
    ``shell`` is the shell, ``subagent`` the spawn tool, an error result is the error."""
    shell = decode("contract/v2.tool.execute.before.shell")
    assert (shell.tool.kind, shell.tool.command) == ("shell", "npm test")
    spawn = decode("contract/v2.tool.execute.before.subagent")
    assert (spawn.tool.kind, spawn.tool.call_id) == ("agent", "call_fake0002")
    failed = decode("contract/v2.tool.execute.after.shell.error")
    assert (failed.error, failed.ok) == ("Command exited with code 3", False)


def test_apply_patch_names_every_file_it_touches() -> None:
    event = decode("contract/tool.execute.before.apply_patch")
    assert event.tool.paths == ("/home/dev/app/src/app.py", "/home/dev/app/src/new.py")


def test_an_edit_is_also_an_after_edit() -> None:
    """A real edit names its file relative to the project; the change is absolute, as
    the file.edited OpenCode fires beside it says."""
    event = decode("real/tool.execute.after.edit")
    [edit] = opencode.driver.derive(event)
    assert isinstance(edit, AfterEdit)
    assert [c.path for c in edit.changes] == ["/home/dev/project/notes.txt"]
    edited = decode("real/file.edited")
    assert isinstance(edited, AfterEdit) and edited.changes == edit.changes


def test_file_edited_is_registered_only_when_named() -> None:
    driver = opencode.driver
    assert driver.natives("after-edit") == ("tool.execute.after",)
    assert driver.natives("after-edit", ("file.edited",)) == ("file.edited",)
    assert driver.natives("subagent-start") == ("session.created",)
    assert driver.natives("subagent-stop") == ("session.idle",)


def test_only_the_before_hook_decides_or_rewrites() -> None:
    caps = opencode.driver.capabilities
    assert caps("tool.execute.before").decide and caps("tool.execute.before").rewrite_input
    assert not caps("tool.execute.after").decide and caps("tool.execute.after").context
    idle = caps("session.idle")
    assert not (idle.decide or idle.rewrite_input or idle.context or idle.keep_working)


def test_a_payload_without_its_hook_is_a_decode_error() -> None:
    with pytest.raises(DecodeError):
        opencode.driver.decode(b'{"api": 1, "input": {}}')
    with pytest.raises(DecodeError):
        opencode.driver.decode(b'{"hook": "tool.execute.before", "input": {"sessionID": "s"}}')


payload_fields = st.fixed_dictionaries(
    {"hook": st.sampled_from([*opencode.driver.events, "chat.params"])},
    optional={
        "api": st.integers(-2, 3) | st.text(max_size=3),
        "directory": st.text(max_size=8) | st.none(),
        "parentID": st.text(max_size=8) | st.integers(),
        "input": st.dictionaries(
            st.sampled_from(["tool", "sessionID", "callID", "args", "input", "event", "result"]),
            st.none() | st.text(max_size=6) | st.integers() | st.dictionaries(
                st.sampled_from(["command", "type", "properties", "filePath", "value"]),
                st.none() | st.text(max_size=6) | st.lists(st.integers(), max_size=2),
                max_size=3),
            max_size=5),
        "output": st.none() | st.dictionaries(
            st.sampled_from(["args", "output", "metadata", "parts", "context"]),
            st.none() | st.text(max_size=6) | st.lists(st.text(max_size=3), max_size=2),
            max_size=3),
    },
)  # fmt: skip


@pytest.mark.timeout(300)
@settings(max_examples=examples(300), deadline=None)
@given(payload_fields)
def test_any_shim_payload_decodes_or_raises_decode_error(data: dict[str, Any]) -> None:
    """Wrong types anywhere in what the shim sends give a DecodeError, never a crash."""
    try:
        event = opencode.driver.decode(json.dumps(data).encode())
    except DecodeError:
        return
    assert isinstance(event, Event)
    assert event.native == data["hook"]


def test_the_samples_carry_the_tool_asked_for() -> None:
    data = opencode.driver.sample("tool.execute.before", tool="edit", cwd=SAMPLE_CWD,
                                  session_id=SAMPLE_SESSION)  # fmt: skip
    event = opencode.driver.decode(data)
    assert event.tool.paths == (f"{SAMPLE_CWD}/README.md",)


@pytest.mark.parametrize(
    ("driver", "version"), [(opencode.driver, "1.18.33"), (kilo.driver, "7.7.7")]
)
def test_each_hosts_sample_session_names_its_own_version(driver: Any, version: str) -> None:
    """OpenCode's and Kilo's samples are the shim's, each from its own program's version
    (as the real goldens are), not Kilo's made from OpenCode's."""
    data = json.loads(driver.sample("session.created", cwd=SAMPLE_CWD, session_id=SAMPLE_SESSION))
    assert data["input"]["event"]["properties"]["info"]["version"] == version
    assert driver.decode(json.dumps(data).encode()).host == driver.name
