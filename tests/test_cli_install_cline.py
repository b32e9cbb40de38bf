"""``hookbus install --host cline``: one owned executable per subscribed event in
``.clinerules/hooks/``, a user's own hook file never touched, and the folder given back
exactly as it was."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from support import hookbus_inproc, snapshot

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
THEIRS = "#!/bin/sh\necho '{}'\n"
GOLDEN = Path(__file__).parent / "golden" / "cline" / "real"


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "hooks_mod.py").write_text(GOOD)
    (root / ".hookbus.toml").write_text('enable = ["hooks_mod:shell", "hooks_mod:bye"]\n')
    return root


def test_install_writes_an_executable_per_subscribed_event(project: Path) -> None:
    """Only the subscribed events get a file; each is executable and marked as hookbus's."""
    result = hookbus_inproc(project, "install", "--host", "cline")
    assert result.returncode == 0, result.stderr
    hooks = project / ".clinerules" / "hooks"
    assert sorted(p.name for p in hooks.iterdir()) == ["PreToolUse", "SessionShutdown"]
    for path in hooks.iterdir():
        assert os.access(path, os.X_OK)
        assert "hookbus-owned-file" in path.read_text()
        assert f"--event {path.name}" in path.read_text()


def test_manifest_prints_each_file_install_would_write_and_writes_nothing(project: Path) -> None:
    """``manifest`` shows a host configured by whole files its files, byte for byte."""
    printed = hookbus_inproc(project, "manifest", "--host", "cline")
    assert printed.returncode == 0, printed.stderr
    assert not (project / ".clinerules").exists()
    hooks = project / ".clinerules" / "hooks"
    assert printed.stdout.startswith(f"# {hooks / 'PreToolUse'} (executable)\n#!/bin/sh\n")
    assert hookbus_inproc(project, "install", "--host", "cline").returncode == 0
    expected = "".join(f"# {hooks / name} (executable)\n{(hooks / name).read_text()}"
                       for name in ("PreToolUse", "SessionShutdown"))  # fmt: skip
    assert printed.stdout == expected


SUBAGENTS = """
import json, os
import hookbus

@hookbus.handler("subagent-start")
def child_started(event):
    with open(os.path.join(event.cwd, "children.log"), "a") as f:
        f.write(json.dumps([event.kind, event.child.id, event.agent.id]) + "\\n")
"""


def test_a_subagent_start_handler_gets_the_subagents_own_task_start_only(
    project: Path,
) -> None:
    """A handler of subagent-start alone installs TaskStart (a subagent runs its parent's
    files); run as Cline runs it, a main task's TaskStart passes it by, the subagent's
    reaches it naming the child and the parent."""
    (project / "subs.py").write_text(SUBAGENTS)
    (project / ".hookbus.toml").write_text('enable = ["subs:child_started"]\n')
    assert hookbus_inproc(project, "install", "--host", "cline").returncode == 0
    hooks = project / ".clinerules" / "hooks"
    assert sorted(p.name for p in hooks.iterdir()) == ["TaskStart"]
    for golden in ("TaskStart", "TaskStart.in-subagent"):
        payload = json.loads((GOLDEN / f"{golden}.json").read_text())
        payload["workspaceRoots"] = [str(project)]
        payload["workspaceInfo"]["rootPath"] = str(project)
        ran = subprocess.run([str(hooks / "TaskStart")], input=json.dumps(payload).encode(),
                             cwd=project, capture_output=True, timeout=60, check=False)  # fmt: skip
        assert (ran.returncode, ran.stdout) == (0, b""), ran.stderr
    child = json.loads((GOLDEN / "TaskStart.in-subagent.json").read_text())
    logged = (project / "children.log").read_text().splitlines()
    assert [json.loads(line) for line in logged] == [
        ["subagent-start", child["agent_id"], child["parent_agent_id"]]
    ]


def test_installed_file_answers_a_real_payload_with_a_cancel(project: Path) -> None:
    """The installed PreToolUse, run as Cline runs it, cancels a refused command."""
    assert hookbus_inproc(project, "install", "--host", "cline").returncode == 0
    payload = json.loads((GOLDEN / "PreToolUse.run_commands.json").read_text())
    payload["tool_call"]["input"] = {"commands": ["rm -rf /"]}
    payload["workspaceRoots"] = [str(project)]  # the project root Cline names
    run = subprocess.run([str(project / ".clinerules" / "hooks" / "PreToolUse")],
                         input=json.dumps(payload).encode(), cwd=project, capture_output=True,
                         timeout=120, check=False)  # fmt: skip
    assert json.loads(run.stdout) == {"cancel": True, "errorMessage": "not that"}


def test_install_install_uninstall_leaves_clinerules_exactly_as_it_was(project: Path) -> None:
    """A user's own hook file stays untouched through two installs and an uninstall, and
    the folder is given back byte for byte."""
    hooks = project / ".clinerules" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "TaskStart").write_text(THEIRS)
    (hooks / "TaskStart").chmod(0o755)
    before = snapshot(project / ".clinerules")
    for _ in range(2):
        assert hookbus_inproc(project, "install", "--host", "cline").returncode == 0
    assert (hooks / "TaskStart").read_text() == THEIRS
    verify = hookbus_inproc(project, "verify", "--host", "cline")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert hookbus_inproc(project, "uninstall", "--host", "cline").returncode == 0
    assert snapshot(project / ".clinerules") == before


def test_uninstall_removes_the_folders_it_created(project: Path) -> None:
    """Without a ``.clinerules`` before install, none is left after uninstall."""
    assert hookbus_inproc(project, "install", "--host", "cline").returncode == 0
    assert hookbus_inproc(project, "uninstall", "--host", "cline").returncode == 0
    assert not (project / ".clinerules").exists()


def test_install_refuses_to_replace_a_users_file_and_writes_nothing(project: Path) -> None:
    """A PreToolUse hookbus did not write is refused, by path, and nothing is written."""
    hooks = project / ".clinerules" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "PreToolUse").write_text(THEIRS)
    result = hookbus_inproc(project, "install", "--host", "cline")
    assert result.returncode == 1
    assert "PreToolUse: not written by hookbus" in result.stderr
    assert sorted(p.name for p in hooks.iterdir()) == ["PreToolUse"]
    assert (hooks / "PreToolUse").read_text() == THEIRS


def test_verify_sees_an_edited_or_missing_file_and_a_stale_one(project: Path) -> None:
    """Drift in owned files: edited, missing, and installed but no longer wanted."""
    assert hookbus_inproc(project, "install", "--host", "cline").returncode == 0
    hooks = project / ".clinerules" / "hooks"
    (hooks / "PreToolUse").write_text((hooks / "PreToolUse").read_text() + "echo x\n")
    (hooks / "SessionShutdown").unlink()
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:bye"]\n')
    verify = hookbus_inproc(project, "verify", "--host", "cline")
    assert verify.returncode == 1
    assert "SessionShutdown: missing" in verify.stdout
    assert "PreToolUse: installed but not wanted" in verify.stdout
    assert hookbus_inproc(project, "install", "--host", "cline").returncode == 0
    assert sorted(p.name for p in hooks.iterdir()) == ["SessionShutdown"]
    assert hookbus_inproc(project, "verify", "--host", "cline").returncode == 0


def test_doctor_sees_the_hook_files_and_their_drift(project: Path) -> None:
    """``hookbus doctor`` reports the owned files as an install, and an edited one as drift."""
    assert hookbus_inproc(project, "install", "--host", "cline").returncode == 0
    hooks = project / ".clinerules" / "hooks"

    def report() -> dict[str, object]:
        proc = hookbus_inproc(project, "doctor", "--json", "--host", "cline")
        data: dict[str, object] = json.loads(proc.stdout)
        return data

    (install,) = [i for i in report()["hosts"][0]["installs"] if i["installed"]]  # type: ignore[index]
    assert sorted(install["events"]) == ["PreToolUse", "SessionShutdown"]
    assert install["drift"] == []
    (hooks / "PreToolUse").write_text((hooks / "PreToolUse").read_text() + "echo x\n")
    (install,) = [i for i in report()["hosts"][0]["installs"] if i["installed"]]  # type: ignore[index]
    assert install["drift"] == [f"{hooks / 'PreToolUse'}: differs from the configuration"]
