"""``hookbus install --host vscode``: a ``.github/hooks/hookbus-vscode.json`` hookbus owns
whole, in VS Code's flat shape; the user's own hook files (and Copilot's, in the same
folder) never touched, and uninstall leaving them byte for byte."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import GUARD, client_call, hookbus_inproc

from hookbus.hosts.vscode import manifest

#: The shared fail-closed shell guard, and a Stop handler.
GOOD = (
    GUARD.replace("PRELUDE", "")
    + """
@hookbus.handler("stop")
def bye(event): ...
"""
)
#: A user's own VS Code hook file, as the hooks docs write one.
THEIRS = """{
  "hooks": {
    "PostToolUse": [
      {"type": "command", "command": "npx prettier --write \\"$TOOL_INPUT_FILE_PATH\\""}
    ]
  }
}
"""
GOLDEN = Path(__file__).parent / "golden" / "vscode"
OURS = ".github/hooks/hookbus-vscode.json"


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "hooks_mod.py").write_text(GOOD)
    (root / ".hookbus.toml").write_text('enable = ["hooks_mod:guard", "hooks_mod:bye"]\n')
    return root


def test_install_writes_vscodes_own_shape(project: Path) -> None:
    """PascalCase events, flat entries with ``command`` and ``timeout`` in whole seconds,
    ``--event`` in each command, no matcher (VS Code ignores them), no version."""
    proc = hookbus_inproc(project, "install", "--host", "vscode")
    assert proc.returncode == 0, proc.stderr
    assert "Copilot CLI" in proc.stdout
    written = json.loads((project / OURS).read_text())
    assert list(written) == ["hooks"]
    assert sorted(written["hooks"]) == ["PreToolUse", "Stop"]
    (entry,) = written["hooks"]["PreToolUse"]
    assert sorted(entry) == ["command", "timeout", "type"]
    assert entry["timeout"] == 10  # the default budget, 5 s, plus 5
    assert client_call("vscode", "PreToolUse") in entry["command"]
    verify = hookbus_inproc(project, "verify", "--host", "vscode")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_install_install_uninstall_leaves_the_users_files_byte_for_byte(project: Path) -> None:
    """Install twice (the second a no-op), uninstall: our file gone; the user's own and
    Copilot's ``hookbus.json`` beside it exactly as they were."""
    hooks = project / ".github/hooks"
    hooks.mkdir(parents=True)
    (hooks / "format.json").write_text(THEIRS)
    assert hookbus_inproc(project, "install", "--host", "copilot").returncode == 0
    copilots = (hooks / "hookbus.json").read_bytes()
    ours = project / OURS
    assert hookbus_inproc(project, "install", "--host", "vscode").returncode == 0
    once = ours.read_bytes()
    second = hookbus_inproc(project, "install", "--host", "vscode")
    assert second.returncode == 0 and "already up to date" in second.stdout
    assert ours.read_bytes() == once
    proc = hookbus_inproc(project, "uninstall", "--host", "vscode")
    assert proc.returncode == 0, proc.stderr
    assert not ours.exists()
    assert (hooks / "format.json").read_text() == THEIRS
    assert (hooks / "hookbus.json").read_bytes() == copilots
    assert sorted(p.name for p in hooks.iterdir()) == ["format.json", "hookbus.json"]


def test_an_entry_the_user_added_to_our_file_is_kept(project: Path) -> None:
    """An entry of the user's in our file survives a reinstall and the uninstall."""
    assert hookbus_inproc(project, "install", "--host", "vscode").returncode == 0
    ours = project / OURS
    document = json.loads(ours.read_text())
    mine = {"type": "command", "command": "./audit.sh", "timeout": 5}
    document["hooks"]["PreToolUse"].insert(0, mine)
    ours.write_text(json.dumps(document, indent=2))
    assert hookbus_inproc(project, "install", "--host", "vscode").returncode == 0
    assert json.loads(ours.read_text())["hooks"]["PreToolUse"][0] == mine
    assert hookbus_inproc(project, "uninstall", "--host", "vscode").returncode == 0
    assert json.loads(ours.read_text()) == {"hooks": {"PreToolUse": [mine]}}


def test_verify_sees_drift(project: Path) -> None:
    """A changed timeout and a removed event are drift; install repairs both."""
    assert hookbus_inproc(project, "install", "--host", "vscode").returncode == 0
    ours = project / OURS
    document = json.loads(ours.read_text())
    document["hooks"]["PreToolUse"][0]["timeout"] = 99
    del document["hooks"]["Stop"]
    ours.write_text(json.dumps(document))
    verify = hookbus_inproc(project, "verify", "--host", "vscode")
    assert verify.returncode == 1
    assert "PreToolUse: differs" in verify.stdout and "Stop: missing" in verify.stdout
    assert hookbus_inproc(project, "install", "--host", "vscode").returncode == 0
    assert hookbus_inproc(project, "verify", "--host", "vscode").returncode == 0


def test_user_scope_writes_copilot_hooks_folder(project: Path, tmp_path: Path) -> None:
    """--scope user writes ``~/.copilot/hooks/hookbus-vscode.json``."""
    home = tmp_path / "home"
    user_dir = tmp_path / "xdg-config" / "hookbus"
    user_dir.mkdir(parents=True)
    (user_dir / "mine.py").write_text(GOOD)
    (user_dir / "config.toml").write_text('enable = ["mine:guard"]\n')
    proc = hookbus_inproc(project, "install", "--host", "vscode", "--scope", "user",
                       env={"HOME": str(home)})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    written = json.loads((home / ".copilot/hooks/hookbus-vscode.json").read_text())
    assert sorted(written["hooks"]) == ["PreToolUse"]
    assert not (project / ".github").exists()


def test_the_installed_command_denies_in_vscodes_form(project: Path, tmp_path: Path) -> None:
    """The command as written, run as VS Code runs it (a shell, in the home folder, the
    payload on stdin): the guard's permissionDecision deny, exit 0; a harmless command
    and another tool get nothing."""
    assert hookbus_inproc(project, "install", "--host", "vscode").returncode == 0
    command = json.loads((project / OURS).read_text())["hooks"]["PreToolUse"][0]["command"]
    payload = json.loads((GOLDEN / "PreToolUse.run_in_terminal.json").read_text())
    payload["cwd"] = str(project)

    def run(data: dict[str, object]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sh", "-c", command], input=json.dumps(data), cwd=tmp_path,
                              capture_output=True, text=True, timeout=60, check=False)  # fmt: skip

    done = run({**payload, "tool_input": {"command": "rm -rf /", "explanation": "x"}})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "no rm -rf"}}  # fmt: skip
    assert run(payload).stdout == ""
    read = json.loads((GOLDEN / "PreToolUse.read_file.json").read_text())
    assert run({**read, "cwd": str(project)}).stdout == ""


@pytest.mark.parametrize("guarded", [True, False])
def test_a_commands_fallback_exits_0(guarded: bool) -> None:
    """Should Python be gone, the fallback answers exit 0 (any other exit is only a
    warning in VS Code): a deny when a fail-closed handler wants the event, else nothing."""
    gone = sys.executable + "-gone"
    command = manifest.manifest.command(sys.executable, "PreToolUse", 15, guarded=guarded)
    command = command.replace(sys.executable, gone)
    done = subprocess.run(["sh", "-c", command], input="{}", capture_output=True,
                          text=True, timeout=30, check=False)  # fmt: skip
    assert done.returncode == 0, done
    if guarded:
        assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    else:
        assert done.stdout == ""
