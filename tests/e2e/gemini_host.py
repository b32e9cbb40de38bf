"""The real Gemini CLI, headless, in one :class:`~tests.e2e.harness.Workspace`.

``gemini -p PROMPT --output-format json`` runs from the project against
:class:`~hookbus.testing.fake_models.FakeGemini` (``GOOGLE_GEMINI_BASE_URL``, which may be
plain http on 127.0.0.1), with a dummy API key. The user's settings
(``~/.gemini/settings.json``) select API-key auth and turn off telemetry, usage
statistics and update checks; ``GEMINI_CLI_TRUST_WORKSPACE=true`` trusts the project
folder, without which Gemini runs no project hooks. Never ``--yolo`` (it turns the
sandbox on): ``--allowed-tools`` (comma-separated) lets the scripted calls run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hookbus.testing.fake_models import FakeGemini, Scenario

from .harness import RUN_TIMEOUT, HostRun, Workspace, run_process

USER_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}


@dataclass(frozen=True)
class GeminiRun(HostRun):
    """One finished Gemini run."""

    model: FakeGemini

    @property
    def output(self) -> dict[str, Any]:
        """The ``--output-format json`` result (``session_id``, ``response``, ``stats``)."""
        result: dict[str, Any] = json.loads(self.process.stdout)
        return result


@dataclass(frozen=True)
class Gemini:
    """Gemini CLI (a pinned real program) in one workspace."""

    executable: Path
    workspace: Workspace

    def run(
        self,
        prompt: str,
        scenario: Scenario | Mapping[str, Any],
        *,
        tools: Sequence[str] = ("run_shell_command",),
        timeout: float = RUN_TIMEOUT,
    ) -> GeminiRun:
        ws = self.workspace
        user = ws.home / ".gemini" / "settings.json"
        if not user.exists():
            user.parent.mkdir(parents=True, exist_ok=True)
            user.write_text(json.dumps(USER_SETTINGS))
        argv = [str(self.executable), "-p", prompt, "--output-format", "json",
                "--allowed-tools", ",".join(tools)]  # fmt: skip
        with FakeGemini(scenario, log_path=ws.root / "requests.jsonl") as model:
            env = {**ws.base_env(), "GEMINI_API_KEY": "fake-key",
                   "GOOGLE_GEMINI_BASE_URL": model.url, "GEMINI_CLI_TRUST_WORKSPACE": "true"}  # fmt: skip
            started = time.monotonic()
            done = run_process(argv, cwd=ws.project, env=env, timeout=timeout)
            seconds = time.monotonic() - started
        return GeminiRun(argv, done, seconds, model)
