"""The contract every driver passes (the shape of FastStream's ``tests/brokers/base``).

Subclass :class:`DriverContract` in a test module and fill in the class attributes::

    class TestClaudeContract(DriverContract):
        host = "claude"
        golden_dir = Path(__file__).parent / "golden" / "claude"
        reply_cases = (ReplyCase(id="deny", payload="PreToolUse.Bash", reply=Reply.deny("no"),
                                 stdout=b'{"hookSpecificOutput": ...}\\n'),)

Golden payloads are ``<name>.json`` files, each beside ``<name>.expected.json``: the
portable event they must decode to, as JSON, without ``raw``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import msgspec
import pytest

from hookbus import drivers
from hookbus.bus.events import Event
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


def malformed_inputs(event_field: str) -> dict[str, bytes]:
    return {
        "garbage": b"this is not json {",
        "two-mebibytes": b'{"pad": "' + b"x" * (2 << 20) + b'"}',
        "invalid-utf8": b'{"' + event_field.encode() + b'": "\xff\xfe"}',
        "json-array": b'[{"' + event_field.encode() + b'": "PreToolUse"}]',
        "wrong-typed-event-name": b'{"' + event_field.encode() + b'": 5}',
        "deeply-nested": b"[" * 200_000 + b"]" * 200_000,
        "empty": b"",
    }


class DriverContract:
    host: ClassVar[str]
    golden_dir: ClassVar[Path]
    reply_cases: ClassVar[Sequence[ReplyCase]] = ()

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "golden" in metafunc.fixturenames:
            payloads = sorted(
                p for p in self.golden_dir.glob("*.json") if not p.name.endswith(".expected.json")
            )
            metafunc.parametrize("golden", payloads, ids=[p.stem for p in payloads])
        if "reply_case" in metafunc.fixturenames:
            metafunc.parametrize(
                "reply_case", self.reply_cases, ids=[c.id for c in self.reply_cases]
            )
        if "malformed" in metafunc.fixturenames:
            field = drivers.HOSTS[self.host].event_field
            cases = malformed_inputs(field)
            metafunc.parametrize("malformed", list(cases.values()), ids=list(cases))

    def payload(self, name: str) -> bytes:
        return (self.golden_dir / f"{name}.json").read_bytes()

    def test_golden_payload_decodes_to_expected_event(self, golden: Path) -> None:
        """A golden payload decodes to exactly the portable event recorded beside it."""
        event = drivers.load(self.host).decode(golden.read_bytes())
        expected = json.loads(golden.with_suffix(".expected.json").read_text())
        assert portable(event) == expected
        assert bytes(event.raw) == golden.read_bytes()

    def test_reply_encodes_to_exact_native_output(self, reply_case: ReplyCase) -> None:
        """Each reply kind becomes exactly the host's native stdout, stderr and exit code."""
        driver = drivers.load(self.host)
        event = driver.decode(self.payload(reply_case.payload))
        output = driver.encode(event, reply_case.reply).output
        assert output.stdout == reply_case.stdout
        assert output.stderr == reply_case.stderr
        assert output.exit_code == reply_case.exit_code

    def test_empty_reply_is_the_hosts_no_opinion(self, golden: Path) -> None:
        """A dispatch nobody answers gives the host's own "no opinion", for every event."""
        result = HookClient(self.host).run(golden.read_bytes())
        driver = drivers.load(self.host)
        assert (result.stdout, result.exit_code) == (
            driver.no_opinion.stdout,
            driver.no_opinion.exit_code,
        )
        assert result.diagnostics == ()

    def test_malformed_input_fails_open_with_a_diagnostic(
        self, malformed: bytes, tmp_path: Path
    ) -> None:
        """Bad stdin through the real CLI: no-opinion reply, exit as the host expects, no
        traceback anywhere, and one diagnostic line in the state directory."""
        state = tmp_path / "state"
        config = tmp_path / "empty.toml"
        config.write_text("")
        env = {**os.environ, "HOOKBUS_STATE_DIR": str(state), "HOOKBUS_CONFIG": str(config)}
        result = run_cli(self.host, malformed, env=env, cwd=tmp_path)
        no_opinion = drivers.load(self.host).no_opinion
        assert result.exit_code == no_opinion.exit_code
        assert result.stdout == no_opinion.stdout
        assert b"Traceback" not in result.stderr + result.stdout
        lines = (state / "diagnostics.jsonl").read_text().splitlines()
        assert [json.loads(line)["event"] for line in lines] == ["input-invalid"]
