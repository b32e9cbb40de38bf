"""The contract every driver passes (the shape of FastStream's ``tests/brokers/base``).

Subclass :class:`DriverContract` in a test module and fill in the class attributes::

    class TestClaudeContract(DriverContract):
        host = "claude"
        golden_dir = Path(__file__).parent / "golden" / "claude"
        reply_cases = (ReplyCase(id="deny", payload="PreToolUse.Bash", reply=Reply.deny("no"),
                                 stdout=b'{"hookSpecificOutput": ...}\\n'),)
        refusals = {"PreToolUse": HookOutput(b'{"hookSpecificOutput": ...}\\n')}

Golden payloads are ``<name>.json`` files, each beside ``<name>.expected.json``: the
portable event they must decode to, as JSON, without ``raw``. Its ``native`` names the
event, which is passed as ``--event`` to hosts whose payloads do not name it.

What the suite holds, for every host: each golden decodes to its event; each reply kind
becomes exact bytes and exit code; an empty dispatch is the host's no-opinion *for that
native event*; the refusal of each pinned event is exact; malformed input through the
real CLI answers the no-opinion with one diagnostic; the watchdog's answer to a handler
that never returns is the no-opinion, or the refusal when the handler is fail-closed;
every output uses only the host's exit codes and passes the host's own validator;
every native event the manifest can register has a golden; and every native event has
a sample payload (what ``hookbus try`` sends) that decodes back to it, with each tool
asked for.
"""

from __future__ import annotations

import json
import os
import textwrap
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pytest

from hookbus import hosts
from hookbus.bus.events import KINDS, TOOL_KINDS, Event
from hookbus.bus.host import Driver, ToolRoute
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import Reply
from hookbus.testing import HookClient, run_cli


class ReplyCase(msgspec.Struct, frozen=True, kw_only=True):
    """A reply to a golden payload, and the exact native output it must become."""

    id: str
    payload: str
    reply: Reply
    stdout: bytes
    exit_code: int = 0
    stderr: bytes = b""


def portable(event: Event) -> Any:
    """An event as comparable JSON data, without its raw payload."""
    data = json.loads(msgspec.json.encode(event))
    data.pop("raw", None)
    return data


def malformed_inputs(event_key: str) -> dict[str, bytes]:
    key = event_key.encode()
    return {
        "garbage": b"this is not json {",
        "two-mebibytes": b'{"pad": "' + b"x" * (2 << 20) + b'"}',
        "invalid-utf8": b'{"' + key + b'": "\xff\xfe"}',
        "json-array": b'[{"' + key + b'": "PreToolUse"}]',
        "wrong-typed-event-name": b'{"' + key + b'": 5}',
        "deeply-nested": b"[" * 200_000 + b"]" * 200_000,
        "empty": b"",
    }


HANGING_HANDLERS = """
import ctypes
import hookbus

@hookbus.handler("before-tool")
def refuses(event):
    return hookbus.Reply.deny("contract: refused")

@hookbus.handler("before-tool", timeout=1)
def hangs(event):
    # Stuck in C code holding the GIL (a ctypes.PyDLL call keeps it), so only the process
    # watchdog can end it, as a runaway regex would be; asleep rather than spinning, it
    # leaves the CPU to the other tests.
    while True:
        ctypes.PyDLL(None).sleep(3600)
"""


#: How long a test expecting diagnostics waits for the hook's writer to leave them.
DIAGNOSTICS_WITHIN = 10.0
#: Where and in which session the sample payloads are asked for.
SAMPLE_CWD = "/home/dev/sample project"
SAMPLE_SESSION = "0b7c5d1e-2f3a-4b5c-8d6e-7f8091a2b3c4"


class DriverContract:
    host: ClassVar[str]
    golden_dir: ClassVar[Path]
    reply_cases: ClassVar[Sequence[ReplyCase]] = ()
    #: native event -> the exact refusal ``driver.refusal(native, "R")`` must give.
    refusals: ClassVar[Mapping[str, HookOutput]] = {}
    #: The exit codes this host may ever see from hookbus.
    exit_codes: ClassVar[frozenset[int]] = frozenset({0})
    #: How the real CLI is started (a test host registers itself in a launcher script).
    launcher: ClassVar[Sequence[str]] = ("-m", "hookbus")

    #: A golden of a before-tool event, for the watchdog's answers and malformed input.
    before_tool_golden: ClassVar[str] = ""
    #: Native events whose payload names no folder: their ``cwd`` is ``""`` (Windsurf's
    #: file events, Goose's lifecycle ones).
    no_cwd: ClassVar[frozenset[str]] = frozenset()

    @property
    def before_tool(self) -> str:
        return self.native_of(self.golden_named(self.before_tool_golden))

    @property
    def driver(self) -> Driver:
        return hosts.driver(self.host)

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "golden" in metafunc.fixturenames:
            payloads = self.goldens()
            metafunc.parametrize("golden", payloads, ids=[p.stem for p in payloads])
        if "reply_case" in metafunc.fixturenames:
            metafunc.parametrize(
                "reply_case", self.reply_cases, ids=[c.id for c in self.reply_cases]
            )
        if "malformed" in metafunc.fixturenames:
            paths = hosts.driver(self.host).facts.event_paths
            cases = malformed_inputs(paths[0][-1] if paths else "event")
            metafunc.parametrize("malformed", list(cases.values()), ids=list(cases))
        if "refusal_case" in metafunc.fixturenames:
            metafunc.parametrize("refusal_case", list(self.refusals), ids=list(self.refusals))
        if "sample_native" in metafunc.fixturenames:
            natives = list(hosts.driver(self.host).events)
            metafunc.parametrize("sample_native", natives, ids=natives)

    # -- helpers -------------------------------------------------------------------------

    def goldens(self) -> list[Path]:
        return sorted(
            p for p in self.golden_dir.rglob("*.json") if not p.name.endswith(".expected.json")
        )

    def expected(self, golden: Path) -> Any:
        return json.loads(golden.with_name(golden.stem + ".expected.json").read_text())

    def native_of(self, golden: Path) -> str:
        return str(self.expected(golden)["native"])

    def event_arg(self, golden: Path) -> str | None:
        """The ``--event`` a host passes for this golden (None where the payload names it)."""
        return self.native_of(golden) if self.driver.facts.event_required else None

    def payload(self, name: str) -> bytes:
        return (self.golden_dir / f"{name}.json").read_bytes()

    def golden_named(self, name: str) -> Path:
        return self.golden_dir / f"{name}.json"

    def check_output(self, native: str | None, output: HookOutput) -> None:
        """The host's own rules for any output: exit codes, and its validator."""
        assert output.exit_code in self.exit_codes, output
        self.validate(native, output)

    def validate(self, native: str | None, output: HookOutput) -> None:
        """Override with the host's own validator (Codex ships JSON Schemas)."""

    # -- the contract --------------------------------------------------------------------

    def test_golden_payload_decodes_to_expected_event(self, golden: Path) -> None:
        """A golden payload decodes to exactly the portable event recorded beside it."""
        event = self.driver.decode(golden.read_bytes(), self.event_arg(golden))
        assert portable(event) == self.expected(golden)
        assert bytes(event.raw) == golden.read_bytes()

    def test_reply_encodes_to_exact_native_output(self, reply_case: ReplyCase) -> None:
        """Each reply kind becomes exactly the host's native stdout, stderr and exit code."""
        golden = self.golden_named(reply_case.payload)
        event = self.driver.decode(golden.read_bytes(), self.event_arg(golden))
        output = self.driver.encode(event.native, reply_case.reply).output
        assert output.stdout == reply_case.stdout
        assert output.stderr == reply_case.stderr
        assert output.exit_code == reply_case.exit_code
        self.check_output(event.native, output)

    def test_empty_reply_is_the_hosts_no_opinion_for_that_event(self, golden: Path) -> None:
        """A dispatch nobody answers gives the host's own "no opinion" for that native
        event (which need not be empty, nor the same for every event)."""
        result = HookClient(self.host).run(golden.read_bytes(), event=self.event_arg(golden))
        expected = self.driver.no_opinion(self.native_of(golden))
        assert HookOutput(result.stdout, result.stderr, result.exit_code) == expected
        assert result.diagnostics == ()
        self.check_output(self.native_of(golden), expected)

    def test_refusal_is_encoded_without_a_payload(self, refusal_case: str) -> None:
        """The deny a fail-closed handler owes an event hookbus could not read is encoded
        from the native name alone, exactly as pinned."""
        output = self.driver.refusal(refusal_case, "R")
        assert output == self.refusals[refusal_case]
        self.check_output(refusal_case, output)

    def test_every_registrable_event_has_a_golden(self) -> None:
        """Each native event a manifest can register is pinned by a golden payload."""
        driver = self.driver
        registrable = {n for kind in KINDS for n in driver.natives(kind, driver.events)}
        covered = {self.native_of(g) for g in self.goldens()}
        assert sorted(registrable - covered) == []

    def sampled(self, native: str, **tool: Any) -> Event:
        """The driver's sample of ``native``, decoded by the driver (``hookbus try`` sends
        it: every driver gives samples)."""
        driver = self.driver
        data = driver.sample(native, cwd=SAMPLE_CWD, session_id=SAMPLE_SESSION, **tool)
        return driver.decode(data, native if driver.facts.event_required else None)

    def test_every_native_event_has_a_sample_that_decodes_back(self, sample_native: str) -> None:
        """The sample payload of each native event decodes to that event, in the session and
        folder asked for (none where the host names none); a tool event's sample carries a
        tool by default."""
        event = self.sampled(sample_native)
        assert (event.native, event.session_id, event.cwd) == (
            sample_native,
            SAMPLE_SESSION,
            "" if sample_native in self.no_cwd else SAMPLE_CWD,
        )
        tool = getattr(event, "tool", None)
        assert tool is None or tool.name

    def test_a_tool_events_sample_carries_the_tool_asked_for(self, sample_native: str) -> None:
        """A tool event's sample carries each tool asked for, of every tool kind the driver
        knows and an MCP tool, with exactly the input given."""
        if getattr(self.sampled(sample_native), "tool", None) is None:
            return
        driver = self.driver
        given: dict[str, object] = {"hookbus": "contract"}
        for kind in sorted(TOOL_KINDS - {"other"}):
            route = driver.tool_route((kind,) if kind != "mcp" else ("mcp:contract",))
            if route is None or not driver.can_carry(sample_native, route):
                continue
            for name in (*route.names, *(f"{p}probe" for p in route.prefixes)):
                if not driver.can_carry(sample_native, ToolRoute(names=(name,))):
                    continue
                event = self.sampled(sample_native, tool=name, tool_input=given)
                tool = getattr(event, "tool", None)
                assert tool is not None, (name, event)
                assert (tool.name, tool.kind, tool.input) == (name, kind, given)

    def test_sample_of_an_unknown_event_names_the_hosts_events(self) -> None:
        """Asking for a sample of an event the host does not have is a ValueError that
        lists the host's events."""
        with pytest.raises(ValueError, match="NoSuchEvent") as raised:
            self.driver.sample("NoSuchEvent", cwd=SAMPLE_CWD, session_id=SAMPLE_SESSION)
        assert all(native in str(raised.value) for native in self.driver.events)

    def cli(
        self, data: bytes, tmp_path: Path, *, native: str | None, config: str = "",
        compiled: bool = False, expect_diagnostics: bool = False,
    ) -> tuple[HookOutput, list[str]]:  # fmt: skip
        """``hookbus run`` on ``data`` with ``config``; with ``compiled``, the index is
        compiled first (so the call knows each handler's declaration from the start); with
        ``expect_diagnostics``, the diagnostics are waited for (:data:`DIAGNOSTICS_WITHIN`)."""
        state = tmp_path / "state"
        (tmp_path / "hooks_contract.py").write_text(HANGING_HANDLERS)
        config_file = tmp_path / "contract.toml"
        config_file.write_text(textwrap.dedent(config))
        env = {**os.environ, "HOOKBUS_STATE_DIR": str(state), "HOOKBUS_CONFIG": str(config_file)}
        if compiled:
            import subprocess
            import sys

            # One index serves every host it was compiled with (the launcher's registry):
            # Claude's manifest compiles it, for hosts that have none too (the toy).
            argv = [sys.executable, *self.launcher, "manifest", "--host", "claude"]
            subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, timeout=120,
                           check=True)  # fmt: skip
        args = ["--event", native] if native and self.driver.facts.event_required else []
        result = run_cli(self.host, data, env=env, cwd=tmp_path, args=args,
                         launcher=self.launcher)  # fmt: skip
        assert b"Traceback" not in result.stderr + result.stdout
        log = state / "diagnostics.jsonl"
        # The diagnostics are written after the reply by a child the hook waits for 2 s
        # at most (FLUSH_GRACE): on a loaded machine it may finish after the hook exits.
        until = time.monotonic() + (DIAGNOSTICS_WITHIN if expect_diagnostics else 0.0)
        while True:
            text = log.read_text() if log.exists() else ""
            # Whole lines only: the writer may be half-way through one.
            lines = [json.loads(ln) for ln in text[: text.rfind("\n") + 1].splitlines()]
            # What went wrong; the index compiled on a first call is information.
            codes = [line["event"] for line in lines if line["level"] != "info"]
            if codes or time.monotonic() >= until:
                break
            time.sleep(0.05)
        return HookOutput(result.stdout, result.stderr, result.exit_code), codes

    def test_malformed_input_answers_no_opinion_with_a_diagnostic(
        self, malformed: bytes, tmp_path: Path
    ) -> None:
        """Bad stdin through the real CLI: the no-opinion of the event (named by
        ``--event`` where the host passes it), no traceback, one diagnostic line."""
        native = self.before_tool if self.driver.facts.event_required else None
        output, codes = self.cli(malformed, tmp_path, native=native, expect_diagnostics=True)
        expected = self.driver.no_opinion(native)
        assert (output.stdout, output.exit_code) == (expected.stdout, expected.exit_code)
        assert codes == ["input-invalid"], codes

    @pytest.mark.parametrize("fail_closed", [False, True], ids=["fail-open", "fail-closed"])
    def test_watchdog_answers_for_a_handler_that_never_returns(
        self, fail_closed: bool, tmp_path: Path
    ) -> None:
        """The watchdog's answer, through the real CLI: the host's no-opinion for a
        fail-open handler that hangs, the host's refusal for a fail-closed one. The index
        is compiled first: a watchdog that fires before a declaration is known refuses
        (the handler may be a guard), which a loaded machine would make of a 1.5 s
        budget spent compiling."""
        golden = self.golden_named(self.before_tool_golden)
        native = self.native_of(golden)
        config = f"""
            budget = 1.5
            python_path = ["."]
            enable = ["hooks_contract:hangs"]
            [handlers."hooks_contract:hangs"]
            fail_closed = {str(fail_closed).lower()}
        """
        output, codes = self.cli(
            golden.read_bytes(),
            tmp_path,
            native=native,
            config=config,
            compiled=True,
            expect_diagnostics=True,
        )
        if fail_closed:
            # On a loaded machine the budget can end before the worker has even imported
            # the handler: the same refusal, saying so.
            wants = "; fail-closed hooks_contract:hangs wants it"
            reasons = [f"hookbus: no answer in time{when}{wants}"
                       for when in ("", " while its handlers were being loaded")]  # fmt: skip
            assert output in [self.driver.refusal(native, reason) for reason in reasons]
        else:
            assert output == self.driver.no_opinion(native)
        assert "watchdog-fired" in codes or "handler-timeout" in codes, codes
        self.check_output(native, output)

    def test_in_process_dispatch_answers_as_the_command_does(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The in-process runtime (plugin hosts call it) gives exactly the bytes the hook
        command gives, for a handler's deny and for the no-opinion."""
        from hookbus.runtime import inproc

        golden = self.golden_named(self.before_tool_golden)
        native = self.native_of(golden)
        for enable in ('["hooks_contract:refuses"]', "[]"):
            config = f'python_path = ["."]\nenable = {enable}\n'
            command, _ = self.cli(golden.read_bytes(), tmp_path, native=native, config=config)
            monkeypatch.setenv("HOOKBUS_CONFIG", str(tmp_path / "contract.toml"))
            monkeypatch.setenv("HOOKBUS_STATE_DIR", str(tmp_path / "state"))
            result = inproc.dispatch(self.host, golden.read_bytes(), native=native)
            assert result.output == command
            self.check_output(native, result.output)
