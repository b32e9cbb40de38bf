"""The Kiro driver: the shared contract on payloads of the CLI's agent-config hooks, of
the IDE 1.x hook files and of the IDE 0.x ``USER_PROMPT`` channel (built from Kiro's docs
and published captures, not from the real program), and what is particular to Kiro: a
block is exit 2 with the reason on stderr, and the IDE 0.x payload comes from an
environment variable while stdin never closes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import any_reply, guarded_project

from hookbus import Reply
from hookbus.bus.events import AfterTool, BeforeTool, Event
from hookbus.bus.output import HookOutput
from hookbus.hosts.kiro import driver as kiro
from hookbus.testing.contract import DriverContract, ReplyCase

GOLDEN = Path(__file__).parent / "golden" / "kiro"
BASH = "cli/preToolUse.execute_bash"
IDE_BASH = "ide1x/PreToolUse.execute_bash"


def validate_reply(native: str | None, output: HookOutput) -> None:
    """What Kiro reads: exit 0 (stdout is context on the context events only, and
    nothing anywhere else), or exit 2 with a reason on stderr on a pre-tool event only."""
    if output.exit_code == 2:
        assert native in kiro.BLOCKS and output.stderr.strip() and output.stdout == b""
        return
    assert (output.exit_code, output.stderr) == (0, b"")
    assert not output.stdout or native in kiro.CONTEXT


class TestKiroContract(DriverContract):
    """The shared contract, on the CLI's, the IDE 1.x's and the IDE 0.x's payloads."""

    host = "kiro"
    golden_dir = GOLDEN
    before_tool_golden = BASH
    exit_codes = frozenset({0, 2})
    refusals: ClassVar[dict[str, HookOutput]] = {
        "preToolUse": HookOutput(stderr=b"R\n", exit_code=2),
        "PreToolUse": HookOutput(stderr=b"R\n", exit_code=2),
        "userPromptSubmit": HookOutput(b"R\n"),
        "UserPromptSubmit": HookOutput(b"R\n"),
        "postToolUse": HookOutput(),
        "agentSpawn": HookOutput(),
        "Stop": HookOutput(),
    }
    reply_cases = (
        ReplyCase(id="cli-deny-blocks-on-stderr", payload=BASH, reply=Reply.deny("no"),
                  stdout=b"", stderr=b"no\n", exit_code=2),
        ReplyCase(id="ide-deny-blocks-on-stderr", payload=IDE_BASH, reply=Reply.deny("no"),
                  stdout=b"", stderr=b"no\n", exit_code=2),
        ReplyCase(id="ide0x-deny-blocks-on-stderr", payload="ide0x/preToolUse.execute_bash",
                  reply=Reply.deny("no"), stdout=b"", stderr=b"no\n", exit_code=2),
        ReplyCase(id="deny-without-reason-still-says-why", payload=BASH,
                  reply=Reply(decision="deny", reason=" "), stdout=b"",
                  stderr=b"Denied by a hookbus handler.\n", exit_code=2),
        ReplyCase(id="ask-blocks", payload=BASH, reply=Reply.ask("sure?"), stdout=b"",
                  stderr=b"sure?\n", exit_code=2),
        ReplyCase(id="deny-carries-context-on-stderr", payload=BASH,
                  reply=Reply(decision="deny", reason="no", context="use make test"),
                  stdout=b"", stderr=b"no\n\nuse make test\n", exit_code=2),
        ReplyCase(id="allow-is-no-opinion", payload=BASH, reply=Reply.allow("fine"), stdout=b""),
        ReplyCase(id="rewrite-is-dropped", payload=BASH, reply=Reply.rewrite({"command": "ls"}),
                  stdout=b""),
        ReplyCase(id="pre-tool-context-is-dropped", payload=BASH,
                  reply=Reply.add_context("slow"), stdout=b""),
        ReplyCase(id="session-start-context", payload="cli/agentSpawn",
                  reply=Reply.add_context("read AGENTS.md"), stdout=b"read AGENTS.md\n"),
        ReplyCase(id="ide-session-start-context", payload="ide1x/SessionStart",
                  reply=Reply.add_context("read AGENTS.md"), stdout=b"read AGENTS.md\n"),
        ReplyCase(id="prompt-context", payload="cli/userPromptSubmit",
                  reply=Reply.add_context("be brief"), stdout=b"be brief\n"),
        ReplyCase(id="prompt-deny-is-context", payload="ide1x/UserPromptSubmit",
                  reply=Reply(decision="deny", reason="not now", context="be brief"),
                  stdout=b"not now\n\nbe brief\n"),
        ReplyCase(id="post-tool-deny-is-dropped", payload="cli/postToolUse.fs_write",
                  reply=Reply.deny("looks wrong"), stdout=b""),
        ReplyCase(id="stop-keep-working-is-dropped", payload="cli/stop",
                  reply=Reply(keep_working="one more"), stdout=b""),
        ReplyCase(id="halt-is-dropped", payload=IDE_BASH, reply=Reply.stop_agent("budget"),
                  stdout=b""),
        ReplyCase(id="no-opinion", payload=IDE_BASH, reply=Reply(), stdout=b""),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        validate_reply(native, output)


def decode(name: str) -> Event:
    path = GOLDEN / f"{name}.json"
    return kiro.driver.decode(path.read_bytes(), path.name.split(".")[0])


def test_an_mcp_tool_with_read_in_its_name_is_not_a_read() -> None:
    """``@notes/read_page`` is server ``notes``'s tool, and the read route's anchored
    matcher of exact ids does not catch it."""
    import re

    from hookbus.hosts.shared.grouped import anchored

    event = decode("cli/preToolUse.mcp-read")
    assert isinstance(event, BeforeTool)
    assert (event.tool.kind, event.tool.mcp_server) == ("mcp", "notes")
    route = kiro.driver.tool_route(("read",))
    assert route is not None
    pattern = anchored({"names": list(route.names), "prefixes": list(route.prefixes),
                        "unknown": False, "known": [], "known_prefixes": []})  # fmt: skip
    assert pattern is not None
    assert re.search(pattern, "fs_read") and re.search(pattern, "read")
    assert not re.search(pattern, "@notes/read_page")


def test_an_mcp_route_is_the_servers_prefix() -> None:
    """``mcp:git`` routes ``@git/...`` tools, as Kiro's ``@git`` matcher does."""
    route = kiro.driver.tool_route(("mcp:git",))
    assert route is not None and route.prefixes == ("@git/",)
    event = decode("cli/preToolUse.mcp")
    assert isinstance(event, BeforeTool) and event.tool.mcp_server == "git"


def test_an_ide_delegation_is_an_agent_spawn_named_after_its_agent() -> None:
    """``subagent_<agent>`` is a spawn of that agent with the prompt given, and the agent
    route covers the prefix."""
    event = decode("ide1x/PreToolUse.subagent")
    assert isinstance(event, BeforeTool) and event.tool.kind == "agent"
    assert event.tool.spawns[0].agent_type == "code-investigator"
    route = kiro.driver.tool_route(("agent",))
    assert route is not None and "subagent_" in route.prefixes


def test_an_ide_edit_result_names_its_path_only_in_prose() -> None:
    """An IDE 1.x PostToolUse with an empty ``tool_input`` still derives an after-edit of
    the path its result's prose names, made absolute."""
    event = decode("ide1x/PostToolUse.str_replace")
    assert isinstance(event, AfterTool)
    assert [(c.action, c.path) for c in event.changes] == [
        ("update", "/home/dev/shop-api/src/checkout.ts")
    ]
    assert [e.kind for e in kiro.driver.derive(event)] == ["after-edit"]


@pytest.mark.parametrize(
    ("tool", "prose", "change"),
    [
        ("fs_write", "Created the src/my file.ts file.", ("add", "/w s/src/my file.ts")),
        ("str_replace", "Replaced text in /abs/a.ts", ("update", "/abs/a.ts")),
        ("fs_append", "Appended the text to the notes.md file.", ("update", "/w s/notes.md")),
    ],
    ids=["created", "replaced", "appended"],
)
def test_each_result_prose_names_its_change(tool: str, prose: str, change: tuple[str, str]) -> None:
    """Each result sentence the IDE writes after an edit gives the change's action and
    path (spaces kept, relative paths joined to ``cwd``)."""
    data = json.dumps({"session_id": "s", "hook_event_name": "PostToolUse", "cwd": "/w s",
                       "tool_name": tool, "tool_input": {}, "tool_response": prose})  # fmt: skip
    event = kiro.driver.decode(data.encode())
    assert isinstance(event, AfterTool)
    assert [(c.action, c.path) for c in event.changes] == [change]


def test_a_failed_result_is_an_error_and_no_edit() -> None:
    """The CLI's ``success: false`` and the IDE 0.x's ``toolSuccess: false`` are errors,
    and a failed write derives no after-edit."""
    cli = decode("cli/postToolUse.execute_bash.failed")
    legacy = decode("ide0x/postToolUse.fs_write.failed")
    assert isinstance(cli, AfterTool) and cli.error == "Tests: 1 failed, 41 passed"
    assert isinstance(legacy, AfterTool) and legacy.error and legacy.changes == ()
    assert kiro.driver.derive(legacy) == ()


def test_a_block_says_what_was_dropped() -> None:
    """What Kiro cannot express leaves a diagnostic: an ask becomes a block, a rewrite and
    a message are dropped."""
    encoded = kiro.driver.encode("PreToolUse", Reply(decision="ask", reason="r",
                                 updated_input={"command": "ls"}, message="hi"))  # fmt: skip
    assert [d.field for d in encoded.dropped] == ["decision", "updated_input", "message"]
    assert encoded.output.exit_code == 2


REPLIES = any_reply()


@given(native=st.sampled_from(kiro.ALL_EVENTS), reply=REPLIES)
def test_every_reply_is_one_kiro_reads_and_a_deny_always_blocks(native: str, reply: Reply) -> None:
    """Whatever a merged reply holds, the output is one Kiro reads; on a pre-tool event a
    deny or ask is always exit 2 with a reason on stderr."""
    encoded = kiro.driver.encode(native, reply)
    validate_reply(native, encoded.output)
    if native in kiro.BLOCKS and reply.decision in ("deny", "ask"):
        assert encoded.output.exit_code == 2 and encoded.output.stderr.strip()


@given(data=st.binary(max_size=200))
def test_any_bytes_decode_or_fail_with_a_decode_error(data: bytes) -> None:
    """Arbitrary bytes either decode or raise the driver's DecodeError, nothing else."""
    from hookbus.bus.errors import DecodeError

    try:
        kiro.driver.decode(data, "preToolUse")
    except DecodeError:
        pass


@given(name=st.text(min_size=1, max_size=30), args=st.dictionaries(
    st.sampled_from(["path", "command", "operations", "prompt"]),
    st.none() | st.text(max_size=10) | st.lists(st.text(max_size=5), max_size=2)))  # fmt: skip
def test_any_tool_call_decodes(name: str, args: dict[str, object]) -> None:
    """Any tool name and loosely typed input decode to a call of that name (0.x shape)."""
    data = json.dumps({"toolName": name, "toolArgs": args}).encode()
    event = kiro.driver.decode(data, "preToolUse")
    assert isinstance(event, BeforeTool) and event.tool.name == name


# -- the IDE's channels, through the real CLI -----------------------------------------


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path) -> Path:
    return guarded_project(tmp_path / "project")


def run_open(project: Path, env: dict[str, str], native: str, written: bytes) -> tuple[
        bytes, bytes, int, float]:  # fmt: skip
    """Run the hook as Kiro's IDE does: stdin a pipe written (maybe) and never closed."""
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "hookbus", "run", "--host", "kiro", "--event", native,
         "--timeout", "30"],
        cwd=project, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        if written:
            proc.stdin.write(written)
            proc.stdin.flush()  # and never closed
        out = proc.stdout.read()  # to EOF: the hook has answered and exited
        err = proc.stderr.read()
        code = proc.wait(timeout=60)
    finally:
        proc.kill()
        proc.wait(timeout=30)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            pipe.close()
    return out, err, code, time.monotonic() - started


RM = {"toolName": "execute_bash", "toolArgs": {"command": "rm -rf build"}}
#: What the bound allows: the host's own timeout (30 s) less a margin; a hook that hung on
#: stdin would never answer at all.
BOUND = 25


def test_ide_0x_payload_in_user_prompt_is_answered_although_stdin_never_closes(
    project: Path,
) -> None:
    """Kiro IDE 0.x: the payload in ``USER_PROMPT``, stdin an open pipe never written nor
    closed. The hook answers from the variable (the guard refuses the command) and exits,
    within its deadline."""
    env = {**os.environ, "USER_PROMPT": json.dumps(RM)}
    out, err, code, seconds = run_open(project, env, "preToolUse", b"")
    assert (out, err, code) == (b"", b"no rm -rf\n", 2)
    assert seconds < BOUND


def test_ide_0x_user_prompt_is_taken_without_reading_stdin(project: Path) -> None:
    """With ``USER_PROMPT`` set, stdin is not read at all: a different, harmless payload
    waiting there (never closed) is not what the hook answers."""
    env = {**os.environ, "USER_PROMPT": json.dumps(RM)}
    decoy = json.dumps({"toolName": "execute_bash", "toolArgs": {"command": "ls"}}).encode()
    out, err, code, seconds = run_open(project, env, "preToolUse", decoy)
    assert (out, err, code) == (b"", b"no rm -rf\n", 2)
    assert seconds < BOUND


def test_ide_1x_empty_user_prompt_reads_the_payload_from_an_unclosed_stdin(
    project: Path,
) -> None:
    """Kiro IDE 1.x sets ``USER_PROMPT`` empty and writes the payload to stdin: one whole
    object on a stdin left open is read and answered at once."""
    payload = json.loads((GOLDEN / f"{IDE_BASH}.json").read_text())
    payload["tool_input"]["command"] = "rm -rf build"
    payload["cwd"] = str(project)  # the project root Kiro names
    env = {**os.environ, "USER_PROMPT": ""}
    out, err, code, seconds = run_open(project, env, "PreToolUse", json.dumps(payload).encode())
    assert (out, err, code) == (b"", b"no rm -rf\n", 2)
    assert seconds < BOUND
