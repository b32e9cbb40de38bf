"""``hookbus install --host codex``: Codex's ``hooks.json`` for the project or the user,
the user's own hooks kept, the trust step said, and the file given back byte for byte."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from support import client_call, hookbus_inproc

from hookbus.hosts.codex import manifest

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
#: A user's own hook entry, as a person writes it.
THEIRS = """{
  "hooks": {
    "PreToolUse": [
      {"matcher": "^Bash$", "hooks": [{"type": "command", "command": "python3 ~/audit.py", "timeout": 10}]}
    ]
  }
}
"""
SCHEMAS = Path(__file__).parent / "codex_schemas"


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "hooks_mod.py").write_text(GOOD)
    (root / ".hookbus.toml").write_text('enable = ["hooks_mod:shell", "hooks_mod:bye"]\n')
    return root


def test_install_writes_the_projects_hooks_json_keeping_the_users_entry(project: Path) -> None:
    """Anchored shell matcher, whole-second timeouts (SessionEnd at Codex's 3 s clamp), the
    user's own entry first and untouched, and the note that says to trust them in /hooks."""
    path = project / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text(THEIRS)
    proc = hookbus_inproc(project, "install", "--host", "codex")
    assert proc.returncode == 0, proc.stderr
    assert "/hooks" in proc.stdout and "never approves" in proc.stdout
    assert "this machine's interpreter" in proc.stderr and "--scope local" not in proc.stderr
    hooks = json.loads(path.read_text())["hooks"]
    assert sorted(hooks) == ["PreToolUse", "SessionEnd"]
    theirs, ours = hooks["PreToolUse"]
    assert theirs == json.loads(THEIRS)["hooks"]["PreToolUse"][0]
    assert ours["matcher"] == "^(?:Bash|exec_command|local_shell|shell|shell_command)$"
    assert ours["hooks"][0]["timeout"] == 10  # the default budget, 5 s, plus 5
    assert client_call("codex", "PreToolUse") in ours["hooks"][0]["command"]
    assert hooks["SessionEnd"][0]["hooks"][0]["timeout"] == 3
    assert all(isinstance(g["hooks"][0]["timeout"], int) for gs in hooks.values() for g in gs)
    verify = hookbus_inproc(project, "verify", "--host", "codex")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_install_install_uninstall_restores_the_file_byte_for_byte(project: Path) -> None:
    """Install twice (the second a no-op), uninstall: the user's file, exactly."""
    path = project / ".codex" / "hooks.json"
    path.parent.mkdir()
    path.write_text(THEIRS)
    assert hookbus_inproc(project, "install", "--host", "codex").returncode == 0
    once = path.read_bytes()
    second = hookbus_inproc(project, "install", "--host", "codex")
    assert second.returncode == 0 and "already up to date" in second.stdout
    assert path.read_bytes() == once
    proc = hookbus_inproc(project, "uninstall", "--host", "codex")
    assert proc.returncode == 0, proc.stderr
    assert path.read_text() == THEIRS
    assert not path.with_name("hooks.json.hookbus-backup").exists()


def test_user_scope_writes_codex_home(project: Path, tmp_path: Path) -> None:
    """--scope user writes ``$CODEX_HOME/hooks.json``; Codex has no local scope."""
    home = tmp_path / "codex-home"
    user_dir = tmp_path / "xdg-config" / "hookbus"
    user_dir.mkdir(parents=True)
    (user_dir / "mine.py").write_text(GOOD)
    (user_dir / "config.toml").write_text('enable = ["mine:shell"]\n')
    proc = hookbus_inproc(project, "install", "--host", "codex", "--scope", "user",
                       env={"CODEX_HOME": str(home)})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert sorted(json.loads((home / "hooks.json").read_text())["hooks"]) == ["PreToolUse"]
    assert not (project / ".codex").exists()
    local = hookbus_inproc(project, "install", "--host", "codex", "--scope", "local")
    assert local.returncode != 0 and "no local settings" in local.stderr


def test_the_installed_command_answers_in_codexs_schema(project: Path) -> None:
    """The command as written, run the way Codex runs it (a shell, the payload on stdin):
    the guard's deny, valid for Codex's PreToolUse output schema."""
    assert hookbus_inproc(project, "install", "--host", "codex").returncode == 0
    hooks = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]
    command = hooks["PreToolUse"][0]["hooks"][0]["command"]
    payload = json.loads(
        (Path(__file__).parent / "golden/codex/real/PreToolUse.Bash.json").read_text()
    )
    payload["tool_input"]["command"], payload["cwd"] = "rm -rf /", str(project)
    done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), cwd=project,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["hookSpecificOutput"]["permissionDecision"] == "deny"
    schema = json.loads((SCHEMAS / "pre-tool-use.command.output.schema.json").read_text())
    jsonschema.validate(reply, schema)


def test_a_guarded_commands_fallback_is_a_valid_codex_deny() -> None:
    """Should Python be gone, the fail-closed fallback still prints a deny Codex accepts."""
    gone = sys.executable + "-gone"
    command = manifest.command(sys.executable, "PreToolUse", 15, guarded=True)
    command = command.replace(sys.executable, gone)
    done = subprocess.run(["/bin/sh", "-c", command], input="{}", capture_output=True,
                          text=True, timeout=30, check=False)  # fmt: skip
    reply = json.loads(done.stdout)
    assert done.returncode == 0 and reply["hookSpecificOutput"]["permissionDecision"] == "deny"
    schema = json.loads((SCHEMAS / "pre-tool-use.command.output.schema.json").read_text())
    jsonschema.validate(reply, schema)
    open_command = manifest.command(sys.executable, "PreToolUse", 15).replace(sys.executable, gone)
    done = subprocess.run(["/bin/sh", "-c", open_command], input="{}", capture_output=True,
                          text=True, timeout=30, check=False)  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "")


def test_matchers_are_anchored_at_both_ends() -> None:
    """Right whether Codex anchors a regex or not: names exactly, MCP servers by prefix."""
    assert manifest.manifest.matcher(None) is None
    tools = {"names": ["apply_patch"], "prefixes": ["mcp__github__"], "unknown": False}
    assert manifest.manifest.matcher(tools) == r"^(?:apply_patch)$|^mcp__github__.*$"  # type: ignore[arg-type]
