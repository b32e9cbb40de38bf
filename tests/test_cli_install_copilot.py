"""``hookbus install --host copilot``: a ``.github/hooks/hookbus.json`` hookbus owns whole,
the user's own hook files never touched, and uninstall leaving them byte for byte."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import assert_owned_file_round_trip, client_call, hookbus_inproc

from hookbus.hosts.copilot import manifest

GOOD = """
import hookbus

@hookbus.handler("before-tool", tools="shell", fail_closed=True, timeout=5)
def shell(event):
    if "rm -rf /" in (event.tool.command or ""):
        return hookbus.Reply.deny("not that")
    return None

@hookbus.handler("session-end")
def bye(event): ...
"""
#: A user's own Copilot hook file, as a person writes it.
THEIRS = """{
  "version": 1,
  "hooks": {
    "preToolUse": [{"type": "command", "bash": "python3 ~/audit.py", "timeoutSec": 10}]
  }
}
"""
GOLDEN = Path(__file__).parent / "golden" / "copilot"


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "hooks_mod.py").write_text(GOOD)
    (root / ".hookbus.toml").write_text('enable = ["hooks_mod:shell", "hooks_mod:bye"]\n')
    return root


def test_install_writes_copilots_own_shape(project: Path) -> None:
    """version 1, camelCase events, flat entries with ``bash``, ``timeoutSec`` in whole
    seconds, ``--event`` in each command, a full-match matcher, and the trust note."""
    proc = hookbus_inproc(project, "install", "--host", "copilot")
    assert proc.returncode == 0, proc.stderr
    assert "--trust-folder" in proc.stdout
    written = json.loads((project / ".github/hooks/hookbus.json").read_text())
    assert written["version"] == 1
    hooks = written["hooks"]
    assert sorted(hooks) == ["preToolUse", "sessionEnd"]
    (entry,) = hooks["preToolUse"]
    assert entry["type"] == "command"
    assert entry["timeoutSec"] == 10  # the default budget, 5 s, plus 5
    assert client_call("copilot", "preToolUse") in entry["bash"]
    assert entry["matcher"].startswith("^(?:") and "bash" in entry["matcher"]
    assert "command" not in entry and "hooks" not in entry
    verify = hookbus_inproc(project, "verify", "--host", "copilot")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_install_install_uninstall_leaves_the_users_files_byte_for_byte(project: Path) -> None:
    """Install twice (the second a no-op), uninstall: our file gone, theirs exactly."""
    theirs = project / ".github/hooks/theirs.json"
    theirs.parent.mkdir(parents=True)
    theirs.write_text(THEIRS)
    assert_owned_file_round_trip(project, "copilot", project / ".github/hooks/hookbus.json", theirs)


def test_user_scope_writes_copilot_home(project: Path, tmp_path: Path) -> None:
    """--scope user writes ``$COPILOT_HOME/hooks/hookbus.json``."""
    home = tmp_path / "copilot-home"
    user_dir = tmp_path / "xdg-config" / "hookbus"
    user_dir.mkdir(parents=True)
    (user_dir / "mine.py").write_text(GOOD)
    (user_dir / "config.toml").write_text('enable = ["mine:shell"]\n')
    proc = hookbus_inproc(project, "install", "--host", "copilot", "--scope", "user",
                       env={"COPILOT_HOME": str(home)})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert sorted(json.loads((home / "hooks/hookbus.json").read_text())["hooks"]) == ["preToolUse"]
    assert not (project / ".github").exists()


def test_the_installed_command_denies_in_copilots_flat_form(project: Path) -> None:
    """The command as written, run as Copilot runs ``bash`` entries (the payload on
    stdin, no event name in it): the guard's flat deny, exit 0."""
    assert hookbus_inproc(project, "install", "--host", "copilot").returncode == 0
    hooks = json.loads((project / ".github/hooks/hookbus.json").read_text())["hooks"]
    command = hooks["preToolUse"][0]["bash"]
    payload = json.loads((GOLDEN / "real/preToolUse.bash.json").read_text())
    payload["toolArgs"]["command"], payload["cwd"] = "rm -rf /", str(project)
    done = subprocess.run(["bash", "-c", command], input=json.dumps(payload), cwd=project,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"permissionDecision": "deny",
                                       "permissionDecisionReason": "not that"}  # fmt: skip


@pytest.mark.parametrize("guarded", [True, False])
def test_a_commands_fallback_never_exits_1(guarded: bool) -> None:
    """Should Python be gone, the fallback answers exit 0 (exit 1 would block in
    Copilot): a flat deny when a fail-closed handler wants the event, else nothing."""
    gone = sys.executable + "-gone"
    command = manifest.manifest.command(sys.executable, "preToolUse", 15, guarded=guarded)
    command = command.replace(sys.executable, gone)
    done = subprocess.run(["bash", "-c", command], input="{}", capture_output=True,
                          text=True, timeout=30, check=False)  # fmt: skip
    assert done.returncode == 0, done
    if guarded:
        assert json.loads(done.stdout)["permissionDecision"] == "deny"
    else:
        assert done.stdout == ""


def test_install_records_its_hooks_file_and_uninstall_forgets_it(project: Path) -> None:
    """The project's ``.github/hooks/hookbus.json`` counts for a Claude command's
    stand-aside only as install wrote it: install records its bytes in the trust store,
    uninstall forgets them."""
    from hookbus.hosts.shared.native_install import copilot_handles

    (project / ".git").mkdir()
    where = {"COPILOT_HOME": "/nonexistent/copilot-home"}
    assert hookbus_inproc(project, "install", "--host", "copilot").returncode == 0
    path = project / ".github" / "hooks" / "hookbus.json"
    assert copilot_handles("PreToolUse", "Bash", str(project), where) == str(path)
    written = path.read_bytes()
    assert hookbus_inproc(project, "uninstall", "--host", "copilot").returncode == 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(written)  # the same bytes, put back by someone else
    assert copilot_handles("PreToolUse", "Bash", str(project), where) is None
