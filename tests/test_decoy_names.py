"""A payload hookbus cannot parse (nested too deeply, larger than 1 MiB) is still the
event the installed command names: an event or tool name the model planted inside a
tool's arguments never decides it, on the cold path (``hookbus run``) nor through the
warm server's client; a command without ``--event`` reads a name only at the payload's
top level, and refuses when it cannot tell."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import GOLDEN, examples, hookbus_cli, wait_for

from hookbus.runtime.peek import top_level
from hookbus.testing import run_cli

GUARD = """
import hookbus

@hookbus.handler("before-tool", tools="shell", timeout=2, fail_closed=True)
def guard(event):
    if "rm -rf" in (event.tool.command or ""):
        return hookbus.Reply.deny("no rm -rf")
    return None
"""
#: Larger than what a hook reads (``runtime.intake.MAX_INPUT``).
PAD = "x" * ((1 << 20) + 4096)


def claude_payload(project: Path) -> bytes:
    """A Claude PreToolUse over 1 MiB whose tool input holds ``hook_event_name: Stop``
    first, and whose own name comes after the cut."""
    data: dict[str, Any] = {"session_id": "s", "cwd": str(project), "tool_name": "Bash",
                            "tool_input": {"command": "rm -rf /tmp/x", "hook_event_name": "Stop",
                                           "pad": PAD},
                            "hook_event_name": "PreToolUse"}  # fmt: skip
    return json.dumps(data).encode()


def copilot_payload(project: Path) -> bytes:
    """A Copilot preToolUse (no event name of its own) whose tool arguments nest 1 001
    deep down to ``"hookName":"agentStop"``."""
    head = json.dumps({"sessionId": "s", "timestamp": 1796105894282, "cwd": str(project),
                       "toolName": "bash"})[:-1]  # fmt: skip
    deep = "[" * 1000 + '{"hookName":"agentStop"}' + "]" * 1000
    return f'{head}, "toolArgs": {{"command": "rm -rf /", "nested": {deep}}}}}'.encode()


def claude_denies(stdout: bytes) -> bool:
    return bool(stdout.strip()) and (
        json.loads(stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    )


def copilot_denies(stdout: bytes) -> bool:
    return bool(stdout.strip()) and json.loads(stdout)["permissionDecision"] == "deny"


CASES = {
    "claude": ("PreToolUse", claude_payload, claude_denies),
    "copilot": ("preToolUse", copilot_payload, copilot_denies),
}


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose fail-closed guard denies ``rm -rf``, installed for Claude and
    Copilot with install's default command (the warm server's client)."""
    monkeypatch.setenv("HOOKBUS_SERVE_IDLE", "60")
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "guard_mod.py").write_text(GUARD)
    (root / ".hookbus.toml").write_text('enable = ["guard_mod:guard"]\n')
    for host in CASES:
        done = hookbus_cli(root, "install", "--host", host)
        assert done.returncode == 0, done.stderr
    return root


def installed(project: Path, host: str, event: str) -> str:
    """The command install wrote for ``host``'s ``event``."""
    if host == "claude":
        settings = json.loads((project / ".claude" / "settings.json").read_text())
        return str(settings["hooks"][event][0]["hooks"][0]["command"])
    hooks = json.loads((project / ".github/hooks/hookbus.json").read_text())["hooks"]
    return str(hooks[event][0]["bash"])


def served(state: Path) -> int:
    """How many calls the warm server of ``state`` has answered (-1: none is running)."""
    done = hookbus_cli(state, "serve", "--status", "--json")
    if done.returncode != 0 or not done.stdout.strip():
        return -1
    return int(json.loads(done.stdout)["served"])


@pytest.mark.parametrize("host", sorted(CASES))
def test_a_name_inside_the_tool_arguments_never_decides_the_event(
    host: str, project: Path, isolated_environment: Path
) -> None:
    """The fuzzer's cases: the guard's deny through ``hookbus run``, through the client
    with no server (its own cold path), then through the warm server it started."""
    event, build, denies = CASES[host]
    payload = build(project)
    cold = run_cli(host, payload, cwd=project, args=["--event", event, "--timeout", "10"])
    assert denies(cold.stdout), (cold.stdout, cold.stderr)

    def host_runs() -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["/bin/sh", "-c", installed(project, host, event)], input=payload,
                              capture_output=True, cwd=project, timeout=60, check=False)  # fmt: skip

    first = host_runs()
    assert first.returncode == 0 and denies(first.stdout), (first.stdout, first.stderr)
    wait_for(lambda: served(isolated_environment) >= 0, "the server the first call started")
    before = served(isolated_environment)
    warm = host_runs()
    assert warm.returncode == 0 and denies(warm.stdout), (warm.stdout, warm.stderr)
    assert served(isolated_environment) == before + 1  # the server answered it


@pytest.mark.parametrize("where", ["after-the-cut", "before-the-decoy"])
def test_a_command_without_event_reads_only_the_top_level_name(where: str, project: Path) -> None:
    """Without ``--event``: the name the payload gives at its top level decides, a decoy
    inside the tool's input never does; when the payload's own name is past what could
    be read, the event may be any, and the guard's refusal is the answer."""
    data = json.loads(claude_payload(project))
    if where == "before-the-decoy":
        data = {"hook_event_name": "PreToolUse", **data}
    result = run_cli("claude", json.dumps(data).encode(), cwd=project, args=["--timeout", "10"])
    assert claude_denies(result.stdout), (result.stdout, result.stderr)


# -- the scanner -------------------------------------------------------------------------

KEYS = st.sampled_from(["hook_event_name", "hookName", "tool_name", "k", 'é"\\', "a b"])
LEAVES = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
#: JSON values whose objects use the same keys as the top level: decoys at depth >= 2.
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=25,
)
WANTED = {"hook_event_name", "hookName", "k"}


@settings(max_examples=examples(400), deadline=None)
@given(
    payload=st.dictionaries(KEYS, VALUES, max_size=6),
    ascii_only=st.booleans(),
    indent=st.sampled_from([None, 0, 2]),
    cut=st.floats(min_value=0.0, max_value=1.0),
)
def test_the_scanner_returns_only_top_level_keys(
    payload: dict[str, object], ascii_only: bool, indent: int | None, cut: float
) -> None:
    """Over generated JSON with the wanted keys planted at every depth, whole or cut
    anywhere: every pair found is a key of the top-level object with its string value,
    in order, and a whole text gives them all."""
    text = json.dumps(payload, ensure_ascii=ascii_only, indent=indent).encode()
    own = [(k, v) for k, v in payload.items() if k in WANTED and isinstance(v, str)]
    assert top_level(text, WANTED) == own
    found = top_level(text[: int(len(text) * cut)], WANTED)
    assert found == own[: len(found)]


def test_the_scanner_is_not_fooled_by_strings_or_depth() -> None:
    """A key-like text inside a string, a key of a nested object at any depth (past the
    interpreter's recursion limit), and a name after broken JSON are not taken."""
    decoy = '{"hook_event_name": "Stop"}'
    text = (
        '{"a": "\\"hook_event_name\\": \\"Stop\\"", "b": ' + "[" * 5000 + decoy + "]" * 5000 +
        ', "hook_event_name": "PreToolUse", "c": x y, "hookName": "agentStop"}'
    ).encode()  # fmt: skip
    assert top_level(text, {"hook_event_name", "hookName"}) == [("hook_event_name", "PreToolUse")]
    assert top_level(GOLDEN.joinpath("PreToolUse.Bash.json").read_bytes(), {"tool_name"}) == [
        ("tool_name", "Bash")
    ]
