"""``hookbus install --host qoder``: the ``hooks`` block of ``.qoder/settings.json``
written with timeouts in seconds and Claude-syntax matchers, the user's own hooks and
keys kept, the local scope in ``settings.local.json``, and the file given back byte for
byte."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from support import check_fallback, check_round_trip, client_call, hookbus_inproc, install_project

from hookbus.hosts.qoder import manifest

#: A user's own hook (the docs' quick start), which every install and uninstall must keep.
MINE = {"matcher": "Bash", "hooks": [{"type": "command",
                                      "command": "~/.qoder/hooks/block-rm.sh"}]}  # fmt: skip


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path) -> Path:
    return install_project(tmp_path / "proj")


def settings(project: Path, name: str = "settings.json") -> dict[str, Any]:
    return json.loads((project / ".qoder" / name).read_text())  # type: ignore[no-any-return]


def test_install_writes_seconds_and_claude_matchers_keeping_the_users_hooks(
    project: Path,
) -> None:
    """PreToolUse is registered for Bash and the github MCP server, the lifecycle events
    with no matcher, every timeout in seconds; the user's own hook and keys stay."""
    path = project / ".qoder" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"model": "auto", "hooks": {"PreToolUse": [MINE]}}))
    done = hookbus_inproc(project, "install", "--host", "qoder")
    assert done.returncode == 0, done.stderr
    hooks = settings(project)["hooks"]
    assert list(hooks) == ["PreToolUse", "SessionStart", "Stop"]  # the user's event first
    mine, ours = hooks["PreToolUse"]
    assert mine == MINE
    assert ours["matcher"] == "^(?:Bash)$|^mcp__github__"
    [entry] = ours["hooks"]
    assert (entry["type"], entry["timeout"]) == ("command", 10)
    assert client_call("qoder", "PreToolUse", 10) in entry["command"]
    assert "matcher" not in hooks["SessionStart"][0]
    assert settings(project)["model"] == "auto"


def test_the_fallback_denies_in_json_with_exit_0(project: Path, tmp_path: Path) -> None:
    """With hookbus gone, the fail-closed event's fallback prints Qoder's JSON deny, exit 0;
    the other events answer nothing (plain text would become SessionStart context)."""
    check_fallback(project, "qoder", project / ".qoder" / "settings.json", tmp_path / "nothing")


def test_install_install_uninstall_leaves_the_file_byte_identical(project: Path) -> None:
    """Two installs (the second with other entries), a verify, a drift found after the
    configuration changed, and an uninstall give the user's file back byte for byte."""
    original = ('{\n  "hooks": {"PreToolUse": [' + json.dumps(MINE) + ']},\n'
                '  "permissions": {"allow": ["Bash(git status)"]}\n}').encode()  # fmt: skip
    installed = check_round_trip(project, "qoder", project / ".qoder" / "settings.json", original)
    assert installed["hooks"]["PreToolUse"][0] == MINE


def test_the_local_scope_is_settings_local_json(project: Path) -> None:
    """``--scope local`` writes ``.qoder/settings.local.json`` and leaves the shared file."""
    done = hookbus_inproc(project, "install", "--host", "qoder", "--scope", "local")
    assert done.returncode == 0, done.stderr
    assert "PreToolUse" in settings(project, "settings.local.json")["hooks"]
    assert not (project / ".qoder" / "settings.json").exists()


def test_user_scope_is_the_users_settings(tmp_path: Path) -> None:
    """``--scope user`` is ``~/.qoder/settings.json``."""
    assert manifest.settings_path("user") == os.path.expanduser("~/.qoder/settings.json")
    assert manifest.settings_path("local", str(tmp_path)) == str(
        tmp_path / ".qoder" / "settings.local.json"
    )
