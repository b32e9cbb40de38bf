"""The real Pi coding agent, headless, in one :class:`~tests.e2e.harness.Workspace`.

``pi -p --provider fake --model fake-model PROMPT`` (print mode: one prompt, the answer
on stdout, then exit) against :class:`~hookbus.testing.fake_models.FakeOpenAIChat`,
named in ``~/.pi/agent/models.json`` as provider ``fake`` (the offline recipe's file).
``PI_OFFLINE=1 PI_SKIP_VERSION_CHECK=1 PI_TELEMETRY=0`` keep it off the network. HOME is
the workspace's, so only the project's ``.pi/extensions/`` (hookbus's and the user's own)
and what a test puts in ``~/.pi/agent`` are loaded.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hookbus.testing.fake_models import FakeOpenAIChat, Scenario

from .harness import RUN_TIMEOUT, HostRun, Workspace, run_process

ENV = {"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"}


def models_json(url: str, context_window: int = 128000) -> dict[str, Any]:
    """The recipe's ``models.json``: one OpenAI-compatible provider at ``url``."""
    return {"providers": {"fake": {
        "baseUrl": f"{url}/v1", "api": "openai-completions", "apiKey": "sk-fake",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "fake-model", "name": "Fake Model", "reasoning": False,
                    "input": ["text"], "contextWindow": context_window, "maxTokens": 4096}],
    }}}  # fmt: skip


@dataclass(frozen=True)
class PiRun(HostRun):
    """One finished ``pi -p`` run."""

    model: FakeOpenAIChat


@dataclass(frozen=True)
class Pi:
    """Pi (the pinned real program) in one workspace."""

    executable: Path
    workspace: Workspace

    #: Pi's user folder, where ``models.json`` goes: ``~/.pi/agent`` unless the run's
    #: ``PI_CODING_AGENT_DIR`` names another.
    agent_dir_env: str | None = None

    @property
    def agent_dir(self) -> Path:
        if self.agent_dir_env:
            return Path(self.agent_dir_env)
        return self.workspace.home / ".pi" / "agent"

    def run(
        self,
        prompt: str,
        scenario: Scenario | Mapping[str, Any],
        *,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        context_window: int = 128000,
        timeout: float = RUN_TIMEOUT,
    ) -> PiRun:
        ws = self.workspace
        with FakeOpenAIChat(scenario, log_path=ws.root / "requests.jsonl") as model:
            self.agent_dir.mkdir(parents=True, exist_ok=True)
            models = models_json(model.url, context_window)
            (self.agent_dir / "models.json").write_text(json.dumps(models))
            argv = [str(self.executable), "-p", "--provider", "fake", "--model", "fake-model",
                    *args, prompt]  # fmt: skip
            started = time.monotonic()
            environ = {**ws.base_env(), **ENV, **(env or {})}
            if self.agent_dir_env:
                environ["PI_CODING_AGENT_DIR"] = self.agent_dir_env
            done = run_process(argv, cwd=ws.project, env=environ, timeout=timeout)
            seconds = time.monotonic() - started
        return PiRun(argv, done, seconds, model)
