"""``hookbus install --host droid``: the ``hooks`` block of ``.factory/settings.json``
written with timeouts in seconds and anchored matchers, the user's own hooks and keys
kept, the file given back byte for byte, and the review Droid needs said."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support import hookbus_cli, install_project, without_hookbus

from hookbus.manifests import droid as manifest

#: A user's own hook (the reference's formatter example), which every install and
#: uninstall must keep.
MINE = {"matcher": "Create|Edit|ApplyPatch", "hooks": [
    {"type": "command", "command": '"$FACTORY_PROJECT_DIR"/.factory/hooks/fmt.sh',
     "timeout": 30}]}  # fmt: skip


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path) -> Path:
    return install_project(tmp_path / "proj")


def settings(project: Path) -> dict[str, Any]:
    return json.loads((project / ".factory" / "settings.json").read_text())  # type: ignore[no-any-return]


def test_install_writes_seconds_anchored_matchers_and_keeps_the_users_hooks(
    project: Path,
) -> None:
    """PreToolUse is registered for Execute (and the legacy Bash) and the github MCP
    server by an anchored regex, the lifecycle events with no matcher, every timeout in
    seconds; the user's own hook and settings stay; the install says to review /hooks."""
    path = project / ".factory" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"model": "opus", "hooks": {"PreToolUse": [MINE]}}))
    done = hookbus_cli(project, "install", "--host", "droid")
    assert done.returncode == 0, done.stderr
    assert "/hooks" in done.stdout and "startup" in done.stdout
    hooks = settings(project)["hooks"]
    assert list(hooks) == ["PreToolUse", "SessionStart", "Stop"]  # the user's event first
    mine, ours = hooks["PreToolUse"]
    assert mine == MINE
    assert ours["matcher"] == "^(?:Bash|Execute)$|^mcp__github__"
    [entry] = ours["hooks"]
    assert (entry["type"], entry["timeout"]) == ("command", 10)
    assert "run --host droid --event PreToolUse --timeout 10" in entry["command"]
    assert "matcher" not in hooks["SessionStart"][0]
    assert settings(project)["model"] == "opus"


def test_the_fallback_denies_in_json_with_exit_0(project: Path, tmp_path: Path) -> None:
    """With hookbus gone, the fail-closed event's fallback prints Droid's JSON deny, exit 0;
    the other events answer nothing (plain text would become SessionStart context)."""
    assert hookbus_cli(project, "install", "--host", "droid", "--command", "path").returncode == 0
    hooks = settings(project)["hooks"]
    for event, denies in (("PreToolUse", True), ("SessionStart", False)):
        command = hooks[event][-1]["hooks"][0]["command"]
        proc = without_hookbus(command, tmp_path / "nothing")
        assert proc.returncode == 0
        if denies:
            specific = json.loads(proc.stdout)["hookSpecificOutput"]
            assert specific["permissionDecision"] == "deny"
            assert "hookbus could not run" in specific["permissionDecisionReason"]
        else:
            assert proc.stdout.strip() == ""


def test_install_install_uninstall_leaves_the_file_byte_identical(project: Path) -> None:
    """Two installs (the second with other entries), a verify, a drift found after a hand
    edit, and an uninstall give the user's ``.factory/settings.json`` back byte for byte."""
    original = ('{\n  "hooks": {"PreToolUse": [' + json.dumps(MINE) + ']},\n'
                '  "autonomyLevel": "auto-low"\n}').encode()  # fmt: skip
    path = project / ".factory" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(original)
    assert hookbus_cli(project, "install", "--host", "droid").returncode == 0
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:shell"]\n')
    assert hookbus_cli(project, "install", "--host", "droid").returncode == 0
    assert settings(project)["hooks"]["PreToolUse"][0] == MINE
    assert hookbus_cli(project, "verify", "--host", "droid").returncode == 0
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:shell", "hooks_mod:lifecycle"]\n')
    drifted = hookbus_cli(project, "verify", "--host", "droid")
    assert drifted.returncode == 1
    assert "missing: SessionStart" in drifted.stdout
    proc = hookbus_cli(project, "uninstall", "--host", "droid")
    assert proc.returncode == 0, proc.stderr
    assert path.read_bytes() == original


def test_a_hooks_json_beside_the_settings_is_named_in_a_note(project: Path) -> None:
    """Droid may read ``.factory/hooks.json`` instead of the settings' hooks block: when
    one exists, the install still writes the settings but says so, naming the file."""
    (project / ".factory").mkdir()
    (project / ".factory" / "hooks.json").write_text('{"PreToolUse": []}\n')
    done = hookbus_cli(project, "install", "--host", "droid")
    assert done.returncode == 0, done.stderr
    assert f"{project / '.factory' / 'hooks.json'} exists: Droid reads its hooks" in done.stdout
    assert "PreToolUse" in settings(project)["hooks"]


def test_droid_has_no_local_scope(project: Path) -> None:
    """``--scope local`` is refused, naming Droid's scopes; nothing is written."""
    done = hookbus_cli(project, "install", "--host", "droid", "--scope", "local")
    assert done.returncode == 1
    assert "droid has no local settings; scopes: project, user" in done.stderr
    assert not (project / ".factory").exists()


def test_user_scope_is_the_users_settings(tmp_path: Path) -> None:
    """``--scope user`` is ``~/.factory/settings.json``; the project's is under
    ``.factory``."""
    assert manifest.settings_path("user") == os.path.expanduser("~/.factory/settings.json")
    assert manifest.settings_path("project", str(tmp_path)) == str(
        tmp_path / ".factory" / "settings.json"
    )
