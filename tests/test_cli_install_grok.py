"""``hookbus install --host grok``: a ``.grok/hooks/hookbus.json`` hookbus owns whole, the
user's own hook files never touched, uninstall leaving them byte for byte; and a Claude
install that Grok also runs (it reads ``.claude/settings.json``), driven as Grok drives
a command hook: ``sh -c`` with its envelope on stdin and its variables set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import HOST_GUARD, assert_owned_file_round_trip, client_call, hookbus_inproc

from hookbus.hosts.grok import manifest

GOOD = HOST_GUARD
#: A user's own Grok hook file, as a person writes it (the user guide's example).
THEIRS = """{
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "bin/safe-shell.sh", "timeout": 5}]}
    ]
  }
}
"""
GOLDEN = Path(__file__).parent / "golden" / "grok"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of the test's own: ``~/.grok`` and ``~/.claude`` are looked at."""
    found = tmp_path / "home"
    found.mkdir()
    monkeypatch.setenv("HOME", str(found))
    monkeypatch.delenv("GROK_HOME", raising=False)
    for name in ("GROK_HOOK_EVENT", "GROK_WORKSPACE_ROOT", "GROK_SESSION_ID"):
        monkeypatch.delenv(name, raising=False)
    return found


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path, home: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "hooks_mod.py").write_text(GOOD)
    (root / ".hookbus.toml").write_text('enable = ["hooks_mod:shell", "hooks_mod:bye"]\n')
    return root


def run_as_grok(
    command: str, payload: dict[str, object], root: Path
) -> subprocess.CompletedProcess[str]:
    """Run a hook command as Grok does (``runner/command.rs``): through ``sh -c`` (it has
    spaces), in the workspace, the envelope on stdin, its reserved variables set."""
    env = {**os.environ, "GROK_HOOK_EVENT": str(payload["hookEventName"]),
           "GROK_HOOK_NAME": "hookbus", "GROK_SESSION_ID": str(payload["sessionId"]),
           "GROK_WORKSPACE_ROOT": str(root), "CLAUDE_PROJECT_DIR": str(root)}  # fmt: skip
    return subprocess.run(["sh", "-c", command], input=json.dumps(payload), cwd=root, env=env,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip


def dangerous(root: Path) -> dict[str, object]:
    payload = json.loads((GOLDEN / "pre_tool_use.run_terminal_command.json").read_text())
    payload["toolInput"]["command"] = "rm -rf /"
    payload["cwd"] = payload["workspaceRoot"] = str(root)
    return payload


def grok_hooks(path: Path) -> dict[str, list[dict[str, object]]]:
    hooks: dict[str, list[dict[str, object]]] = json.loads(path.read_text())["hooks"]
    return hooks


def test_install_writes_groks_own_shape(project: Path) -> None:
    """Grok's snake_case event keys, a group per event with a plain list of Grok tool ids
    as its matcher, ``timeout`` in whole seconds, ``--event`` in each command, the trust
    note; verify agrees."""
    proc = hookbus_inproc(project, "install", "--host", "grok")
    assert proc.returncode == 0, proc.stderr
    assert "/hooks-trust" in proc.stdout
    hooks = grok_hooks(project / ".grok/hooks/hookbus.json")
    assert sorted(hooks) == ["pre_tool_use", "session_end"]
    (group,) = hooks["pre_tool_use"]
    assert group["matcher"] == "run_terminal_command"
    (entry,) = group["hooks"]  # type: ignore[misc]
    assert entry["type"] == "command"
    assert entry["timeout"] == 10  # the default budget, 5 s, plus 5
    assert client_call("grok", "pre_tool_use") in entry["command"]
    verify = hookbus_inproc(project, "verify", "--host", "grok")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_install_install_uninstall_leaves_the_users_files_byte_for_byte(project: Path) -> None:
    """Install twice (the second a no-op), uninstall: our file gone, theirs exactly."""
    theirs = project / ".grok/hooks/safety.json"
    theirs.parent.mkdir(parents=True)
    theirs.write_text(THEIRS)
    assert_owned_file_round_trip(project, "grok", project / ".grok/hooks/hookbus.json", theirs)


def test_verify_reports_an_entry_edited_since_install(project: Path) -> None:
    """A timeout changed by hand is drift: verify says what and fails."""
    assert hookbus_inproc(project, "install", "--host", "grok").returncode == 0
    path = project / ".grok/hooks/hookbus.json"
    document = json.loads(path.read_text())
    document["hooks"]["pre_tool_use"][0]["hooks"][0]["timeout"] = 3
    path.write_text(json.dumps(document))
    verify = hookbus_inproc(project, "verify", "--host", "grok")
    assert verify.returncode != 0
    assert "changed: pre_tool_use: timeout 3, expected 10" in verify.stdout


def test_user_scope_writes_grok_home(project: Path, tmp_path: Path) -> None:
    """--scope user writes ``$GROK_HOME/hooks/hookbus.json``, nothing in the project."""
    grok_home = tmp_path / "grok-home"
    user_dir = tmp_path / "xdg-config" / "hookbus"
    user_dir.mkdir(parents=True)
    (user_dir / "mine.py").write_text(GOOD)
    (user_dir / "config.toml").write_text('enable = ["mine:shell"]\n')
    proc = hookbus_inproc(project, "install", "--host", "grok", "--scope", "user",
                       env={"GROK_HOME": str(grok_home)})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert sorted(grok_hooks(grok_home / "hooks/hookbus.json")) == ["pre_tool_use"]
    assert not (project / ".grok").exists()


def test_the_installed_command_denies_in_groks_form(project: Path) -> None:
    """The command as written, run as Grok runs it: ``{"decision": "deny"}``, exit 0."""
    assert hookbus_inproc(project, "install", "--host", "grok").returncode == 0
    (group,) = grok_hooks(project / ".grok/hooks/hookbus.json")["pre_tool_use"]
    done = run_as_grok(group["hooks"][0]["command"], dangerous(project), project)  # type: ignore[index]
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"decision": "deny", "reason": "not that (grok)"}


@pytest.mark.parametrize("guarded", [True, False])
def test_a_commands_fallback_answers_in_groks_form(guarded: bool) -> None:
    """Should Python be gone, the fallback answers exit 0: Grok's deny when a fail-closed
    handler wants the event (a crash would fail open), else nothing."""
    gone = sys.executable + "-gone"
    command = manifest.manifest.command(sys.executable, "pre_tool_use", 15, guarded=guarded)
    command = command.replace(sys.executable, gone)
    done = subprocess.run(["sh", "-c", command], input="{}", capture_output=True,
                          text=True, timeout=30, check=False)  # fmt: skip
    assert done.returncode == 0, done
    if guarded:
        assert json.loads(done.stdout)["decision"] == "deny"
    else:
        assert done.stdout == ""


# -- a Claude install, which Grok runs too ---------------------------------------------


@pytest.fixture
def one_config(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project's configuration for installs of every scope and for the hooks."""
    monkeypatch.setenv("HOOKBUS_CONFIG", str(project / ".hookbus.toml"))
    return project


def claude_command(project: Path, scope: str) -> str:
    proc = hookbus_inproc(project, "install", "--host", "claude", "--scope", scope)
    assert proc.returncode == 0, proc.stderr
    folder = Path(os.environ["HOME"]) if scope == "user" else project
    settings = json.loads((folder / ".claude/settings.json").read_text())
    command: str = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    return command


@pytest.mark.parametrize("scope", ["project", "user"])
def test_a_claude_install_alone_answers_grok_in_groks_form(one_config: Path, scope: str) -> None:
    """Without a Grok install, the Claude command Grok runs handles the event as Grok's:
    Grok's deny (a Claude-shaped one would be ignored), the handler told it is Grok."""
    command = claude_command(one_config, scope)
    done = run_as_grok(command, dangerous(one_config), one_config)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"decision": "deny", "reason": "not that (grok)"}


@pytest.mark.parametrize(
    ("claude_scope", "grok_scope", "aside"),
    [
        ("project", "project", True),  # both behind the folder's trust: Grok runs both
        ("user", "user", True),  # Grok's user hooks always run
        ("project", "user", True),
        # The Claude command may be the user's, which runs in an untrusted folder where
        # the project's Grok file does not: not sure, so it answers too.
        ("user", "project", False),
    ],
)
def test_a_claude_command_stands_aside_only_where_groks_install_surely_runs(
    one_config: Path, claude_scope: str, grok_scope: str, aside: bool
) -> None:
    """With both installs, the Claude command leaves the event to Grok's own install when
    that one surely runs (nothing printed, exit 0); where it cannot be sure, it denies
    itself: handled twice is a nuisance, never handled a hole."""
    project = one_config
    command = claude_command(project, claude_scope)
    proc = hookbus_inproc(project, "install", "--host", "grok", "--scope", grok_scope)
    assert proc.returncode == 0, proc.stderr
    done = run_as_grok(command, dangerous(project), project)
    assert done.returncode == 0, done.stderr
    if aside:
        assert done.stdout == ""
    else:
        assert json.loads(done.stdout)["decision"] == "deny"
