"""``hookbus install --host droid``: the ``hooks`` block of ``.factory/settings.json``
written with timeouts in seconds and anchored matchers, the user's own hooks and keys
kept, the file given back byte for byte, and the review Droid needs said."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support import check_fallback, check_round_trip, client_call, hookbus_inproc, install_project

from hookbus.hosts.droid import manifest

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
    done = hookbus_inproc(project, "install", "--host", "droid")
    assert done.returncode == 0, done.stderr
    assert "/hooks" in done.stdout and "startup" in done.stdout
    hooks = settings(project)["hooks"]
    assert list(hooks) == ["PreToolUse", "SessionStart", "Stop"]  # the user's event first
    mine, ours = hooks["PreToolUse"]
    assert mine == MINE
    assert ours["matcher"] == "^(?:Bash|Execute)$|^mcp__github__"
    [entry] = ours["hooks"]
    assert (entry["type"], entry["timeout"]) == ("command", 10)
    assert client_call("droid", "PreToolUse", 10) in entry["command"]
    assert "matcher" not in hooks["SessionStart"][0]
    assert settings(project)["model"] == "opus"


def test_the_fallback_denies_in_json_with_exit_0(project: Path, tmp_path: Path) -> None:
    """With hookbus gone, the fail-closed event's fallback prints Droid's JSON deny, exit 0;
    the other events answer nothing (plain text would become SessionStart context)."""
    check_fallback(project, "droid", project / ".factory" / "settings.json", tmp_path / "nothing")


def test_install_install_uninstall_leaves_the_file_byte_identical(project: Path) -> None:
    """Two installs (the second with other entries), a verify, a drift found after a hand
    edit, and an uninstall give the user's ``.factory/settings.json`` back byte for byte."""
    original = ('{\n  "hooks": {"PreToolUse": [' + json.dumps(MINE) + ']},\n'
                '  "autonomyLevel": "auto-low"\n}').encode()  # fmt: skip
    installed = check_round_trip(project, "droid", project / ".factory" / "settings.json", original)
    assert installed["hooks"]["PreToolUse"][0] == MINE


def test_a_hooks_json_beside_the_settings_is_named_in_a_note(project: Path) -> None:
    """Droid may read ``.factory/hooks.json`` instead of the settings' hooks block: when
    one exists, the install still writes the settings but says so, naming the file."""
    (project / ".factory").mkdir()
    (project / ".factory" / "hooks.json").write_text('{"PreToolUse": []}\n')
    done = hookbus_inproc(project, "install", "--host", "droid")
    assert done.returncode == 0, done.stderr
    assert f"{project / '.factory' / 'hooks.json'} exists: Droid reads its hooks" in done.stdout
    assert "PreToolUse" in settings(project)["hooks"]


def test_droid_has_no_local_scope(project: Path) -> None:
    """``--scope local`` is refused, naming Droid's scopes; nothing is written."""
    done = hookbus_inproc(project, "install", "--host", "droid", "--scope", "local")
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
