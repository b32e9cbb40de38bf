"""``hookbus install --host cursor``: hookbus's entries merged into ``.cursor/hooks.json``
beside the user's, only keys Cursor documents, uninstall leaving the file byte for byte,
and Cursor + Claude installs together handling each event once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import client_call, hookbus_inproc

from hookbus.hosts import HOSTS
from hookbus.hosts.cursor import manifest

GOLDEN = Path(__file__).parent / "golden" / "cursor"

#: cursor.com/docs/hooks (2026-08): the events of its table, the keys of the file and of
#: an entry. One key outside these disables the whole file (mulmoterminal#2064).
DOCUMENTED_EVENTS = {
    "sessionStart", "sessionEnd", "beforeSubmitPrompt", "preToolUse", "postToolUse",
    "postToolUseFailure", "subagentStart", "subagentStop", "beforeShellExecution",
    "afterShellExecution", "beforeMCPExecution", "afterMCPExecution", "beforeReadFile",
    "afterFileEdit", "preCompact", "stop", "afterAgentResponse", "afterAgentThought",
    "beforeTabFileRead", "afterTabFileEdit", "workspaceOpen",
}  # fmt: skip
DOCUMENTED_FILE_KEYS = {"version", "hooks"}
DOCUMENTED_ENTRY_KEYS = {"command", "type", "timeout", "loop_limit", "failClosed", "matcher",
                         "prompt", "model"}  # fmt: skip

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
#: A user's own Cursor hooks file, as a person writes it.
THEIRS = """{
  "version": 1,
  "hooks": {
    "afterFileEdit": [{ "command": "./scripts/format.sh" }],
    "beforeShellExecution": [{ "command": "./scripts/audit.sh", "timeout": 10 }]
  }
}
"""


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """A home of the test's own: the user's ~/.cursor/hooks.json is looked for there."""
    (tmp_path / "home").mkdir()
    return {"HOME": str(tmp_path / "home")}


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path) -> Path:
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "hooks_mod.py").write_text(GOOD)
    (root / ".hookbus.toml").write_text('enable = ["hooks_mod:shell", "hooks_mod:bye"]\n')
    return root


def test_install_writes_only_keys_cursor_documents(project: Path, home: dict[str, str]) -> None:
    """version 1, documented camelCase events, entries of documented keys (``command``,
    ``type``, ``timeout`` in whole seconds, no matcher), ``--event`` in each command."""
    proc = hookbus_inproc(project, "install", "--host", "cursor", env=home)
    assert proc.returncode == 0, proc.stderr
    assert "trusted workspace" in proc.stdout
    written = json.loads((project / ".cursor/hooks.json").read_text())
    assert set(written) <= DOCUMENTED_FILE_KEYS and written["version"] == 1
    assert set(written["hooks"]) <= DOCUMENTED_EVENTS
    assert sorted(written["hooks"]) == ["preToolUse", "sessionEnd"]
    for entries in written["hooks"].values():
        for entry in entries:
            assert set(entry) <= DOCUMENTED_ENTRY_KEYS, entry
    (entry,) = written["hooks"]["preToolUse"]
    assert (entry["type"], entry["timeout"]) == ("command", 10)  # the 5 s budget, plus 5
    assert client_call("cursor", "preToolUse") in entry["command"]
    verify = hookbus_inproc(project, "verify", "--host", "cursor", env=home)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_claudes_hooks_are_mentioned_only_where_hookbus_is_installed_for_claude(
    project: Path, home: dict[str, str]
) -> None:
    """Cursor's install speaks of Claude's settings only once hookbus's Claude entries are
    there to speak of, naming the file."""
    alone = hookbus_inproc(project, "install", "--host", "cursor", env=home)
    assert alone.returncode == 0, alone.stderr
    assert "Claude" not in alone.stdout + alone.stderr
    assert hookbus_inproc(project, "install", "--host", "claude", env=home).returncode == 0
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:shell"]\n')
    both = hookbus_inproc(project, "install", "--host", "cursor", env=home)
    assert f"hooks of Claude's settings ({project / '.claude' / 'settings.json'})" in both.stdout


def test_every_event_the_manifest_can_write_is_documented() -> None:
    """Whatever handlers subscribe to, the manifest's events are the docs' own."""
    assert set(manifest.manifest.events) <= DOCUMENTED_EVENTS


def test_install_install_uninstall_keeps_the_users_file_byte_for_byte(
    project: Path, home: dict[str, str]
) -> None:
    """The user's entries are kept beside ours; a second install is a no-op; uninstall
    gives the user's file back exactly."""
    theirs = project / ".cursor/hooks.json"
    theirs.parent.mkdir()
    theirs.write_text(THEIRS)
    assert hookbus_inproc(project, "install", "--host", "cursor", env=home).returncode == 0
    once = theirs.read_bytes()
    merged = json.loads(once)
    assert merged["hooks"]["afterFileEdit"] == [{"command": "./scripts/format.sh"}]
    assert merged["hooks"]["beforeShellExecution"][0]["command"] == "./scripts/audit.sh"
    second = hookbus_inproc(project, "install", "--host", "cursor", env=home)
    assert second.returncode == 0 and "already up to date" in second.stdout
    assert theirs.read_bytes() == once
    proc = hookbus_inproc(project, "uninstall", "--host", "cursor", env=home)
    assert proc.returncode == 0, proc.stderr
    assert theirs.read_text() == THEIRS


def test_verify_reports_drift(project: Path, home: dict[str, str]) -> None:
    """An entry of ours edited by hand, or removed, is drift that verify reports."""
    assert hookbus_inproc(project, "install", "--host", "cursor", env=home).returncode == 0
    path = project / ".cursor/hooks.json"
    document = json.loads(path.read_text())
    document["hooks"]["preToolUse"][0]["timeout"] = 99
    path.write_text(json.dumps(document))
    verify = hookbus_inproc(project, "verify", "--host", "cursor", env=home)
    assert verify.returncode != 0 and "preToolUse" in verify.stdout + verify.stderr
    del document["hooks"]["sessionEnd"]
    path.write_text(json.dumps(document))
    verify = hookbus_inproc(project, "verify", "--host", "cursor", env=home)
    assert verify.returncode != 0 and "sessionEnd" in verify.stdout + verify.stderr


def test_user_scope_writes_the_users_cursor_folder(project: Path, home: dict[str, str]) -> None:
    """--scope user writes ``~/.cursor/hooks.json``."""
    user_dir = Path(os.environ["XDG_CONFIG_HOME"]) / "hookbus"
    user_dir.mkdir(parents=True)
    (user_dir / "mine.py").write_text(GOOD)
    (user_dir / "config.toml").write_text('enable = ["mine:shell"]\n')
    proc = hookbus_inproc(project, "install", "--host", "cursor", "--scope", "user", env=home)
    assert proc.returncode == 0, proc.stderr
    written = json.loads((Path(home["HOME"]) / ".cursor/hooks.json").read_text())
    assert sorted(written["hooks"]) == ["preToolUse"]
    assert not (project / ".cursor").exists()


def run_command(command: str, payload: dict[str, object], cwd: Path, env: dict[str, str]) -> (
        subprocess.CompletedProcess[str]):  # fmt: skip
    return subprocess.run(["bash", "-c", command], input=json.dumps(payload), cwd=cwd,
                          capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, **env})  # fmt: skip


def test_the_installed_command_denies_in_cursors_form(project: Path, home: dict[str, str]) -> None:
    """The command as written, run as Cursor runs it (the payload on stdin): the guard's
    permission deny, exit 0."""
    assert hookbus_inproc(project, "install", "--host", "cursor", env=home).returncode == 0
    hooks = json.loads((project / ".cursor/hooks.json").read_text())["hooks"]
    payload = json.loads((GOLDEN / "preToolUse.Shell.json").read_text())
    payload["tool_input"]["command"], payload["workspace_roots"] = "rm -rf /", [str(project)]
    done = run_command(hooks["preToolUse"][0]["command"], payload, project, home)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"permission": "deny", "user_message": "not that",
                                       "agent_message": "not that"}  # fmt: skip


@pytest.mark.parametrize("guarded", [True, False])
def test_a_commands_fallback_answers_valid_json(guarded: bool) -> None:
    """Should Python be gone, the fallback still answers one JSON object, exit 0: the
    deny when a fail-closed handler wants the event, else the no-opinion."""
    gone = sys.executable + "-gone"
    command = manifest.manifest.command(sys.executable, "preToolUse", 15, guarded=guarded)
    done = subprocess.run(["bash", "-c", command.replace(sys.executable, gone)], input="{}",
                          capture_output=True, text=True, timeout=30, check=False)  # fmt: skip
    assert done.returncode == 0, done
    assert json.loads(done.stdout) == ({"permission": "deny", "user_message": "hookbus could not "
                                        "run, and a fail-closed handler wants this event",
                                        "agent_message": "hookbus could not run, and a "
                                        "fail-closed handler wants this event"}
                                       if guarded else {})  # fmt: skip


COUNTING = """
import os
import hookbus

def count(event):
    with open(os.path.join(os.environ["RUNS_DIR"], "runs.txt"), "a") as f:
        f.write(f"{event.native}\\n")

@hookbus.handler("before-tool", tools="shell")
def shell(event):
    count(event)
    return hookbus.Reply.deny("counted")

@hookbus.handler("stop")
def stop(event):
    count(event)

@hookbus.handler("subagent-start")
def child(event):
    count(event)
"""
#: Cursor's event, the Claude event whose .claude/settings.json hook Cursor runs for it,
#: and the golden payload.
PAIRS = [("preToolUse", "PreToolUse", "preToolUse.Shell"), ("stop", "Stop", "stop"),
         ("subagentStart", "SubagentStart", "subagentStart")]  # fmt: skip


def test_cursor_and_claude_installs_together_handle_each_event_once(
    project: Path, home: dict[str, str], tmp_path: Path
) -> None:
    """With hookbus installed for Cursor and for Claude, Cursor runs both files' hooks
    for an event; only Cursor's own command handles it, the Claude command answers
    Cursor's no-opinion. Without Cursor's install, the Claude command handles it."""
    (project / "hooks_mod.py").write_text(COUNTING)
    # A budget far from what a loaded machine needs: the count, not the clock, is tested.
    (project / ".hookbus.toml").write_text(
        'budget = 30\nenable = ["hooks_mod:shell", "hooks_mod:stop", "hooks_mod:child"]\n'
    )
    env = {**home, "RUNS_DIR": str(tmp_path), "CURSOR_PROJECT_DIR": str(project)}
    for host in ("claude", "cursor"):
        proc = hookbus_inproc(project, "install", "--host", host, env=env)
        assert proc.returncode == 0, proc.stderr
    claude = json.loads((project / ".claude/settings.json").read_text())["hooks"]
    ours = json.loads((project / ".cursor/hooks.json").read_text())["hooks"]
    runs = tmp_path / "runs.txt"
    for native, pascal, golden in PAIRS:
        payload = json.loads((GOLDEN / f"{golden}.json").read_text())
        payload["workspace_roots"] = [str(project)]
        runs.unlink(missing_ok=True)
        done = run_command(claude[pascal][0]["hooks"][0]["command"], payload, project, env)
        quiet = HOSTS["cursor"].no_opinion_for(native).stdout.decode()
        assert (done.returncode, done.stdout) == (0, quiet), (native, done)
        done = run_command(ours[native][0]["command"], payload, project, env)
        assert done.returncode == 0, (native, done)
        assert runs.read_text() == f"{native}\n", native
    assert hookbus_inproc(project, "uninstall", "--host", "cursor", env=env).returncode == 0
    runs.unlink()
    payload = json.loads((GOLDEN / "preToolUse.Shell.json").read_text())
    done = run_command(claude["PreToolUse"][0]["hooks"][0]["command"], payload, project, env)
    assert json.loads(done.stdout)["permission"] == "deny"
    assert runs.read_text() == "preToolUse\n"
