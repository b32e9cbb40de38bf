"""No event a fail-closed guard could want is let through because the subscription index
was missing, stale, being compiled or unwritable: a storm of concurrent hooks on a cold
index, with a guard module that takes 2 s to import, allows nothing, every time.

The storms are marked ``stress`` (each round starts 24 real hook processes); the unit
suite, ``-m "not e2e and not stress"``, leaves them out, the full suite runs them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import compile_now, guarded_project, pre_tool

from hookbus.testing import run_cli

HOOKS = 24
ROUNDS = 10
SLOW_IMPORT = 'import os, time\ntime.sleep(float(os.environ.get("GUARD_IMPORT_SECONDS", "2")))'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return guarded_project(tmp_path / "project", "slowguard", SLOW_IMPORT)


def storm(project: Path, env: dict[str, str], wrap: list[str] | None = None) -> list[str]:
    """Start ``HOOKS`` hooks at once, all fed before any is read; each one's decision."""
    argv = [*(wrap or []), sys.executable, "-m", "hookbus", "run", "--host", "claude",
            "--event", "PreToolUse"]  # fmt: skip
    procs = [
        subprocess.Popen(
            argv,
            cwd=project,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(HOOKS)
    ]
    payload = pre_tool("rm -rf victim", project)
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(payload)
        proc.stdin.close()
    decisions = []
    for proc in procs:
        assert proc.stdout is not None
        with proc.stdout:
            out = proc.stdout.read()
        assert proc.wait(timeout=120) == 0
        hso = json.loads(out)["hookSpecificOutput"] if out.strip() else {}
        decisions.append(str(hso.get("permissionDecision", "no opinion")))
    return decisions


def _fresh_state(state: Path) -> dict[str, str]:
    shutil.rmtree(state, ignore_errors=True)
    return {**os.environ, "HOOKBUS_STATE_DIR": str(state)}


def _read_only_wrap(state: Path) -> list[str]:
    """Run each hook in a mount namespace of its own where ``state`` is read-only (root
    ignores permission bits, so a mode would prove nothing)."""
    script = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, str(state)]


def _can_unshare() -> bool:
    try:
        probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount --bind / /mnt 2>/dev/null"],
                               capture_output=True, timeout=30, check=False)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


@pytest.mark.stress
@pytest.mark.timeout(900)  # ten storms of 24 hooks: many minutes on a loaded machine
@pytest.mark.parametrize("condition", ["fresh-state", "read-only-state", "version-bump"])
def test_a_cold_index_storm_allows_nothing(project: Path, tmp_path: Path, condition: str) -> None:
    """24 concurrent hooks on a cold index (fresh state folder, read-only state folder, or
    an index left by another hookbus version), guard module 2 s to import: 0 of 24
    allowed, ten rounds in a row."""
    state = tmp_path / "state"
    wrap = None
    if condition == "read-only-state":
        if not _can_unshare():
            pytest.skip("needs a private mount namespace (unshare -m) to make a folder read-only")
        wrap = _read_only_wrap(state)
    for round_ in range(ROUNDS):
        env = _fresh_state(state)
        if condition == "read-only-state":
            state.mkdir(mode=0o700)
        if condition == "version-bump":
            compile_now(project, env)
            (cached,) = (state / "index").glob("*.json")
            data = json.loads(cached.read_text())
            data["hookbus"] = "0.0.1"  # the index an older hookbus compiled
            cached.write_text(json.dumps(data))
        decisions = storm(project, env, wrap)
        assert decisions == ["deny"] * HOOKS, f"round {round_}: {decisions}"


def test_a_guard_that_hangs_at_import_denies(project: Path, isolated_environment: Path) -> None:
    """A fail-closed guard whose module never finishes importing, on a cold index: the
    hook answers within its budget, and answers deny."""
    (project / ".hookbus.toml").write_text('budget = 2\nenable = ["slowguard:guard"]\n')
    env = {**os.environ, "GUARD_IMPORT_SECONDS": "600"}
    result = run_cli("claude", pre_tool("rm -rf victim", project), cwd=project, env=env,
                     args=["--event", "PreToolUse"])  # fmt: skip
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    second = run_cli("claude", pre_tool("ls", project), cwd=project, env=env,
                     args=["--event", "PreToolUse"])  # fmt: skip
    reason = json.loads(second.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "slowguard:guard did not load" in reason


def test_a_smaller_storm_in_the_unit_suite(project: Path, tmp_path: Path) -> None:
    """One round of the storm, fresh state folder: every hook denies."""
    env = _fresh_state(tmp_path / "state")
    assert storm(project, env) == ["deny"] * HOOKS
