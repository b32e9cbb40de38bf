"""``hookbus install --host qwen``: Qwen's ``.qwen/settings.json`` written with timeouts
in milliseconds and anchored matchers, the user's own hooks kept, and the file given
back byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support import client_call, hookbus_inproc, install_project

from hookbus.hosts.qwen import manifest

#: A user's own hook, which every install and uninstall must keep.
MINE = {"matcher": "write_file", "hooks": [{"type": "command", "command": "./lint.sh",
                                            "timeout": 3000}]}  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return install_project(tmp_path / "proj")


def settings(project: Path) -> dict[str, Any]:
    return json.loads((project / ".qwen" / "settings.json").read_text())  # type: ignore[no-any-return]


def test_install_writes_milliseconds_anchored_matchers_and_keeps_the_users_hooks(
    project: Path,
) -> None:
    """PreToolUse is registered for the shell tool and the github MCP server by an
    anchored regex, the lifecycle events with no matcher, every timeout in milliseconds;
    the user's own PreToolUse hook stays first."""
    path = project / ".qwen" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"general": {"vimMode": True}, "hooks": {"PreToolUse": [MINE]}}))
    done = hookbus_inproc(project, "install", "--host", "qwen")
    assert done.returncode == 0, done.stderr
    hooks = settings(project)["hooks"]
    assert list(hooks) == ["PreToolUse", "SessionStart", "Stop"]
    mine, ours = hooks["PreToolUse"]
    assert mine == MINE
    assert ours["matcher"] == "^(?:run_shell_command)$|^mcp__github__"
    [entry] = ours["hooks"]
    assert (entry["type"], entry["timeout"]) == ("command", 10_000)
    assert client_call("qwen", "PreToolUse", 10) in entry["command"]
    assert "matcher" not in hooks["SessionStart"][0]
    assert settings(project)["general"] == {"vimMode": True}


def test_the_fallback_denies_in_json_with_exit_0(project: Path, tmp_path: Path) -> None:
    """With hookbus gone, the fail-closed event's fallback prints Qwen's JSON deny, exit 0;
    the other events answer nothing."""
    assert hookbus_inproc(project, "install", "--host", "qwen", "--command", "path").returncode == 0
    hooks = settings(project)["hooks"]
    for event, denies in (("PreToolUse", True), ("Stop", False)):
        command = hooks[event][-1]["hooks"][0]["command"]
        proc = subprocess.run(["/bin/sh", "-c", command], input="{}", capture_output=True,
                              text=True, timeout=60, check=False,
                              env={**os.environ, "PATH": str(tmp_path / "nothing")})  # fmt: skip
        assert proc.returncode == 0
        if denies:
            hso = json.loads(proc.stdout)["hookSpecificOutput"]
            assert hso["permissionDecision"] == "deny"
            assert "hookbus could not run" in hso["permissionDecisionReason"]
        else:
            assert proc.stdout.strip() == ""


def test_install_install_uninstall_leaves_the_file_byte_identical(project: Path) -> None:
    """Two installs (the second with other entries) and an uninstall give the user's
    ``.qwen/settings.json`` back byte for byte."""
    original = ('{\n  "hooks": {"PreToolUse": [' + json.dumps(MINE) + ']},\n'
                '  "security": {"auth": {"selectedType": "openai"}}\n}').encode()  # fmt: skip
    path = project / ".qwen" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(original)
    assert hookbus_inproc(project, "install", "--host", "qwen").returncode == 0
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:shell"]\n')
    assert hookbus_inproc(project, "install", "--host", "qwen").returncode == 0
    assert settings(project)["hooks"]["PreToolUse"][0] == MINE
    assert hookbus_inproc(project, "verify", "--host", "qwen").returncode == 0
    proc = hookbus_inproc(project, "uninstall", "--host", "qwen")
    assert proc.returncode == 0, proc.stderr
    assert path.read_bytes() == original


def test_qwen_has_no_local_scope(project: Path) -> None:
    """``--scope local`` is refused, naming Qwen's scopes; nothing is written."""
    done = hookbus_inproc(project, "install", "--host", "qwen", "--scope", "local")
    assert done.returncode == 1
    assert "qwen has no local settings; scopes: project, user" in done.stderr
    assert not (project / ".qwen").exists()


def test_user_scope_is_the_users_settings(tmp_path: Path) -> None:
    """``--scope user`` is ``~/.qwen/settings.json``; the project's is under ``.qwen``."""
    assert manifest.settings_path("user") == os.path.expanduser("~/.qwen/settings.json")
    assert manifest.settings_path("project", str(tmp_path)) == str(
        tmp_path / ".qwen" / "settings.json"
    )
