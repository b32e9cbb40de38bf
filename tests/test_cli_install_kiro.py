"""``hookbus install --host kiro``: hookbus's own ``.kiro/hooks/hookbus.json`` (the hook
file the IDE 1.x and the CLI's V3 sessions read), the user's own hook files never touched,
and the folder given back exactly as it was."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support import hookbus_cli, hookbus_inproc, snapshot

GOOD = """
import hookbus

@hookbus.handler("before-tool", tools="read", fail_closed=True, timeout=5)
def reads(event):
    if any(p.endswith(".env") for p in event.tool.paths):
        return hookbus.Reply.deny("not the secrets")
    return None

@hookbus.handler("prompt-submit")
def brief(event):
    return hookbus.Reply.add_context("be brief")
"""
THEIRS = {
    "version": "v1",
    "hooks": [{"name": "lint-on-save", "trigger": "PostFileSave", "matcher": "\\\\.ts$",
               "action": {"type": "command", "command": "npm run lint"}, "timeout": 30}],
}  # fmt: skip


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "hooks_mod.py").write_text(GOOD)
    (root / ".hookbus.toml").write_text('enable = ["hooks_mod:reads", "hooks_mod:brief"]\n')
    return root


def installed(project: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((project / ".kiro" / "hooks" / "hookbus.json").read_text())
    return data


def test_install_writes_one_hook_per_subscribed_trigger(project: Path) -> None:
    """Only the subscribed triggers are registered, PascalCase, with seconds and an
    anchored matcher of exact built-in ids: a read route never catches an MCP tool."""
    result = hookbus_inproc(project, "install", "--host", "kiro")
    assert result.returncode == 0, result.stderr
    data = installed(project)
    assert data["version"] == "v1"
    hooks = data["hooks"]
    assert isinstance(hooks, list)
    assert [h["trigger"] for h in hooks] == ["UserPromptSubmit", "PreToolUse"]
    pre = hooks[1]
    assert pre["matcher"] == "^(?:fs_read|read)$"
    assert pre["action"]["type"] == "command"
    assert "--event PreToolUse" in pre["action"]["command"]
    assert pre["timeout"] == 10 and "hookbus-owned-file" in pre["name"]
    # Its fallback, should hookbus be gone, is the fail-closed handler's block.
    assert pre["action"]["command"].endswith("exit 2")


def test_installed_hook_blocks_a_read_of_the_secrets_as_kiro_runs_it(project: Path) -> None:
    """The installed PreToolUse command, run as Kiro's IDE 1.x runs it (payload on stdin),
    blocks with exit 2 and the reason on stderr."""
    assert hookbus_inproc(project, "install", "--host", "kiro").returncode == 0
    hooks = installed(project)["hooks"]
    assert isinstance(hooks, list)
    command = hooks[1]["action"]["command"]
    payload = {"session_id": "sess_1", "hook_event_name": "PreToolUse", "cwd": str(project),
               "tool_name": "fs_read", "tool_input": {"path": ".env"}}  # fmt: skip
    run = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload).encode(),
                         cwd=project, capture_output=True, timeout=120, check=False)  # fmt: skip
    assert (run.returncode, run.stdout, run.stderr) == (2, b"", b"not the secrets\n")


def test_install_install_uninstall_leaves_kiro_hooks_exactly_as_it_was(project: Path) -> None:
    """The user's own hook file stays untouched through two installs and an uninstall,
    verify finds no drift between, and the folder is given back byte for byte."""
    hooks = project / ".kiro" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "lint.json").write_text(json.dumps(THEIRS, indent=2) + "\n")
    before = snapshot(project / ".kiro")
    for _ in range(2):
        assert hookbus_inproc(project, "install", "--host", "kiro").returncode == 0
    assert json.loads((hooks / "lint.json").read_text()) == THEIRS
    verify = hookbus_inproc(project, "verify", "--host", "kiro")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert hookbus_inproc(project, "uninstall", "--host", "kiro").returncode == 0
    assert snapshot(project / ".kiro") == before


def test_uninstall_removes_the_folders_it_created(project: Path) -> None:
    """Without a ``.kiro`` before install, none is left after uninstall."""
    assert hookbus_inproc(project, "install", "--host", "kiro").returncode == 0
    assert hookbus_inproc(project, "uninstall", "--host", "kiro").returncode == 0
    assert not (project / ".kiro").exists()


def test_install_refuses_to_replace_a_users_hookbus_json(project: Path) -> None:
    """A ``hookbus.json`` hookbus did not write is refused, by path, and nothing changes."""
    hooks = project / ".kiro" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "hookbus.json").write_text(json.dumps(THEIRS))
    result = hookbus_inproc(project, "install", "--host", "kiro")
    assert result.returncode == 1
    assert "hookbus.json: not written by hookbus" in result.stderr
    assert json.loads((hooks / "hookbus.json").read_text()) == THEIRS


def test_verify_reports_drift_when_the_file_was_edited(project: Path) -> None:
    """An edited hook file (another timeout) is drift; install puts it back."""
    assert hookbus_inproc(project, "install", "--host", "kiro").returncode == 0
    path = project / ".kiro" / "hooks" / "hookbus.json"
    path.write_text(path.read_text().replace('"timeout": 10', '"timeout": 99'))
    verify = hookbus_inproc(project, "verify", "--host", "kiro")
    assert verify.returncode != 0
    assert "differs from the configuration" in verify.stdout + verify.stderr
    assert hookbus_inproc(project, "install", "--host", "kiro").returncode == 0
    assert hookbus_inproc(project, "verify", "--host", "kiro").returncode == 0


def test_a_configuration_wanting_nothing_removes_the_file(project: Path) -> None:
    """When no enabled handler wants a Kiro event any more, install removes the file."""
    assert hookbus_inproc(project, "install", "--host", "kiro").returncode == 0
    (project / ".hookbus.toml").write_text("enable = []\n")
    result = hookbus_inproc(project, "install", "--host", "kiro")
    assert result.returncode == 0, result.stderr
    assert not (project / ".kiro" / "hooks" / "hookbus.json").exists()


def test_try_shows_the_command_install_writes_into_the_hook_file(project: Path) -> None:
    """``hookbus try`` finds the registered command (and its timeout) inside the JSON hook
    file, and says when an event is not registered."""
    tried = hookbus_cli(project, "try", "--host", "kiro", "--event", "PreToolUse",
                        "--tool", "fs_read")  # fmt: skip
    assert "--event PreToolUse --timeout 10" in tried.stdout, tried.stdout + tried.stderr
    assert "not registered" not in tried.stdout
    stop = hookbus_cli(project, "try", "--host", "kiro", "--event", "Stop")
    assert "not registered" in stop.stdout
