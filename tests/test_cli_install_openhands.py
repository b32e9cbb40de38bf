"""``hookbus install --host openhands``: hookbus's entries merged into the one
``.openhands/hooks.json`` OpenHands reads, in the form and the key spelling the file
already has, the user's entries kept and given back byte for byte; the installed command
run as OpenHands runs it (``shell=True`` in the working dir, its variables set)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import HOST_GUARD, client_call, hookbus_inproc

from hookbus.hosts.openhands import manifest

GOOD = HOST_GUARD
#: A user's own hooks file in OpenHands' native form, and in Claude's wrapper.
FLAT = """{
  "pre_tool_use": [
    {"matcher": "terminal", "hooks": [{"type": "command", "command": ".openhands/hooks/block.sh", "timeout": 10}]}
  ]
}
"""
WRAPPED = """{
  "hooks": {
    "PreToolUse": [{"matcher": "terminal", "hooks": [{"type": "command", "command": "audit.sh"}]}]
  }
}
"""
GOLDEN = Path(__file__).parent / "golden" / "openhands"


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    (root / "hooks_mod.py").write_text(GOOD)
    (root / ".hookbus.toml").write_text('enable = ["hooks_mod:shell", "hooks_mod:bye"]\n')
    return root


def hooks_file(project: Path, text: str | None = None) -> Path:
    path = project / ".openhands" / "hooks.json"
    if text is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return path


def test_install_writes_openhands_native_shape(project: Path) -> None:
    """A new file: flat snake_case keys, a full-match matcher, whole-second timeouts,
    ``--event`` with the PascalCase event, and the note that the file shadows the user's."""
    proc = hookbus_inproc(project, "install", "--host", "openhands")
    assert proc.returncode == 0, proc.stderr
    assert "never both" in proc.stdout
    written = json.loads(hooks_file(project).read_text())
    assert sorted(written) == ["pre_tool_use", "session_end"]
    (group,) = written["pre_tool_use"]
    assert group["matcher"] == "^(?:terminal)$"
    (entry,) = group["hooks"]
    assert (entry["type"], entry["timeout"]) == ("command", 10)
    assert client_call("openhands", "PreToolUse") in entry["command"]
    assert hookbus_inproc(project, "verify", "--host", "openhands").returncode == 0


@pytest.mark.parametrize("theirs", [FLAT, WRAPPED], ids=["flat", "wrapped"])
def test_install_install_uninstall_keeps_the_users_file_byte_for_byte(
    project: Path, theirs: str
) -> None:
    """Into the user's own file, flat or wrapped: their entry first and untouched, ours
    under the key the file already spells the event with (never a twin, which would make
    OpenHands refuse the file); a second install is a no-op; uninstall gives their bytes
    back."""
    path = hooks_file(project, theirs)
    assert hookbus_inproc(project, "install", "--host", "openhands").returncode == 0
    once = path.read_bytes()
    document = json.loads(once)
    block = document["hooks"] if theirs is WRAPPED else document
    key = "PreToolUse" if theirs is WRAPPED else "pre_tool_use"
    assert sorted(block) == sorted([key, "session_end"])
    assert block[key][0] == json.loads(theirs).get("hooks", json.loads(theirs))[key][0]
    assert client_call("openhands") in block[key][1]["hooks"][0]["command"]
    second = hookbus_inproc(project, "install", "--host", "openhands")
    assert second.returncode == 0 and "already up to date" in second.stdout
    assert path.read_bytes() == once
    assert hookbus_inproc(project, "uninstall", "--host", "openhands").returncode == 0
    assert path.read_text() == theirs


def test_a_file_with_an_event_in_both_spellings_is_refused(project: Path) -> None:
    """``PreToolUse`` beside ``pre_tool_use`` is a file OpenHands rejects: hookbus says so
    and writes nothing."""
    twins = '{"PreToolUse": [], "pre_tool_use": []}\n'
    path = hooks_file(project, twins)
    proc = hookbus_inproc(project, "install", "--host", "openhands")
    assert proc.returncode != 0
    assert "two spellings" in proc.stderr
    assert path.read_text() == twins


def test_verify_reports_an_entry_edited_since_install(project: Path) -> None:
    """A timeout changed by hand is drift: verify says what and fails."""
    assert hookbus_inproc(project, "install", "--host", "openhands").returncode == 0
    path = hooks_file(project)
    document = json.loads(path.read_text())
    document["pre_tool_use"][0]["hooks"][0]["timeout"] = 3
    path.write_text(json.dumps(document))
    verify = hookbus_inproc(project, "verify", "--host", "openhands")
    assert verify.returncode != 0
    assert "changed: pre_tool_use: timeout 3, expected 10" in verify.stdout


def test_the_installed_command_denies_as_openhands_runs_it(project: Path) -> None:
    """The command as written, run as ``HookExecutor.execute`` runs it: a JSON deny on
    stdout, exit 0 (OpenHands blocks on it whatever the exit code)."""
    assert hookbus_inproc(project, "install", "--host", "openhands").returncode == 0
    command = json.loads(hooks_file(project).read_text())["pre_tool_use"][0]["hooks"][0]["command"]
    payload = json.loads((GOLDEN / "PreToolUse.terminal.json").read_text())
    payload["tool_input"]["command"], payload["working_dir"] = "rm -rf /", str(project)
    env = {**os.environ, "OPENHANDS_PROJECT_DIR": str(project), "OPENHANDS_SESSION_ID": "s",
           "OPENHANDS_EVENT_TYPE": "PreToolUse", "OPENHANDS_TOOL_NAME": "terminal"}  # fmt: skip
    done = subprocess.run(command, shell=True, cwd=project, env=env, input=json.dumps(payload),
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"decision": "deny", "reason": "not that (openhands)"}


@pytest.mark.parametrize("guarded", [True, False])
def test_a_commands_fallback_answers_in_openhands_form(guarded: bool) -> None:
    """Should Python be gone, the fallback answers exit 0: the JSON deny when a
    fail-closed handler wants the event (a crash would fail open), else nothing."""
    gone = sys.executable + "-gone"
    command = manifest.manifest.command(sys.executable, "PreToolUse", 15, guarded=guarded)
    command = command.replace(sys.executable, gone)
    done = subprocess.run(command, shell=True, input="{}", capture_output=True, text=True,
                          timeout=30, check=False)  # fmt: skip
    assert done.returncode == 0, done
    if guarded:
        assert json.loads(done.stdout)["decision"] == "deny"
    else:
        assert done.stdout == ""
