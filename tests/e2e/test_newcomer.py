"""A newcomer's first hour, as one test: install into Claude Code, a typo, ``doctor``, the
fix, ``try``, the real Claude offline, ``uninstall``.

Everything is driven as a user would, through the real CLI in a throwaway HOME and
project, and the real Claude Code against the fake Anthropic API of
``hookbus.testing.fake_models`` (docs/testing.md tells how). The deny is proven by two
control runs: the command the guard allows runs under the same hooks, and once hookbus is
uninstalled the very command it refused runs.

It holds what a newcomer relies on: exit codes, that doctor's first line is the typo's,
at its file and line, with the name meant; that the deny says where and what fixes it;
the bytes of the user's settings after a changed reinstall and uninstall.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hookbus.testing.fake_models import Scenario, Turn

from .harness import INSTALL_TIMEOUT, RUN_TIMEOUT, Claude, Run, Workspace

#: The offline example docs/testing.md shows.
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "offline-claude"

pytestmark = [
    pytest.mark.e2e,
    # Trust as a user meets it: install trusts the project, an edit lapses the trust, and
    # the user trusts their own edit again (``hookbus trust``).
    pytest.mark.untrusted_projects,
    # Three runs of Claude and ten of the CLI, on a loaded machine.
    pytest.mark.timeout(240),
]

#: The user's own project settings, before hookbus: indented their way, with a
#: non-ASCII value, so that "as it was" means byte for byte.
USERS_SETTINGS = (
    '{\n    "permissions": {\n        "allow": ["Bash(ls:*)"]\n    },\n'
    '    "env": {"NEWCOMER_NOTE": "café"}\n}\n'
).encode()

REASON = "NEWCOMER: rm -rf is not allowed in this project"
GUARDS = f"""
import hookbus


@hookbus.handler("before-tool", tools="shell", timeout=5, fail_closed=True)
def no_rm_rf(event):
    if "rm -rf" in (event.tool.command or ""):
        return hookbus.Reply.deny({REASON!r})
    return None
"""


def enable(handler: str) -> str:
    return f'enable = ["guards:{handler}"]\n'


def hookbus(ws: Workspace, *args: str) -> subprocess.CompletedProcess[str]:
    """``hookbus ARGS`` in the project, with the workspace's HOME and state folder only."""
    return subprocess.run(
        [sys.executable, "-m", "hookbus", *args],
        cwd=ws.project, env=ws.base_env(), capture_output=True, text=True,
        timeout=INSTALL_TIMEOUT, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


def said(done: subprocess.CompletedProcess[str]) -> str:
    return f"$ {' '.join(map(str, done.args))}\nrc={done.returncode}\n{done.stdout}{done.stderr}"


def runs(marker: str, command: str) -> Scenario:
    """The model runs ``command`` in Bash, then says it is done."""
    call = Turn.call("Bash", {"command": command, "description": "Run it"}, text="I will.")
    return Scenario.of(call, Turn.say("Done."), match=marker)


def assert_ok(run: Run) -> None:
    assert run.returncode == 0, run.describe()
    assert run.output["is_error"] is False, run.describe()


def test_a_newcomers_walk_ends_with_the_settings_as_they_were(
    claude: Claude, workspace: Workspace
) -> None:
    """Install, a misspelled handler that doctor names, the fix, ``try`` and the real
    Claude refusing ``rm -rf`` (while an allowed command runs), uninstall: the user's
    settings file ends byte for byte as it was, and ``rm -rf`` then runs."""
    project = workspace.project
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(USERS_SETTINGS)
    config = project / ".hookbus.toml"
    (project / "guards.py").write_text(GUARDS)
    config.write_text(enable("no_rm_rf"))

    installed = hookbus(workspace, "install", "--host", "claude")
    assert installed.returncode == 0, said(installed)
    assert settings.read_bytes() != USERS_SETTINGS

    # A typo, and the user trusts their edit (any edit lapses the trust install gave).
    config.write_text(enable("no_rm_fr"))
    assert hookbus(workspace, "trust").returncode == 0
    doctor = hookbus(workspace, "doctor")
    assert doctor.returncode == 1, said(doctor)
    first = doctor.stdout.splitlines()[0]
    assert first.startswith("problem: guards:no_rm_fr: did not load"), said(doctor)
    assert f"(enabled at {config}:1)" in first, said(doctor)
    assert "its handlers: no_rm_rf" in first, said(doctor)
    # The typo's deny, as the host gets it, says where and what fixes it.
    typo = hookbus(workspace, "try", "--host", "claude", "--event", "before-tool",
                   "--tool", "Bash", "--input", json.dumps({"command": "ls"}))  # fmt: skip
    assert re.search(r'"permissionDecision":\s*"deny"', typo.stdout), said(typo)
    assert f"{config}:1" in typo.stdout and "hookbus doctor" in typo.stdout, said(typo)

    # The fix, trusted again; try sends the forbidden command through the installed hook.
    config.write_text(enable("no_rm_rf"))
    assert hookbus(workspace, "trust").returncode == 0
    tried = hookbus(workspace, "try", "--host", "claude", "--event", "PreToolUse",
                    "--tool", "Bash", "--input", json.dumps({"command": "rm -rf victim"}))  # fmt: skip
    assert tried.returncode == 0, said(tried)
    assert re.search(r'"permissionDecision":\s*"deny"', tried.stdout), said(tried)
    assert REASON in tried.stdout, said(tried)

    # The real Claude: the control run's command is allowed, and runs under the same hooks.
    control = claude.run("NEWCOMER-ALLOW: say hi", runs("NEWCOMER-ALLOW", "echo hi | tee ran.txt"))
    assert_ok(control)
    assert (project / "ran.txt").read_text() == "hi\n", control.describe()

    victim = project / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("mine")
    denied = claude.run("NEWCOMER-RM: clean up", runs("NEWCOMER-RM", "rm -rf victim"))
    assert_ok(denied)
    assert (victim / "keep.txt").read_text() == "mine", denied.describe()
    assert [d["tool_name"] for d in denied.output["permission_denials"]] == ["Bash"]
    [told] = denied.model.last_tool_outputs("NEWCOMER-RM")
    assert REASON in told

    # A changed reinstall (another command form) before uninstall: the backup stays the
    # user's file, not hookbus's first install.
    again = hookbus(workspace, "install", "--host", "claude", "--no-server")
    assert again.returncode == 0, said(again)
    removed = hookbus(workspace, "uninstall", "--host", "claude")
    assert removed.returncode == 0, said(removed)
    assert settings.read_bytes() == USERS_SETTINGS

    # Without hookbus, the same scenario removes the folder: the deny above was the guard's.
    unguarded = claude.run("NEWCOMER-RM: clean up", runs("NEWCOMER-RM", "rm -rf victim"))
    assert_ok(unguarded)
    assert not victim.exists(), unguarded.describe()
    assert unguarded.output["permission_denials"] == []


def test_the_offline_example_of_the_docs_passes(claude_executable: Path, tmp_path: Path) -> None:
    """``pytest examples/offline-claude``, as docs/testing.md tells a reader to run it,
    passes both its tests (the control and the deny) against the pinned Claude Code."""
    path = f"{claude_executable.parent}:{os.environ['PATH']}"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", str(EXAMPLE), "--basetemp", str(tmp_path / "t")],
        env={**os.environ, "PATH": path}, capture_output=True, text=True,
        timeout=3 * RUN_TIMEOUT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout, done.stdout
