"""The real Claude Code, offline, with and without hookbus (docs/testing.md).

Run with Claude Code on PATH: ``pytest examples/offline-claude``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hookbus.testing.fake_models import FakeAnthropic, Scenario, Turn

CLAUDE = shutil.which("claude")
pytestmark = pytest.mark.skipif(CLAUDE is None, reason="Claude Code is not on PATH")

#: The model asks for ``rm -rf build`` in Bash, then says it is done.
RM = Scenario.of(Turn.call("Bash", {"command": "rm -rf build"}), Turn.say("Done."))


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A HOME, a hookbus state folder and a project of the test's own: nothing of yours
    is read or written."""
    (tmp_path / "home").mkdir()
    project = tmp_path / "project"
    (project / "build").mkdir(parents=True)
    shutil.copy(Path(__file__).with_name("guards.py"), project)
    (project / ".hookbus.toml").write_text('enable = ["guards:no_rm_rf"]\n')
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),
        "HOOKBUS_STATE_DIR": str(tmp_path / "state"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def hookbus(env: dict[str, str], *args: str, cwd: Path | None = None) -> int:
    """``hookbus ARGS`` as the user would type it, in the test's environment."""
    argv = [sys.executable, "-m", "hookbus", *args]
    return subprocess.run(argv, cwd=cwd, env=env, check=False).returncode


def claude(project: Path, env: dict[str, str], scenario: Scenario) -> dict[str, Any]:
    """``claude -p`` in ``project`` against a fake model playing ``scenario``: Claude's
    JSON result, and what it told the model its tool calls returned."""
    argv = [str(CLAUDE), "-p", "clean up", "--output-format", "json", "--allowedTools", "Bash"]
    with FakeAnthropic(scenario) as model:
        fake = {"ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-fake"}
        done = subprocess.run(
            argv, cwd=project, env={**env, **fake}, stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=50, check=True,
        )  # fmt: skip
    return {"result": json.loads(done.stdout), "told": model.last_tool_outputs()}


def test_without_hookbus_claude_runs_rm_rf(tmp_path: Path, env: dict[str, str]) -> None:
    """The control run: the same scenario, nothing installed, removes the folder."""
    project = tmp_path / "project"
    claude(project, env, RM)
    assert not (project / "build").exists()


def test_with_hookbus_claude_does_not(tmp_path: Path, env: dict[str, str]) -> None:
    """Installed, the guard stops the call, and the model is told why."""
    project = tmp_path / "project"
    assert hookbus(env, "install", "--host", "claude", cwd=project) == 0
    try:
        run = claude(project, env, RM)
    finally:
        hookbus(env, "serve", "--stop")  # the warm server the hook started
    assert (project / "build").is_dir()
    assert "rm -rf is not allowed" in run["told"][0]
    assert [d["tool_name"] for d in run["result"]["permission_denials"]] == ["Bash"]
