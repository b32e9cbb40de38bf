"""The real GitHub Copilot CLI, headless, in one :class:`~tests.e2e.harness.Workspace`.

``copilot -p PROMPT --allow-all-tools --trust-folder --no-auto-update --output-format
json`` runs from the project against
:class:`~hookbus.testing.fake_models.FakeOpenAIChat`: ``COPILOT_PROVIDER_BASE_URL``
(plain http on 127.0.0.1 is accepted) with ``COPILOT_PROVIDER_TYPE=openai``, a dummy key
and ``COPILOT_MODEL``, so no GitHub sign-in is needed; ``COPILOT_OFFLINE=true`` and
``COPILOT_AUTO_UPDATE=false`` keep it off the network. ``--trust-folder`` matters: without
it Copilot skips the project's ``.github/hooks`` without a word. ``--allow-all-tools``
lets the scripted calls run (``-p`` refuses what would need a prompt). HOME is the
workspace's, so nothing of the caller's ``~/.copilot`` is read; Copilot unpacks its
builtin skills into ``$HOME/.cache/copilot`` on the first run of each HOME.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hookbus.testing.fake_models import FakeOpenAIChat, Scenario

from .harness import RUN_TIMEOUT, HostRun, Workspace, run_process


@dataclass(frozen=True)
class CopilotRun(HostRun):
    """One finished Copilot run."""

    model: FakeOpenAIChat

    @property
    def items(self) -> list[dict[str, Any]]:
        """The ``--output-format json`` stream: one session event a line, then ``result``."""
        return self.json_lines()

    @property
    def result(self) -> dict[str, Any]:
        """The closing ``result`` line (``sessionId``, ``exitCode``, ``usage``)."""
        [found] = [i for i in self.items if i.get("type") == "result"]
        return found


@dataclass(frozen=True)
class Copilot:
    """Copilot CLI (a pinned real program) in one workspace."""

    executable: Path
    workspace: Workspace

    def run(
        self,
        prompt: str,
        scenario: Scenario | Mapping[str, Any],
        *,
        timeout: float = RUN_TIMEOUT,
    ) -> CopilotRun:
        ws = self.workspace
        argv = [str(self.executable), "-p", prompt, "--allow-all-tools", "--trust-folder",
                "--no-auto-update", "--output-format", "json"]  # fmt: skip
        with FakeOpenAIChat(scenario, log_path=ws.root / "requests.jsonl") as model:
            env = {**ws.base_env(), "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false",
                   "COPILOT_PROVIDER_BASE_URL": f"{model.url}/v1",
                   "COPILOT_PROVIDER_TYPE": "openai", "COPILOT_PROVIDER_API_KEY": "sk-fake",
                   "COPILOT_MODEL": "fake-model"}  # fmt: skip
            started = time.monotonic()
            done = run_process(argv, cwd=ws.project, env=env, timeout=timeout)
            seconds = time.monotonic() - started
        return CopilotRun(argv, done, seconds, model)
