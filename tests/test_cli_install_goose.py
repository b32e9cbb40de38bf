"""``hookbus install --host goose``: a plugin of hookbus's own in ``.agents/plugins/hookbus``
(goose reads hooks only from plugins), the user's plugins never touched, a fail-closed
PreToolUse entry with ``on_failure: block``, and the installed command's ``block``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import client_call, hookbus_inproc, listing

from hookbus.hosts.goose import manifest

GUARDS = """
import hookbus

@hookbus.handler("before-tool", tools=("shell", "mcp:github"), fail_closed=True, timeout=5)
def shell(event):
    if "rm -rf /" in (event.tool.command or ""):
        return hookbus.Reply.deny("not that")
    return None

@hookbus.handler("session-end")
def bye(event): ...
"""
#: A user's own plugin beside ours, as the hooks guide shows one.
THEIRS = '{"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": "./log.sh"}]}]}}\n'
GOLDEN = Path(__file__).parent / "golden" / "goose"


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "hooks_mod.py").write_text(GUARDS)
    (root / ".hookbus.toml").write_text('enable = ["hooks_mod:shell", "hooks_mod:bye"]\n')
    return root


def plugin(project: Path) -> Path:
    return project / ".agents" / "plugins" / "hookbus"


def hooks(project: Path) -> dict[str, Any]:
    return json.loads((plugin(project) / "hooks" / "hooks.json").read_text())["hooks"]  # type: ignore[no-any-return]


def test_install_writes_a_plugin_in_gooses_grouped_shape(project: Path) -> None:
    """plugin.json and hooks/hooks.json, both marked as hookbus's; PreToolUse with an
    anchored matcher (never ``*``), whole seconds and ``on_failure: block``; SessionEnd
    with no matcher and no on_failure; verify is clean."""
    done = hookbus_inproc(project, "install", "--host", "goose")
    assert done.returncode == 0, done.stderr
    assert json.loads((plugin(project) / "plugin.json").read_text())["name"] == "hookbus"
    written = hooks(project)
    assert list(written) == ["PreToolUse", "SessionEnd"]
    (group,) = written["PreToolUse"]
    assert group["matcher"] == "^(?:developer__shell)$|^github__"
    (entry,) = group["hooks"]
    assert (entry["type"], entry["timeout"], entry["on_failure"]) == ("command", 10, "block")
    assert client_call("goose", "PreToolUse", 10) in entry["command"]
    (end,) = written["SessionEnd"]
    assert "matcher" not in end and "on_failure" not in end["hooks"][0]
    verify = hookbus_inproc(project, "verify", "--host", "goose")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_no_fail_closed_handler_means_no_on_failure(project: Path) -> None:
    """``on_failure: block`` is written only where a fail-closed handler wants the event."""
    (project / "hooks_mod.py").write_text(GUARDS.replace("fail_closed=True", "fail_closed=False"))
    assert hookbus_inproc(project, "install", "--host", "goose").returncode == 0
    assert "on_failure" not in hooks(project)["PreToolUse"][0]["hooks"][0]


def test_install_install_uninstall_keeps_the_users_plugins(project: Path) -> None:
    """Two installs (the second a no-op), verify, uninstall: our plugin gone, the user's
    plugin exactly as it was."""
    theirs = project / ".agents" / "plugins" / "mine" / "hooks" / "hooks.json"
    theirs.parent.mkdir(parents=True)
    theirs.write_text(THEIRS)
    assert hookbus_inproc(project, "install", "--host", "goose").returncode == 0
    once = (plugin(project) / "hooks" / "hooks.json").read_bytes()
    again = hookbus_inproc(project, "install", "--host", "goose")
    assert again.returncode == 0 and "already up to date" in again.stdout
    assert (plugin(project) / "hooks" / "hooks.json").read_bytes() == once
    proc = hookbus_inproc(project, "uninstall", "--host", "goose")
    assert proc.returncode == 0, proc.stderr
    assert not plugin(project).exists()
    assert theirs.read_text() == THEIRS
    assert sorted(p.name for p in (project / ".agents" / "plugins").iterdir()) == ["mine"]


def test_uninstall_gives_back_a_project_without_the_folders_install_made(project: Path) -> None:
    """In a project with no ``.agents/``, install makes four folder levels; uninstall
    removes them all, and the project holds exactly what it held before."""
    before = [str(p.relative_to(project)) for p in listing(project)]
    assert hookbus_inproc(project, "install", "--host", "goose").returncode == 0
    assert (plugin(project) / "hooks" / "hooks.json").is_file()
    assert hookbus_inproc(project, "uninstall", "--host", "goose").returncode == 0
    assert [str(p.relative_to(project)) for p in listing(project)] == before
    assert project.is_dir()


def test_verify_reports_an_edited_plugin_and_a_users_file_is_refused(project: Path) -> None:
    """A hooks.json edited by hand is drift; a plugin of the user's named hookbus is
    never overwritten."""
    assert hookbus_inproc(project, "install", "--host", "goose").returncode == 0
    path = plugin(project) / "hooks" / "hooks.json"
    path.write_text(path.read_text().replace('"timeout": 10', '"timeout": 99'))
    verify = hookbus_inproc(project, "verify", "--host", "goose")
    assert verify.returncode != 0 and "differs" in verify.stdout + verify.stderr
    assert hookbus_inproc(project, "uninstall", "--host", "goose").returncode == 0
    path.parent.mkdir(parents=True)
    path.write_text(THEIRS)
    done = hookbus_inproc(project, "install", "--host", "goose")
    assert done.returncode == 1 and "not written by hookbus" in done.stderr
    assert path.read_text() == THEIRS


def test_the_installed_command_blocks_in_gooses_words(project: Path) -> None:
    """The command as written, run as goose runs it (``sh -c``, the payload on stdin):
    ``{"decision":"block"}`` for the dangerous command (``deny`` would be no decision),
    exit 0 and nothing for a harmless one."""
    assert hookbus_inproc(project, "install", "--host", "goose").returncode == 0
    command = hooks(project)["PreToolUse"][0]["hooks"][0]["command"]
    payload = json.loads((GOLDEN / "PreToolUse.developer__shell.json").read_text())
    payload["working_dir"] = str(project)
    for line, stdout in (("rm -rf /", '{"decision":"block","reason":"not that"}\n'), ("ls", "")):
        payload["tool_input"] = {"command": line}
        done = subprocess.run(["sh", "-c", command], input=json.dumps(payload), cwd=project,
                              capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
        assert (done.returncode, done.stdout, done.stderr) == (0, stdout, "")


@pytest.mark.parametrize("guarded", [True, False])
def test_a_commands_fallback_is_a_block_only_for_a_guard(guarded: bool) -> None:
    """Should Python be gone, the fallback answers itself: goose's block when a
    fail-closed handler wants the event, else exit 0 and nothing (an allow)."""
    gone = sys.executable + "-gone"
    command = manifest.manifest.command(sys.executable, "PreToolUse", 15, guarded=guarded)
    command = command.replace(sys.executable, gone)
    done = subprocess.run(["sh", "-c", command], input="{}", capture_output=True,
                          text=True, timeout=30, check=False)  # fmt: skip
    assert done.returncode == 0, done
    if guarded:
        assert json.loads(done.stdout)["decision"] == "block"
    else:
        assert done.stdout == ""


def test_user_scope_is_the_agents_folder(tmp_path: Path) -> None:
    """``--scope user`` is ``~/.agents/plugins/hookbus``."""
    assert manifest.plugin_dir("user") == os.path.expanduser("~/.agents/plugins/hookbus")
    assert manifest.plugin_dir("project", str(tmp_path)) == str(
        tmp_path / ".agents/plugins/hookbus"
    )
