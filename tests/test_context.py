"""What a handler gets from its context: declared environment variables, the project
folder, the host's transcript readers, option problems, and groups of handlers."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

import msgspec
import pytest

import hookbus
from hookbus import Bus, Handler, HandlerSettings, Reply
from hookbus.bus.context import Context
from hookbus.bus.dispatch import group_handlers
from hookbus.bus.errors import HandlerError
from hookbus.bus.events import BeforeTool, Event, Stop, ToolCall
from hookbus.bus.host import TRANSCRIPT_TAIL, Capabilities, TranscriptFacts
from hookbus.bus.options import convert_options
from hookbus.hosts import driver as load_driver
from hookbus.hosts.shared import transcript
from hookbus.testing import HookClient

TRANSCRIPTS = Path(__file__).parent / "transcripts"
#: Written by the real Claude Code 2.1.332 (tests/e2e, a foreground subagent) and the
#: real Codex 0.171.0 (tests/e2e, spawn_agent), against the suite's fake model servers.
CLAUDE_PARENT = TRANSCRIPTS / "claude-2.1.332-subagent-parent.jsonl"
CLAUDE_CHILD = TRANSCRIPTS / "claude-2.1.332-subagent-child.jsonl"
CODEX_ROLLOUT = TRANSCRIPTS / "codex-0.171.0-parent-rollout.jsonl"


def stop(*, cwd: str = "/work/p", transcript_path: str | None = None) -> Stop:
    return Stop(host="claude", native="Stop", session_id="s", cwd=cwd,
                transcript_path=transcript_path)  # fmt: skip


def context(event: Event | None = None, **kwargs: object) -> Context:
    return Context(event=event or stop(), handler="h", options=None, settings=None,
                   capabilities=Capabilities(), deadline=0.0, **kwargs)  # type: ignore[arg-type]  # fmt: skip


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def claude_reads(path: Path | str) -> TranscriptFacts:
    return load_driver("claude").read_transcript(str(path))


def codex_reads(path: Path | str) -> TranscriptFacts:
    return load_driver("codex").read_transcript(str(path))


# -- declared environment -----------------------------------------------------------------


@hookbus.handler("stop", env=("HOOKBUS_TEST_SET", "HOOKBUS_TEST_UNSET"))
def reads_env(event: Stop, ctx: Context) -> Reply:
    return Reply.tell_user(json.dumps(dict(ctx.env), sort_keys=True))


def test_ctx_env_holds_exactly_the_declared_variables_that_are_set() -> None:
    """A declared variable that is set is in ctx.env; an unset one and an undeclared one
    are not."""
    environ = {"HOOKBUS_TEST_SET": "yes", "OTHER": "no"}
    found = Bus([reads_env]).dispatch_sync(stop(), environ=environ).reply.message
    assert json.loads(found or "") == {"HOOKBUS_TEST_SET": "yes"}


def test_ctx_env_reads_the_process_environment_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without an environment given, ctx.env is read from os.environ when made."""
    monkeypatch.setenv("HOOKBUS_TEST_UNSET", "now set")
    found = Bus([reads_env]).dispatch_sync(stop()).reply.message
    assert json.loads(found or "") == {"HOOKBUS_TEST_UNSET": "now set"}


@pytest.mark.parametrize("name", ["", "A=B", "NUL\0", 3])
def test_a_declared_name_that_is_no_variable_is_refused_naming_the_handler(name: object) -> None:
    """env= takes variable names: empty, '=' or NUL inside, or not a string is an error."""

    @hookbus.handler("stop", env=(name,))  # type: ignore[arg-type]
    def bad(event: Stop) -> None: ...

    with pytest.raises(HandlerError, match=r"bad: env names environment variables"):
        Handler(bad)


# -- project folder -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "environ", "cwd", "expected"),
    [
        ("claude", {"CLAUDE_PROJECT_DIR": "/repo"}, "/repo/sub", "/repo"),
        ("claude", {"CLAUDE_PROJECT_DIR": "relative/dir"}, "/repo/sub", "/repo/sub"),
        ("claude", {}, "/repo/sub", "/repo/sub"),
        ("gemini", {"GEMINI_PROJECT_DIR": "/g"}, "/g/x", "/g"),
        ("qwen", {"QWEN_PROJECT_DIR": "/q"}, "/q/x", "/q"),
        ("qwen", {"CLAUDE_PROJECT_DIR": "/c"}, "/q/x", "/q/x"),
        ("codex", {"CLAUDE_PROJECT_DIR": "/c"}, "/x", "/x"),
    ],
)
def test_the_project_dir_is_the_hosts_documented_variable_else_the_cwd(
    host: str, environ: dict[str, str], cwd: str, expected: str
) -> None:
    """Each host's own project variable wins when it is absolute; else the event's cwd."""
    event = msgspec.structs.replace(stop(cwd=cwd), host=host)
    assert context(event, readers=load_driver(host), environ=environ).project_dir == expected


def test_ctx_project_dir_takes_the_first_absolute_of_the_facts_rule() -> None:
    """``ctx.project_dir`` is ``HostFacts.project_dir`` (the rule the cold path and the
    client find the configuration by) keeping absolute paths only: a relative variable or
    field is passed over for the next one."""
    copilot = load_driver("copilot").facts
    both = {"COPILOT_PROJECT_DIR": "rel", "CLAUDE_PROJECT_DIR": "/c"}
    assert (copilot.project_dir(both, None), copilot.project_dir(both, None, absolute=True)) == (
        "rel", "/c")  # fmt: skip
    cursor = load_driver("cursor")
    payload = {"workspace_roots": ["rel"], "cwd": "/ws"}
    assert cursor.facts.project_dir({}, payload) == "rel"
    assert cursor.facts.project_dir({}, payload, absolute=True) == "/ws"
    raw = msgspec.Raw(json.dumps(payload).encode())
    event = msgspec.structs.replace(stop(cwd="/elsewhere"), host="cursor", raw=raw)
    assert context(event, readers=cursor, environ={}).project_dir == "/ws"


def test_the_project_dir_falls_back_to_the_processs_folder() -> None:
    """An event without a cwd and no variable: the process's working directory."""
    ctx = context(stop(cwd=""), readers=load_driver("claude"), environ={})
    assert ctx.project_dir == os.getcwd()


def test_a_cursor_project_is_its_first_workspace_root() -> None:
    """Cursor names the root in the payload's workspace_roots, which hookbus also reads."""
    raw = msgspec.Raw(json.dumps({"workspace_roots": ["/ws"], "cwd": "/ws/a"}).encode())
    event = msgspec.structs.replace(stop(cwd="/ws/a"), host="cursor", raw=raw)
    assert context(event, readers=load_driver("cursor"), environ={}).project_dir == "/ws"


def test_the_project_dir_reaches_a_handler_through_the_real_driver(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HookClient (decode, bus, encode) hands the handler Claude's CLAUDE_PROJECT_DIR."""

    @hookbus.handler("stop")
    def where(event: Stop, ctx: Context) -> Reply:
        return Reply.continue_working(ctx.project_dir)

    monkeypatch.setenv("CLAUDE_PROJECT_DIR", "/the/project")
    payload = {"session_id": "s", "cwd": "/the/project/sub", "hook_event_name": "Stop",
               "stop_hook_active": False}  # fmt: skip
    assert HookClient("claude", [where]).run(payload).json == {
        "decision": "block", "reason": "/the/project"
    }  # fmt: skip


# -- transcripts --------------------------------------------------------------------------


def test_real_claude_transcripts_give_the_model_and_an_assistant_turn() -> None:
    """The transcripts Claude Code wrote (parent and subagent) name the model."""
    expected = TranscriptFacts(model="claude-opus-5-5", assistant_turn=True)
    assert claude_reads(CLAUDE_PARENT) == expected
    assert claude_reads(CLAUDE_CHILD) == expected


def test_a_real_codex_rollout_gives_the_turns_model_and_an_assistant_turn() -> None:
    """Codex's rollout: the turn_context model, and the model's own response items."""
    assert codex_reads(CODEX_ROLLOUT) == TranscriptFacts(model="gpt-fake", assistant_turn=True)


def test_a_fresh_session_has_no_assistant_turn_yet(tmp_path: Path) -> None:
    """The real transcripts as they were before the first assistant line: False, which
    only a file read from its start may say."""
    claude = lines_of(CLAUDE_PARENT)
    first = next(i for i, line in enumerate(claude) if b'"type":"assistant"' in line)
    fresh = tmp_path / "claude.jsonl"
    fresh.write_bytes(b"".join(claude[:first]))
    assert claude_reads(fresh) == TranscriptFacts(model=None, assistant_turn=False)
    codex = lines_of(CODEX_ROLLOUT)
    first = next(i for i, line in enumerate(codex) if b'"function_call"' in line)
    fresh = tmp_path / "rollout.jsonl"
    fresh.write_bytes(b"".join(codex[:first]))
    assert codex_reads(fresh) == TranscriptFacts(model="gpt-fake", assistant_turn=False)


def test_an_assistant_turn_beyond_the_tail_is_unknown_not_none(tmp_path: Path) -> None:
    """Real non-assistant lines pushing the last assistant turn out of the tail: unknown."""
    claude = lines_of(CLAUDE_PARENT)
    filler = [line for line in claude if b'"type":"attachment"' in line]
    pad = b"".join(filler) * (TRANSCRIPT_TAIL // len(b"".join(filler)) + 2)
    long = tmp_path / "long.jsonl"
    long.write_bytes(b"".join(claude) + pad)
    assert long.stat().st_size > TRANSCRIPT_TAIL
    assert claude_reads(long) == TranscriptFacts(model=None, assistant_turn=None)


def test_the_latest_real_assistant_turn_decides_and_synthetic_ones_do_not(tmp_path: Path) -> None:
    """After a model switch the newest assistant line's model wins; a <synthetic> line
    that Claude Code writes itself (an API error shown as a reply) is skipped."""
    claude = lines_of(CLAUDE_PARENT)
    last = json.loads(next(line for line in reversed(claude) if b'"type":"assistant"' in line))
    switched = {**last, "message": {**last["message"], "model": "claude-sonnet-4-5"}}
    synthetic = {**last, "message": {**last["message"], "model": "<synthetic>"}}
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"".join(claude) + (json.dumps(switched) + "\n").encode()
                     + (json.dumps(synthetic) + "\n").encode())  # fmt: skip
    assert claude_reads(path) == TranscriptFacts(model="claude-sonnet-4-5", assistant_turn=True)


def test_only_the_tail_is_read_from_a_2_gib_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sparse 2 GiB transcript ending in a real assistant line: one read, of the tail
    only, at the end, finds it."""
    last = next(line for line in reversed(lines_of(CLAUDE_PARENT)) if b'"assistant"' in line)
    huge = tmp_path / "huge.jsonl"
    with open(huge, "wb") as f:
        f.truncate(2 * 1024**3 - len(last) - 1)
        f.seek(0, os.SEEK_END)
        f.write(b"\n" + last)
    reads: list[tuple[int, int]] = []
    real = os.pread

    def pread(fd: int, n: int, offset: int) -> bytes:
        reads.append((n, offset))
        return real(fd, n, offset)

    monkeypatch.setattr(transcript.os, "pread", pread)
    assert claude_reads(huge) == TranscriptFacts(model="claude-opus-5-5", assistant_turn=True)
    assert reads == [(TRANSCRIPT_TAIL, 2 * 1024**3 - TRANSCRIPT_TAIL)]


def test_a_line_cut_by_the_tail_is_skipped(tmp_path: Path) -> None:
    """The first line of a tail that does not start the file is not parsed."""
    path = tmp_path / "t"
    path.write_bytes(b"A" * 10 + b"\nBBBBB\n")
    assert transcript.tail(str(path), 8) == ([b"BBBBB", b""], False)
    assert transcript.tail(str(path), 100) == ([b"A" * 10, b"BBBBB", b""], True)


def test_what_is_not_a_readable_transcript_is_unknown_and_never_raises(tmp_path: Path) -> None:
    """Missing, a folder, a FIFO (never opened blocking), a NUL in the path: unknown;
    binary junk read whole: no assistant turn."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    junk = tmp_path / "junk"
    junk.write_bytes(bytes(range(256)) * 64 + b'\n\xff\xfe{"type":"assistant"\n')
    for path in (tmp_path / "missing", tmp_path, fifo, "bad\0path"):
        assert claude_reads(path) == TranscriptFacts(), path
        assert codex_reads(path) == TranscriptFacts(), path
    assert claude_reads(junk) == TranscriptFacts(assistant_turn=False)


def test_an_unreadable_transcript_is_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transcript this user may not open (EACCES; tests may run as root, who may) or
    whose read fails (EIO) is unknown."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(CLAUDE_PARENT.read_bytes())

    def refuse(*args: object) -> int:
        raise PermissionError(13, "Permission denied")

    def fail(*args: object) -> bytes:
        raise OSError(5, "Input/output error")

    with monkeypatch.context() as patch:
        patch.setattr(transcript.os, "open", refuse)
        assert claude_reads(path) == TranscriptFacts()
    with monkeypatch.context() as patch:
        patch.setattr(transcript.os, "pread", fail)
        assert claude_reads(path) == TranscriptFacts()
    assert claude_reads(path).assistant_turn is True


def test_a_host_whose_transcript_format_is_not_documented_reads_nothing() -> None:
    """Gemini's driver has no transcript reader: unknown, even for a readable file."""
    assert load_driver("gemini").read_transcript(str(CLAUDE_PARENT)) == TranscriptFacts()


class CountingReaders:
    def __init__(self, fail: bool = False) -> None:
        self.paths: list[str] = []
        self.fail = fail

    def project_dir(self, event: Event, environ: Mapping[str, str], /) -> str:
        return "/p"

    def read_transcript(self, path: str, /) -> TranscriptFacts:
        self.paths.append(path)
        if self.fail:
            raise RuntimeError("reader bug")
        return TranscriptFacts(model=path, assistant_turn=True)


def test_ctx_transcript_defaults_to_the_events_and_is_read_once_per_path() -> None:
    """ctx.transcript() reads the event's transcript_path, once; another path once more;
    an event without a transcript reads nothing."""
    readers = CountingReaders()
    ctx = context(stop(transcript_path="/t/main.jsonl"), readers=readers)
    assert ctx.transcript().model == "/t/main.jsonl"
    assert ctx.transcript("/t/main.jsonl").model == "/t/main.jsonl"
    assert ctx.transcript("/t/child.jsonl").model == "/t/child.jsonl"
    assert readers.paths == ["/t/main.jsonl", "/t/child.jsonl"]
    assert context(stop(), readers=readers).transcript() == TranscriptFacts()
    assert readers.paths == ["/t/main.jsonl", "/t/child.jsonl"]


def test_a_failing_reader_answers_unknown_with_a_diagnostic(isolated_environment: Path) -> None:
    """A reader that raises is unknown for the handler, and an internal-error line."""
    ctx = context(stop(transcript_path="/t.jsonl"), readers=CountingReaders(fail=True))
    assert ctx.transcript() == TranscriptFacts()
    log = (isolated_environment / "diagnostics.jsonl").read_text()
    assert "internal-error" in log
    assert "reader bug" in log


def test_a_handler_reads_a_real_transcript_through_hookclient() -> None:
    """Through the real Claude driver the handler's ctx.transcript() reads the file the
    payload names."""

    @hookbus.handler("stop")
    def model(event: Stop, ctx: Context) -> Reply:
        facts = ctx.transcript()
        return Reply.continue_working(f"{facts.model} {facts.assistant_turn}")

    payload = {"session_id": "s", "cwd": "/w", "hook_event_name": "Stop",
               "transcript_path": str(CLAUDE_PARENT), "stop_hook_active": False}  # fmt: skip
    assert HookClient("claude", [model]).run(payload).json == {
        "decision": "block", "reason": "claude-opus-5-5 True"
    }  # fmt: skip


# -- options and their problems -----------------------------------------------------------


class Route(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    mode: str = "enforce"
    ceiling: str | None = None


class Routing(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    mode: str = "enforce"
    hosts: dict[str, Route] = msgspec.field(default_factory=dict)
    tiers: tuple[str, ...] = ("cheap", "standard")


def test_valid_options_convert_whole_without_problems() -> None:
    """A section that fits converts as it is."""
    raw = {"mode": "warn", "hosts": {"codex": {"mode": "off"}}}
    assert convert_options(raw, Routing) == (
        Routing(mode="warn", hosts={"codex": Route(mode="off")}), []
    )  # fmt: skip


def test_an_invalid_host_section_loses_only_that_host() -> None:
    """One bad entry of a table of tables is dropped, naming its key path; the other
    entries and the other fields are kept."""
    raw = {
        "mode": "warn",
        "hosts": {"claude": {"ceiling": "opus"}, "codex": {"mode": 3}, "cursor": {"nope": 1}},
        "tiers": "cheap",
        "typo": True,
    }
    options, problems = convert_options(raw, Routing)
    assert options == Routing(mode="warn", hosts={"claude": Route(ceiling="opus")})
    assert problems == [
        "hosts.codex.mode: Expected `str`, got `int`; dropped",
        "hosts.cursor: Object contains unknown field `nope`; dropped",
        "tiers: Expected `array`, got `str`; dropped",
        "typo: unknown option (known: hosts, mode, tiers); dropped",
    ]


@hookbus.handler("stop", options=Routing)
def routed(event: Stop, ctx: Context) -> Reply:
    return Reply.tell_user("\n".join(ctx.problems) or "none")


def test_the_handler_sees_its_problems_as_ctx_problems() -> None:
    """Dropped parts of the section, and of its reserved keys, reach ctx.problems."""
    settings = HandlerSettings(options={"hosts": {"codex": {"mode": 3}}},
                               problems=("timeout: bad; declared value kept",))  # fmt: skip
    reply = Bus([Handler(routed, settings=settings)]).dispatch_sync(stop()).reply
    assert reply.message == (
        "timeout: bad; declared value kept\nhosts.codex.mode: Expected `str`, got `int`; dropped"
    )
    assert Bus([routed]).dispatch_sync(stop()).reply.message == "none"


def test_a_bad_reserved_key_of_a_section_is_one_of_the_handlers_problems(tmp_path: Path) -> None:
    """A bad timeout in the section keeps the declared one and is in the handler's
    problems, with the file it came from."""
    from hookbus.runtime.config import load

    config = tmp_path / "config.toml"
    config.write_text('enable = ["m:f"]\n[handlers."m:f"]\ntimeout = "soon"\nword = 1\n')
    [ref] = load([str(config)]).settings.handlers
    assert ref.settings.problems == (
        "timeout: Expected `float | null`, got `str`; declared value kept",
    )
    assert (ref.settings.source, ref.settings.options) == (str(config), {"word": 1})


# -- groups -------------------------------------------------------------------------------


class Shared(msgspec.Struct, frozen=True, kw_only=True):
    word: str = "default"


@hookbus.handler("before-tool", tools="agent", options=Shared)
def on_spawn(event: BeforeTool, ctx: Context) -> Reply:
    return Reply.deny(f"{ctx.handler} {ctx.options.word}")


@hookbus.handler("stop", options=Shared)
def on_stop(event: Stop, ctx: Context) -> Reply:
    return Reply.tell_user(f"{ctx.handler} {ctx.options.word}")


@hookbus.handler("stop")
def no_options(event: Stop) -> None: ...


GUARD = hookbus.group(on_spawn, on_stop)


def test_group_members_are_handlers_named_after_the_configuration_name() -> None:
    """Each member is its own handler, <name>.<function>, with its own subscription and
    the one section's options, priority, timeout and fail_closed."""
    settings = HandlerSettings(options={"word": "shared"}, priority=7, timeout=3,
                               fail_closed=True)  # fmt: skip
    spawn, stop_ = group_handlers(GUARD, name="guard", settings=settings)
    assert (spawn.name, stop_.name) == ("guard.on_spawn", "guard.on_stop")
    assert (spawn.subscription.kinds, stop_.subscription.kinds) == (("before-tool",), ("stop",))
    for member in (spawn, stop_):
        assert member.options == Shared(word="shared")
        assert (member.subscription.priority, member.subscription.timeout) == (7, 3)
        assert member.subscription.fail_closed
    bus = Bus([spawn, stop_])
    agent = BeforeTool(host="claude", native="PreToolUse", session_id="s",
                       tool=ToolCall(name="Agent", kind="agent"))  # fmt: skip
    assert bus.dispatch_sync(agent).reply.reason == "guard.on_spawn shared"
    assert bus.dispatch_sync(stop()).reply.message == "guard.on_stop shared"


def test_members_declaring_different_options_are_an_error_naming_both() -> None:
    """A group whose members disagree on options= is refused, naming both functions."""
    with pytest.raises(HandlerError) as caught:
        group_handlers(hookbus.group(on_stop, no_options), name="g")
    message = str(caught.value)
    assert "no_options" in message
    assert "on_stop" in message
    assert "options=None" in message
    assert "Shared" in message


def test_a_group_of_an_unmarked_function_or_twice_the_same_is_refused() -> None:
    """Every member must be marked, and appear once."""
    with pytest.raises(HandlerError, match="not marked"):
        group_handlers(hookbus.group(on_stop, print), name="g")
    with pytest.raises(HandlerError, match=r"g\.on_stop'?: is in its group twice"):
        group_handlers(hookbus.group(on_stop, on_stop), name="g")
    with pytest.raises(HandlerError, match="group of no handler"):
        group_handlers(hookbus.group(), name="g")


def test_a_bus_or_hookclient_takes_a_group_directly() -> None:
    """Given to a bus, a group's members keep their own module:function names."""
    names = [h.name for h in Bus([GUARD]).handlers]
    assert names == [f"{__name__}:on_spawn", f"{__name__}:on_stop"]
    payload = {"session_id": "s", "cwd": "/w", "hook_event_name": "Stop",
               "stop_hook_active": False}  # fmt: skip
    assert HookClient("claude", [GUARD]).run(payload).stderr == b""
