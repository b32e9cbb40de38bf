"""The contract suite is host-neutral: a test-only toy host with every awkward trait of
the real ones (event only from ``--event``, a nested tool name, a non-empty no-opinion,
an empty answer that means deny, a project root in the payload) passes it beside Claude,
through the real CLI."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import ClassVar

from hookbus import Reply, hosts
from hookbus.bus.output import HookOutput
from hookbus.testing import run_cli
from hookbus.testing.contract import DriverContract, ReplyCase

TOY = Path(__file__).parent / "toy"
sys.path.append(str(TOY))

import launcher  # noqa: E402  (registers the toy host here, as in the CLI it starts)
from toy.facts import FACTS, PASS  # noqa: E402

LAUNCHER = (launcher.__file__,)
GOLDEN = Path(__file__).parent / "golden" / "toy"
BLOCK_R = HookOutput(b'{"verdict":"block","why":"R"}\n')


class TestToyContract(DriverContract):
    host = "toy"
    golden_dir = GOLDEN
    launcher = LAUNCHER
    before_tool_golden = "BeforeCall.sh"
    refusals: ClassVar[dict[str, HookOutput]] = {
        "BeforeCall": BLOCK_R,
        "Begin": PASS,
        "Halt": PASS,
        "Ping": HookOutput(),
    }
    reply_cases = (
        ReplyCase(id="deny", payload="BeforeCall.sh", reply=Reply.deny("no"),
                  stdout=b'{"verdict":"block","why":"no"}\n'),
        ReplyCase(id="allow", payload="BeforeCall.sh", reply=Reply.allow(),
                  stdout=b'{"verdict":"allow"}\n'),
        ReplyCase(id="no-opinion-is-not-empty", payload="BeforeCall.sh", reply=Reply(),
                  stdout=b'{"verdict":"pass"}\n'),
        ReplyCase(id="keep-working", payload="Halt.subagent",
                  reply=Reply.continue_working("more"), stdout=b'{"verdict":"again","why":"more"}\n'),
        ReplyCase(id="ping-says-nothing", payload="Ping", reply=Reply.add_context("x"), stdout=b""),
    )  # fmt: skip

    def validate(self, native: str | None, output: HookOutput) -> None:
        """The toy host reads an empty answer as a deny: only Ping may be silent."""
        if native != "Ping":
            assert output.stdout.strip(), "an empty answer would deny"
            assert json.loads(output.stdout)["verdict"] in ("pass", "allow", "block", "again")


def test_the_toy_host_is_a_folder_laid_out_as_a_shipped_hosts() -> None:
    """The toy host is a package laid out as ``hookbus/hosts/<name>/`` is (but the
    manifest, which the contract suite does not need), registered by its name alone: the
    registry finds its facts, and through them its driver and samples."""
    shipped = Path(hosts.__file__).parent / "goose"
    modules = {p.name for p in (TOY / "toy").glob("*.py")}
    assert modules == {p.name for p in shipped.glob("*.py")} - {"manifest.py"}
    assert hosts.facts("toy") is FACTS
    assert hosts.driver("toy").samples == "toy.samples"
    assert 'hosts.register("toy")' in Path(launcher.__file__).read_text()


GUARD = """
import hookbus

@hookbus.handler("before-tool", tools="shell", timeout=2, fail_closed=True)
def guard(event):
    if "rm -rf" in (event.tool.command or ""):
        return hookbus.Reply.deny("no rm -rf")
    return None
"""


def toy_hook(tmp_path: Path, payload: bytes, event: str) -> HookOutput:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    (project / "toyguard.py").write_text(GUARD)
    (project / ".hookbus.toml").write_text('enable = ["toyguard:guard"]\n')
    data = json.loads(payload)
    data["roots"] = [str(project)]
    result = run_cli("toy", json.dumps(data).encode(), cwd=tmp_path, args=["--event", event],
                     launcher=LAUNCHER)  # fmt: skip
    return HookOutput(result.stdout, result.stderr, result.exit_code)


def test_project_root_from_a_payload_field_and_event_from_argv(tmp_path: Path) -> None:
    """The toy names its project in ``roots`` and its event only on the command line: the
    guard found there blocks, and an unrelated command passes (never an empty answer)."""
    payload = (GOLDEN / "BeforeCall.sh.json").read_bytes()
    assert toy_hook(tmp_path, payload, "BeforeCall") == HookOutput(
        b'{"verdict":"block","why":"no rm -rf"}\n'
    )
    harmless = payload.replace(b"rm -rf victim", b"ls")
    assert toy_hook(tmp_path, harmless, "BeforeCall") == PASS


def test_nested_tool_name_routes_without_loading_the_driver(tmp_path: Path) -> None:
    """An MCP call (``call.tool.name``) is routed by the index to nobody: no opinion."""
    payload = (GOLDEN / "BeforeCall.mcp.json").read_bytes()
    toy_hook(tmp_path, (GOLDEN / "BeforeCall.sh.json").read_bytes(), "BeforeCall")  # warm
    assert toy_hook(tmp_path, payload, "BeforeCall") == PASS


def test_unreadable_toy_payload_is_refused_for_its_guard(tmp_path: Path) -> None:
    """Garbage on stdin for an event a fail-closed guard wants is refused in the toy's own
    dialect, named by ``--event`` alone (no payload to decode)."""
    toy_hook(tmp_path, (GOLDEN / "BeforeCall.sh.json").read_bytes(), "BeforeCall")  # compile
    project = tmp_path / "proj"
    env = {**os.environ, "PWD": str(project)}
    result = run_cli("toy", b"{not json", cwd=project, env=env,
                     args=["--event", "BeforeCall"], launcher=LAUNCHER)  # fmt: skip
    out = json.loads(result.stdout)
    assert out["verdict"] == "block"
    assert "toyguard:guard" in out["why"]


def test_a_second_dialect_is_recognised(tmp_path: Path) -> None:
    """A dialect declared in the host's facts is detected from the payload (the mechanism
    Copilot and Cursor payloads reaching a Claude install will use)."""
    from hookbus.hosts.shared.facts import Dialect, HostFacts
    from hookbus.runtime.peek import dialect

    claude = hosts.HOSTS["claude"]
    assert dialect(claude, {"legacy": 1}) is claude
    faked = HostFacts("claude-like", driver="x", dialects=(Dialect("toy", keys=("legacy",)),))
    assert dialect(faked, {"legacy": 1}) is FACTS
    assert dialect(faked, {"modern": 1}) is faked
