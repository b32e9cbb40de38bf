"""VS Code runs ``.claude/settings.json`` and Copilot's ``.github/hooks/*.json`` as well
as its own hooks: a Claude or Copilot command that gets VS Code's payload answers it as
VS Code, or stands aside for hookbus's VS Code install of the event; and the VS Code
command, run by Copilot CLI, does the same for Copilot's install."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hookbus
from hookbus.hosts import HOSTS
from hookbus.hosts.shared.native_install import stands_aside, vscode_handles
from hookbus.local import project_trust

GOLDEN = Path(__file__).parent / "golden"
MAIN = str(Path(hookbus.__file__).with_name("__main__.py"))
#: The shape ``hookbus install --host HOST`` writes (absolute form), with real paths.
COMMAND = (f"if [ -x {sys.executable} ] && [ -f {MAIN} ]; then {sys.executable} -P {MAIN} run "
           "--host {host} --event {event} --timeout 10; s=$?; [ $s -ne 1 ] && [ $s -lt 126 ] "
           "&& exit $s; fi; exit 0")  # fmt: skip
DENY_HANDLER = """
import hookbus

@hookbus.handler("before-tool", tools="shell")
def no(event):
    return hookbus.Reply.deny(f"no from {event.host}")
"""


def install(folder: Path, host: str, event: str, **extra: object) -> Path:
    name, key = ("hookbus-vscode.json", "command") if host == "vscode" else ("hookbus.json", "bash")
    path = folder / ".github" / "hooks" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    entry = {"type": "command", key: COMMAND.format(host=host, event=event), **extra}
    path.write_text(json.dumps({"hooks": {event: [entry]}}))
    project_trust.record_hook_file(str(path))  # as install does: only those bytes count
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "proj" / ".git").mkdir(parents=True)  # the project search stops here
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "proj"


def test_the_vscode_file_of_the_event_is_found(project: Path, tmp_path: Path) -> None:
    """hookbus's VS Code command for the event, in the project's ``.github/hooks`` or the
    user's ``~/.copilot/hooks``; whatever the tool, since VS Code ignores matchers."""
    path = install(project, "vscode", "PreToolUse", matcher="^(?:view)$")
    assert vscode_handles("PreToolUse", str(project), {}) == str(path)
    assert vscode_handles("Stop", str(project), {}) is None
    made = install(tmp_path / "made", "vscode", "Stop")
    user = tmp_path / "home" / ".copilot" / "hooks" / made.name
    user.parent.mkdir(parents=True)
    made.rename(user)
    assert vscode_handles("Stop", str(project), {}) == str(user)


@pytest.mark.parametrize(
    "extra",
    [{"linux": "./other.sh"}, {"osx": "./other.sh"}, {"type": "prompt"}],
)
def test_an_entry_vscode_would_not_run_as_written_is_not_relied_on(
    project: Path, extra: dict[str, object]
) -> None:
    """An OS override replaces ``command``; a non-command entry does not run hookbus."""
    install(project, "vscode", "PreToolUse", **extra)
    assert vscode_handles("PreToolUse", str(project), {}) is None


def test_only_another_hosts_command_stands_aside_for_vscode(project: Path) -> None:
    """Claude's and Copilot's commands stand aside for the VS Code install; the VS Code
    command never does for its own payload."""
    install(project, "vscode", "PreToolUse")
    same = {"native": "PreToolUse", "tool": "run_in_terminal",
            "payload": {"cwd": str(project)}, "environ": {}}  # fmt: skip
    vscode = HOSTS["vscode"]
    assert stands_aside(HOSTS["claude"], vscode, **same)
    assert stands_aside(HOSTS["copilot"], vscode, **same)
    assert not stands_aside(vscode, vscode, **same)


def run(project: Path, host: str, payload: dict[str, object], *args: str
        ) -> subprocess.CompletedProcess[bytes]:  # fmt: skip
    (project / "guards_no.py").write_text(DENY_HANDLER)
    config = project / "no.toml"
    config.write_text('python_path = ["."]\nenable = ["guards_no:no"]\n')
    env = {**os.environ, "HOOKBUS_CONFIG": str(config), "HOOKBUS_STATE_DIR": str(project / "st"),
           "COPILOT_HOME": "/nonexistent/copilot-home"}  # fmt: skip
    env.pop("COPILOT_PROJECT_DIR", None)
    return subprocess.run([sys.executable, "-m", "hookbus", "run", "--host", host, *args],
                          input=json.dumps({**payload, "cwd": str(project)}).encode(),
                          capture_output=True, cwd=project, env=env, timeout=60,
                          check=False)  # fmt: skip


VSCODE_PAYLOAD = json.loads((GOLDEN / "vscode/PreToolUse.run_in_terminal.json").read_text())
VSCODE_DENY = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                      "permissionDecisionReason": "no from vscode"}}  # fmt: skip


@pytest.mark.parametrize(
    ("host", "args"),
    [("claude", ("--event", "PreToolUse")), ("copilot", ("--event", "preToolUse"))],
)
def test_a_vscode_payload_in_another_hosts_command(
    project: Path, host: str, args: tuple[str, ...]
) -> None:
    """Claude's or Copilot's command given VS Code's payload answers as VS Code (its deny,
    host ``vscode``); with the VS Code install of the event beside it, it stands aside."""
    done = run(project, host, VSCODE_PAYLOAD, *args)
    assert (done.returncode, json.loads(done.stdout)) == (0, VSCODE_DENY), done.stderr
    install(project, "vscode", "PreToolUse")
    done = run(project, host, VSCODE_PAYLOAD, *args)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_a_copilot_payload_in_the_vscode_command(project: Path) -> None:
    """Copilot CLI reads ``.github/hooks`` too: its PascalCase payload in the VS Code
    command is answered as Copilot (its flat deny, with Claude's form under it, as any
    PascalCase event of Copilot's is), or left to Copilot's own install."""
    payload = json.loads((GOLDEN / "copilot/PreToolUse.bash.pascal.json").read_text())
    done = run(project, "vscode", payload, "--event", "PreToolUse")
    assert done.returncode == 0, done.stderr
    deny = {"permissionDecision": "deny", "permissionDecisionReason": "no from copilot"}
    assert json.loads(done.stdout) == {
        **deny, "hookSpecificOutput": {"hookEventName": "PreToolUse", **deny}}  # fmt: skip
    install(project, "copilot", "preToolUse")
    done = run(project, "vscode", payload, "--event", "PreToolUse")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
