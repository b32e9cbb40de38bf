"""``hookbus install --host antigravity``: a ``hookbus`` hook in ``.agents/hooks.json``
with timeouts in whole seconds, matcher groups on the tool events and flat handler lists
on the others, the user's own hooks kept, and the file given back byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support import client_call, hookbus_inproc

from hookbus.hosts.antigravity import manifest

GUARDS = """
import hookbus

@hookbus.handler("before-tool", tools=("shell", "mcp:github"), fail_closed=True, timeout=5)
def guard(event):
    return hookbus.Reply.deny("no curl") if "curl" in (event.tool.command or "") else None

@hookbus.handler("session-start", "stop")
def turns(event): ...

@hookbus.handler("after-tool")
def watch(event): ...
"""
#: A user's own hook, which every install and uninstall must keep.
MINE = {"PostToolUse": [{"matcher": "run_command",
                         "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 10}]}]}  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "hooks_mod.py").write_text(GUARDS)
    (root / ".hookbus.toml").write_text(
        'enable = ["hooks_mod:guard", "hooks_mod:turns", "hooks_mod:watch"]\n'
    )
    return root


def hooks_file(project: Path) -> Path:
    return project / ".agents" / "hooks.json"


def settings(project: Path) -> dict[str, Any]:
    return json.loads(hooks_file(project).read_text())  # type: ignore[no-any-return]


def test_install_writes_one_named_hook_in_agys_shape_and_keeps_the_users(project: Path) -> None:
    """The ``hookbus`` hook: PreToolUse as an anchored matcher group, PostToolUse for
    every tool (``""``), the lifecycle events as flat handler lists, every timeout whole
    seconds; the user's own hook is untouched, and the trust prompt is named."""
    path = hooks_file(project)
    path.parent.mkdir()
    path.write_text(json.dumps({"my-linter": MINE}))
    done = hookbus_inproc(project, "install", "--host", "antigravity")
    assert done.returncode == 0, done.stderr
    assert "trusted" in done.stdout
    document = settings(project)
    assert document["my-linter"] == MINE
    ours = document["hookbus"]
    assert list(ours) == ["PreInvocation", "PreToolUse", "PostToolUse", "Stop"]
    [group] = ours["PreToolUse"]
    assert group["matcher"] == "^(?:run_command|send_command_input)$|^mcp_github_"
    [entry] = group["hooks"]
    assert (entry["type"], entry["timeout"]) == ("command", 10)
    assert client_call("antigravity", "PreToolUse", 10) in entry["command"]
    assert ours["PostToolUse"][0]["matcher"] == ""
    for event in ("PreInvocation", "Stop"):
        [flat] = ours[event]
        assert set(flat) == {"type", "command", "timeout"} and isinstance(flat["timeout"], int)


@pytest.mark.parametrize(("event", "expected"), [
    ("PreToolUse", {"decision": "deny",
                    "reason": "hookbus could not run, and a fail-closed handler wants this event"}),
    ("PostToolUse", {}),
    ("PreInvocation", {}),
    ("Stop", {}),
])  # fmt: skip
def test_with_hookbus_gone_each_command_answers_agys_own_json(
    project: Path, tmp_path: Path, event: str, expected: dict[str, str]
) -> None:
    """With the interpreter gone, the guarded PreToolUse prints a deny and every other
    event ``{}``, exit 0: agy would deny on empty output, and abort the turn on a field
    its result message lacks."""
    assert (
        hookbus_inproc(project, "install", "--host", "antigravity", "--command", "path").returncode
        == 0
    )
    items = settings(project)["hookbus"][event]
    command = items[0]["hooks"][0]["command"] if "hooks" in items[0] else items[0]["command"]
    proc = subprocess.run(["/bin/sh", "-c", command], input="{}", capture_output=True, text=True,
                          timeout=60, check=False,
                          env={**os.environ, "PATH": str(tmp_path / "nothing")})  # fmt: skip
    assert (proc.returncode, json.loads(proc.stdout)) == (0, expected)


def test_an_unguarded_pre_tool_use_falls_back_to_ask(project: Path, tmp_path: Path) -> None:
    """Without a fail-closed handler, the PreToolUse fallback is the no-opinion
    ``{"decision":"ask"}`` (``{}`` or nothing would deny the tool)."""
    (project / "hooks_mod.py").write_text(GUARDS.replace("fail_closed=True", "fail_closed=False"))
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:guard"]\n')
    assert (
        hookbus_inproc(project, "install", "--host", "antigravity", "--command", "path").returncode
        == 0
    )
    command = settings(project)["hookbus"]["PreToolUse"][0]["hooks"][0]["command"]
    proc = subprocess.run(["/bin/sh", "-c", command], input=b"{}", capture_output=True,
                          timeout=60, check=False,
                          env={**os.environ, "PATH": str(tmp_path / "nothing")})  # fmt: skip
    assert (proc.returncode, proc.stdout) == (0, b'{"decision":"ask"}\n')


def test_install_install_uninstall_leaves_the_file_byte_identical(project: Path) -> None:
    """Two installs (the second with fewer entries), a verify, and an uninstall give the
    user's ``.agents/hooks.json`` back byte for byte."""
    original = ('{\n  "my-linter": ' + json.dumps(MINE) + ',\n'
                '  "safety-gate": {"enabled": false, "PreToolUse": []}\n}\n').encode()  # fmt: skip
    path = hooks_file(project)
    path.parent.mkdir()
    path.write_bytes(original)
    assert hookbus_inproc(project, "install", "--host", "antigravity").returncode == 0
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:guard"]\n')
    assert hookbus_inproc(project, "install", "--host", "antigravity").returncode == 0
    assert list(settings(project)["hookbus"]) == ["PreToolUse"]
    assert settings(project)["my-linter"] == MINE
    assert hookbus_inproc(project, "verify", "--host", "antigravity").returncode == 0
    proc = hookbus_inproc(project, "uninstall", "--host", "antigravity")
    assert proc.returncode == 0, proc.stderr
    assert path.read_bytes() == original


def test_verify_reports_drift(project: Path) -> None:
    """An entry changed by hand, or an event no longer wanted, is drift: verify fails and
    names the event."""
    assert hookbus_inproc(project, "install", "--host", "antigravity").returncode == 0
    document = settings(project)
    document["hookbus"]["Stop"][0]["timeout"] = 99
    hooks_file(project).write_text(json.dumps(document))
    done = hookbus_inproc(project, "verify", "--host", "antigravity")
    assert done.returncode != 0
    assert "Stop" in done.stdout + done.stderr and "timeout 99" in done.stdout + done.stderr


def test_our_entries_are_found_under_any_hook_name() -> None:
    """An entry of ours moved by hand into another named hook is still ours: uninstall
    removes it and keeps the user's handlers beside it."""
    ours = manifest.manifest.generate(None)
    assert ours == {}
    command = "hookbus run --host antigravity --event Stop"
    document = {"mine": {"Stop": [{"type": "command", "command": "./done.sh"},
                                  {"type": "command", "command": command}]}}  # fmt: skip
    assert manifest.manifest.commands(document) == {"Stop": [command]}
    assert manifest.manifest.without_ours(document) == {
        "mine": {"Stop": [{"type": "command", "command": "./done.sh"}]}
    }


def test_an_event_that_is_not_a_list_is_refused(project: Path) -> None:
    """A hook event hookbus does not understand is refused, not rearranged."""
    path = hooks_file(project)
    path.parent.mkdir()
    path.write_text('{"mine": {"PreToolUse": {"oops": 1}}}')
    done = hookbus_inproc(project, "install", "--host", "antigravity")
    assert done.returncode == 1
    assert "mine.PreToolUse is not a list" in done.stderr
    assert path.read_text() == '{"mine": {"PreToolUse": {"oops": 1}}}'


def test_scopes_are_the_workspace_and_the_users_config() -> None:
    """``project`` is ``.agents/hooks.json``, ``user`` is ``~/.gemini/config/hooks.json``."""
    assert manifest.hooks_path("user") == os.path.expanduser("~/.gemini/config/hooks.json")
    assert manifest.hooks_path("project", "/p") == "/p/.agents/hooks.json"
