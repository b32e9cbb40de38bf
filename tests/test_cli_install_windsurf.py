"""``hookbus install --host windsurf``: Windsurf's flat ``hooks.json`` written with no
matcher and no timeout field, the user's own entries kept, the file given back byte for
byte, and the installed command blocking by exit code as Windsurf reads it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import client_call, hookbus_inproc

from hookbus.hosts.windsurf import manifest

GUARDS = """
import hookbus

@hookbus.handler("before-tool", tools="shell", fail_closed=True, timeout=5)
def shell(event):
    if "rm -rf /" in (event.tool.command or ""):
        return hookbus.Reply.deny("not that")
    return None

@hookbus.handler("stop")
def turn(event): ...
"""
#: A user's own Windsurf hook, as the vendor page shows one.
MINE = {"command": "python3 /Users/me/guard.py", "show_output": True}
GOLDEN = Path(__file__).parent / "golden" / "windsurf"


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "hooks_mod.py").write_text(GUARDS)
    (root / ".hookbus.toml").write_text('enable = ["hooks_mod:shell", "hooks_mod:turn"]\n')
    return root


def hooks(project: Path) -> dict[str, Any]:
    return json.loads((project / ".windsurf" / "hooks.json").read_text())["hooks"]  # type: ignore[no-any-return]


def test_install_writes_windsurfs_flat_entries(project: Path) -> None:
    """Only the events whose operation a handler wants (a shell guard: pre_run_command),
    flat entries of ``command`` (with hookbus's own ``--timeout``) and ``show_output``
    where it applies; no matcher, type or timeout field; verify is clean."""
    done = hookbus_inproc(project, "install", "--host", "windsurf")
    assert done.returncode == 0, done.stderr
    written = hooks(project)
    assert list(written) == ["pre_run_command", "post_cascade_response"]
    (guard,) = written["pre_run_command"]
    assert set(guard) == {"command", "show_output"} and guard["show_output"] is True
    assert client_call("windsurf", "pre_run_command", 10) in guard["command"]
    (stop,) = written["post_cascade_response"]
    assert set(stop) == {"command"}  # show_output "does not apply" to this hook
    verify = hookbus_inproc(project, "verify", "--host", "windsurf")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_install_install_uninstall_leaves_the_users_file_byte_for_byte(project: Path) -> None:
    """Two installs (the second with fewer handlers) keep the user's own entry first;
    uninstall gives their ``hooks.json`` back exactly."""
    original = ('{\n  "hooks": {\n    "pre_run_command": [' + json.dumps(MINE) + "]\n  },\n"
                '  "note": "team policy"\n}\n').encode()  # fmt: skip
    path = project / ".windsurf" / "hooks.json"
    path.parent.mkdir()
    path.write_bytes(original)
    assert hookbus_inproc(project, "install", "--host", "windsurf").returncode == 0
    assert hooks(project)["pre_run_command"][0] == MINE
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:shell"]\n')
    assert hookbus_inproc(project, "install", "--host", "windsurf").returncode == 0
    once = path.read_bytes()
    again = hookbus_inproc(project, "install", "--host", "windsurf")
    assert again.returncode == 0 and "already up to date" in again.stdout
    assert path.read_bytes() == once
    assert list(hooks(project)) == ["pre_run_command"]
    assert hooks(project)["pre_run_command"][0] == MINE
    assert json.loads(path.read_text())["note"] == "team policy"
    proc = hookbus_inproc(project, "uninstall", "--host", "windsurf")
    assert proc.returncode == 0, proc.stderr
    assert path.read_bytes() == original


def test_a_file_hookbus_created_is_removed_on_uninstall(project: Path) -> None:
    """With no hooks.json before, uninstall removes the one install wrote."""
    assert hookbus_inproc(project, "install", "--host", "windsurf").returncode == 0
    assert hookbus_inproc(project, "uninstall", "--host", "windsurf").returncode == 0
    assert not (project / ".windsurf" / "hooks.json").exists()


def test_verify_reports_drift(project: Path) -> None:
    """An entry of ours removed by hand, or one no handler wants any more, is drift
    that verify names by event."""
    assert hookbus_inproc(project, "install", "--host", "windsurf").returncode == 0
    path = project / ".windsurf" / "hooks.json"
    document = json.loads(path.read_text())
    del document["hooks"]["post_cascade_response"]
    path.write_text(json.dumps(document))
    verify = hookbus_inproc(project, "verify", "--host", "windsurf")
    assert verify.returncode != 0
    assert "post_cascade_response: missing" in verify.stdout + verify.stderr
    assert hookbus_inproc(project, "install", "--host", "windsurf").returncode == 0
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:turn"]\n')
    verify = hookbus_inproc(project, "verify", "--host", "windsurf")
    assert "pre_run_command: not registered" in verify.stdout + verify.stderr


def test_the_installed_command_blocks_with_exit_2(project: Path) -> None:
    """The command as written, run as Windsurf runs it (``bash -c``, the payload on
    stdin): exit 2 with the reason on stderr for the dangerous command, exit 0 and
    nothing printed for a harmless one."""
    assert hookbus_inproc(project, "install", "--host", "windsurf").returncode == 0
    command = hooks(project)["pre_run_command"][0]["command"]
    payload = json.loads((GOLDEN / "pre_run_command.json").read_text())
    for line, code, stderr in (("rm -rf /", 2, "not that\n"), ("ls", 0, "")):
        payload["tool_info"] = {"command_line": line, "cwd": str(project)}
        done = subprocess.run(["bash", "-c", command], input=json.dumps(payload), cwd=project,
                              capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
        assert (done.returncode, done.stdout, done.stderr) == (code, "", stderr)


@pytest.mark.parametrize("guarded", [True, False])
def test_a_commands_fallback_blocks_only_for_a_guard(guarded: bool) -> None:
    """Should Python be gone, the fallback answers itself: exit 2 with a reason when a
    fail-closed handler wants the event (any other code would let the command run),
    else exit 0 and nothing."""
    gone = sys.executable + "-gone"
    command = manifest.manifest.command(sys.executable, "pre_run_command", 15, guarded=guarded)
    command = command.replace(sys.executable, gone)
    done = subprocess.run(["bash", "-c", command], input="{}", capture_output=True,
                          text=True, timeout=30, check=False)  # fmt: skip
    assert done.returncode == (2 if guarded else 0), done
    assert ("hookbus could not run" in done.stderr) == guarded
    assert done.stdout == ""


def test_user_scope_is_the_codeium_folder(tmp_path: Path) -> None:
    """``--scope user`` is ``~/.codeium/windsurf/hooks.json``; the project's is the
    workspace's ``.windsurf/hooks.json``."""
    assert manifest.hooks_path("user") == os.path.expanduser("~/.codeium/windsurf/hooks.json")
    assert manifest.hooks_path("project", str(tmp_path)) == str(tmp_path / ".windsurf/hooks.json")


def test_a_hooks_value_that_is_not_a_list_is_refused(project: Path) -> None:
    """An event holding something other than a list of entries is refused, untouched."""
    path = project / ".windsurf" / "hooks.json"
    path.parent.mkdir()
    path.write_text('{"hooks": {"pre_run_command": {"command": "x"}}}')
    done = hookbus_inproc(project, "install", "--host", "windsurf")
    assert done.returncode == 1
    assert path.read_text() == '{"hooks": {"pre_run_command": {"command": "x"}}}'
