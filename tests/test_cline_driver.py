"""The Cline driver: the shared contract on payloads the real Cline CLI 3.0.65 sent and on
legacy VS Code extension ones, and what is particular to Cline (a deny is a cancel)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import FAIL_CLOSED_SHELL, REPLIES

from hookbus import Reply
from hookbus.bus.events import AfterTool, BeforeTool
from hookbus.bus.output import HookOutput
from hookbus.hosts.cline import driver as cline
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "cline"
REPLY_KEYS = {"cancel", "context", "contextModification", "errorMessage", "overrideInput"}


def validate_reply(output: HookOutput) -> None:
    """What Cline reads: exit 0 (it ignores the code), stdout empty or one object of its
    reply keys, typed as ``subprocess.ts`` parses them."""
    assert (output.exit_code, output.stderr) == (0, b"")
    if not output.stdout:
        return
    sent = json.loads(output.stdout)
    assert isinstance(sent, dict) and sent and set(sent) <= REPLY_KEYS
    assert isinstance(sent.get("cancel", False), bool)
    for key in ("context", "errorMessage"):
        assert isinstance(sent.get(key, ""), str)


class TestClineContract(DriverContract):
    """The shared contract, on payloads captured from the real Cline CLI 3.0.65
    (``golden/cline/real``), source-built CLI ones and legacy extension ones."""

    host = "cline"
    golden_dir = GOLDEN
    before_tool_golden = "real/PreToolUse.run_commands"
    refusals: ClassVar[dict[str, HookOutput]] = {
        "PreToolUse": HookOutput(b'{"cancel":true,"errorMessage":"R"}\n'),
        "PostToolUse": HookOutput(b'{"context":"R"}\n'),
        "TaskStart": HookOutput(),
        "SessionShutdown": HookOutput(),
    }
    reply_cases = (
        ReplyCase(id="pre-tool-deny-cancels", payload="real/PreToolUse.run_commands",
                  reply=Reply.deny("no"), stdout=b'{"cancel":true,"errorMessage":"no"}\n'),
        ReplyCase(id="pre-tool-deny-without-reason-still-says-why",
                  payload="real/PreToolUse.run_commands", reply=Reply(decision="deny", reason=" "),
                  stdout=b'{"cancel":true,"errorMessage":"Denied by a hookbus handler."}\n'),
        ReplyCase(id="pre-tool-ask-cancels", payload="real/PreToolUse.run_commands",
                  reply=Reply.ask("sure?"), stdout=b'{"cancel":true,"errorMessage":"sure?"}\n'),
        ReplyCase(id="pre-tool-allow-is-no-opinion", payload="real/PreToolUse.run_commands",
                  reply=Reply.allow("fine"), stdout=b""),
        ReplyCase(id="pre-tool-rewrite", payload="real/PreToolUse.run_commands",
                  reply=Reply.rewrite({"commands": ["ls"]}),
                  stdout=b'{"overrideInput":{"commands":["ls"]}}\n'),
        ReplyCase(id="pre-tool-context", payload="real/PreToolUse.run_commands",
                  reply=Reply.add_context("slow"), stdout=b'{"context":"slow"}\n'),
        ReplyCase(id="pre-tool-halt-cancels", payload="real/PreToolUse.run_commands",
                  reply=Reply.stop_agent("budget"), stdout=b'{"cancel":true,"errorMessage":"budget"}\n'),
        ReplyCase(id="pre-tool-message-is-dropped", payload="real/PreToolUse.run_commands",
                  reply=Reply.tell_user("hi"), stdout=b""),
        ReplyCase(id="post-tool-deny-is-context", payload="real/PostToolUse.run_commands",
                  reply=Reply.deny("looks wrong"), stdout=b'{"context":"looks wrong"}\n'),
        ReplyCase(id="post-tool-halt", payload="real/PostToolUse.run_commands",
                  reply=Reply.stop_agent("enough"), stdout=b'{"cancel":true,"errorMessage":"enough"}\n'),
        ReplyCase(id="legacy-pre-tool-deny", payload="legacy/PreToolUse.execute_command",
                  reply=Reply.deny("no"), stdout=b'{"cancel":true,"errorMessage":"no"}\n'),
        ReplyCase(id="task-start-reads-nothing", payload="real/TaskStart",
                  reply=Reply(decision="deny", context="x", halt="y"), stdout=b""),
        ReplyCase(id="no-opinion", payload="real/PreToolUse.run_commands", reply=Reply(), stdout=b""),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        validate_reply(output)


def decode(name: str) -> Any:
    path = GOLDEN / f"{name}.json"
    return cline.driver.decode(path.read_bytes(), path.name.split(".")[0])


def test_a_deny_says_it_cancels_the_whole_task() -> None:
    """Cline has no per-tool refusal: the deny becomes a cancel, with a diagnostic saying
    the task stops too."""
    encoded = cline.driver.encode("PreToolUse", Reply.deny("no"))
    assert [d.field for d in encoded.dropped] == ["decision"]
    assert "whole task" in encoded.dropped[0].why


def test_the_wire_name_is_not_the_event() -> None:
    """The CLI's ``hookName`` (``tool_call``) maps to the file it runs, without --event."""
    data = (GOLDEN / "real/PreToolUse.run_commands.json").read_bytes()
    assert cline.driver.decode(data).native == "PreToolUse"


def test_real_and_legacy_shell_calls_decode_alike() -> None:
    """A shell call reads the same from the CLI's typed record and the legacy string map."""
    real, legacy = (
        decode("real/PreToolUse.run_commands"),
        decode("legacy/PreToolUse.execute_command"),
    )
    assert isinstance(real, BeforeTool) and isinstance(legacy, BeforeTool)
    assert (real.tool.kind, real.tool.command) == ("shell", "echo hi | tee ran_proof.txt")
    assert (legacy.tool.kind, legacy.tool.command) == ("shell", "npm test -- --runInBand")
    assert legacy.timestamp == 1787566547.93


def test_a_subagents_call_names_its_parent() -> None:
    """``parent_agent_id`` set: the call runs in a subagent."""
    event = decode("PreToolUse.run_commands.in-subagent")
    assert event.agent.is_subagent and event.agent.parent_id


def test_an_edit_result_derives_an_after_edit() -> None:
    """An ``editor`` result is an after-edit of its path."""
    event = decode("PostToolUse.editor")
    assert isinstance(event, AfterTool)
    assert [c.path for c in event.changes] == ["/home/dev/shop-api/src/checkout.ts"]
    assert [e.kind for e in cline.driver.derive(event)] == ["after-edit"]


@given(native=st.sampled_from(cline.ALL_EVENTS), reply=REPLIES)
def test_every_reply_is_one_cline_reads_and_a_deny_always_cancels(
    native: str, reply: Reply
) -> None:
    """Whatever a merged reply holds, the output is one Cline parses; on PreToolUse a deny
    or ask is always a cancel; nothing but the tool events prints at all."""
    encoded = cline.driver.encode(native, reply)
    validate_reply(encoded.output)
    sent = json.loads(encoded.output.stdout or b"{}")
    if native not in ("PreToolUse", "PostToolUse"):
        assert sent == {}
    if native == "PreToolUse" and reply.decision in ("deny", "ask"):
        assert sent["cancel"] is True and sent["errorMessage"].strip()
        assert "overrideInput" not in sent


@pytest.mark.parametrize("native", cline.ALL_EVENTS)
def test_samples_carry_the_wire_name_of_their_event(native: str) -> None:
    """A sample's ``hookName`` is the wire name the CLI sends for that file."""
    data = msgspec.json.decode(cline.driver.sample(native, cwd="/p", session_id="s"))
    assert cline.WIRE.get(data["hookName"], data["hookName"]) == native


@given(stamp=st.one_of(st.text(), st.text(alphabet="0123456789\u00b2\u0663", min_size=1),
                       st.integers(min_value=0).map(lambda i: str(i) * 400)))  # fmt: skip
def test_any_timestamp_text_decodes_or_is_left_out(stamp: str) -> None:
    """A ``timestamp`` of any text (Unicode digits, thousands of digits) never escapes
    decode as anything but a readable event: unreadable ones are left out."""
    payload = json.loads((GOLDEN / "real" / "TaskStart.json").read_text())
    payload["timestamp"] = stamp
    event = cline.driver.decode(json.dumps(payload).encode(), "TaskStart")
    assert event.timestamp is None or isinstance(event.timestamp, float)


@pytest.mark.parametrize("tool", [{}, {"parameters": {"command": "ls"}}])
def test_a_legacy_tool_call_naming_no_tool_is_refused_by_a_fail_closed_guard(
    tmp_path: Path, tool: dict[str, str]
) -> None:
    """A legacy PreToolUse whose ``preToolUse`` names no tool is unreadable (it could be a
    shell command), so a fail-closed shell guard's refusal answers it, not the no-opinion
    (the fuzz test's ``"preToolUse": {}``). (A tool named ``""`` is no tool a host runs:
    no handler wants it, and the no-opinion answers before the driver, as for Cursor.)"""
    import os
    import subprocess
    import sys

    from hookbus.bus.errors import DecodeError

    (tmp_path / "hooks_shell.py").write_text(FAIL_CLOSED_SHELL)
    config = tmp_path / "shell.toml"
    config.write_text('python_path = ["."]\nenable = ["hooks_shell:no_shell"]\n')
    payload = json.loads((GOLDEN / "legacy" / "PreToolUse.execute_command.json").read_text())
    payload["preToolUse"] = tool
    env = {**os.environ, "HOOKBUS_CONFIG": str(config), "HOOKBUS_STATE_DIR": str(tmp_path / "st")}
    done = subprocess.run([sys.executable, "-m", "hookbus", "run", "--host", "cline",
                           "--event", "PreToolUse"], input=json.dumps(payload).encode(),
                          cwd=tmp_path, capture_output=True, env=env, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done
    assert json.loads(done.stdout)["cancel"] is True, done
    with pytest.raises(DecodeError, match="without a tool name"):
        cline.driver.decode(json.dumps(payload).encode())
