"""``hookbus install --host gemini``: Gemini's ``.gemini/settings.json`` written with
timeouts in milliseconds and anchored matchers, the user's own hooks kept, and the file
given back byte for byte."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support import client_call, hookbus_inproc, install_project

from hookbus.hosts.gemini import manifest

#: A user's own hook, which every install and uninstall must keep.
MINE = {"matcher": "write_file", "hooks": [{"type": "command", "command": "./lint.sh",
                                            "timeout": 3000}]}  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return install_project(tmp_path / "proj")


def settings(project: Path) -> dict[str, Any]:
    return json.loads((project / ".gemini" / "settings.json").read_text())  # type: ignore[no-any-return]


def test_install_writes_milliseconds_anchored_matchers_and_keeps_the_users_hooks(
    project: Path,
) -> None:
    """BeforeTool is registered for the shell tool and the github MCP server by an anchored
    regex, the lifecycle events with no matcher, every timeout in milliseconds; the
    user's own BeforeTool hook stays first."""
    path = project / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"general": {"vimMode": True}, "hooks": {"BeforeTool": [MINE]}}))
    done = hookbus_inproc(project, "install", "--host", "gemini")
    assert done.returncode == 0, done.stderr
    hooks = settings(project)["hooks"]
    assert list(hooks) == ["BeforeTool", "SessionStart", "AfterAgent"]
    mine, ours = hooks["BeforeTool"]
    assert mine == MINE
    assert ours["matcher"] == "^(?:run_shell_command)$|^mcp_github_"
    [entry] = ours["hooks"]
    assert (entry["type"], entry["name"], entry["timeout"]) == ("command", "hookbus", 10_000)
    assert client_call("gemini", "BeforeTool", 10) in entry["command"]
    assert "matcher" not in hooks["SessionStart"][0]
    assert settings(project)["general"] == {"vimMode": True}


def test_the_fallback_answers_geminis_json_never_text(project: Path, tmp_path: Path) -> None:
    """With hookbus gone, the fail-closed event's fallback prints Gemini's JSON deny and
    the others '{}', exit 0 (text with exit 127 would be a deny Gemini makes up)."""
    assert (
        hookbus_inproc(project, "install", "--host", "gemini", "--command", "path").returncode == 0
    )
    hooks = settings(project)["hooks"]
    for event, expected in (
        ("BeforeTool", "deny"),
        ("AfterAgent", None),
    ):
        command = hooks[event][-1]["hooks"][0]["command"]
        proc = subprocess.run(["/bin/sh", "-c", command], input="{}", capture_output=True,
                              text=True, timeout=60, check=False,
                              env={**os.environ, "PATH": str(tmp_path / "nothing")})  # fmt: skip
        assert proc.returncode == 0
        reply = json.loads(proc.stdout)
        assert reply.get("decision") == expected
        if expected:
            assert "hookbus could not run" in reply["reason"]


def test_install_install_uninstall_leaves_the_file_byte_identical(project: Path) -> None:
    """Two installs (the second with other entries) and an uninstall give the user's
    ``.gemini/settings.json`` back byte for byte."""
    original = ('{\n    "hooks": {"BeforeTool": [' + json.dumps(MINE) + ']},\n'
                '    "security": {"auth": {"selectedType": "gemini-api-key"}}\n}').encode()  # fmt: skip
    path = project / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(original)
    assert hookbus_inproc(project, "install", "--host", "gemini").returncode == 0
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:shell"]\n')
    assert hookbus_inproc(project, "install", "--host", "gemini").returncode == 0
    assert settings(project)["hooks"]["BeforeTool"][0] == MINE
    assert hookbus_inproc(project, "verify", "--host", "gemini").returncode == 0
    proc = hookbus_inproc(project, "uninstall", "--host", "gemini")
    assert proc.returncode == 0, proc.stderr
    assert path.read_bytes() == original


def test_gemini_has_no_local_scope(project: Path) -> None:
    """``--scope local`` is refused, naming Gemini's scopes; nothing is written."""
    done = hookbus_inproc(project, "install", "--host", "gemini", "--scope", "local")
    assert done.returncode == 1
    assert "gemini has no local settings; scopes: project, user" in done.stderr
    assert not (project / ".gemini").exists()


def test_user_scope_writes_the_users_settings(project: Path, tmp_path: Path) -> None:
    """``--scope user`` is ``~/.gemini/settings.json``."""
    assert manifest.settings_path("user") == os.path.expanduser("~/.gemini/settings.json")
    assert manifest.settings_path("project", str(tmp_path)) == str(
        tmp_path / ".gemini" / "settings.json"
    )


def test_matchers_are_anchored_regexes() -> None:
    """Exact names are anchored (Gemini tests matchers unanchored), MCP servers are
    prefixes, and no tools means every tool."""
    assert manifest.matcher({"names": ["glob", "read_file"], "prefixes": []}) == (
        "^(?:glob|read_file)$"
    )
    assert manifest.matcher({"names": [], "prefixes": ["mcp_"]}) == "^mcp_"
    assert manifest.matcher(None) is None


def test_a_hooks_value_that_is_not_a_list_is_refused(project: Path) -> None:
    """A hooks entry hookbus does not understand is refused, not rearranged."""
    path = project / ".gemini" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"hooks": {"BeforeTool": {"oops": 1}}}')
    done = hookbus_inproc(project, "install", "--host", "gemini")
    assert done.returncode == 1
    assert "hooks.BeforeTool is not a list" in done.stderr
    assert path.read_text() == '{"hooks": {"BeforeTool": {"oops": 1}}}'


def test_the_shared_file_warning_offers_only_what_gemini_has(project: Path) -> None:
    """The warning about this machine's interpreter in a committed file offers the portable
    command forms, not a local scope Gemini does not have."""
    done = hookbus_inproc(project, "install", "--host", "gemini")
    assert done.returncode == 0, done.stderr
    assert "--command path" in done.stderr
    assert "--scope local" not in done.stderr
    doctor = hookbus_inproc(project, "doctor")
    assert "install with --command path or module" in doctor.stdout
    assert "--scope local" not in doctor.stdout.split("gemini", 1)[1]
