"""The real Qwen Code, headless, in one :class:`~tests.e2e.harness.Workspace`.

``node22 cli.js PROMPT --output-format json --approval-mode yolo`` runs from the project
against :class:`~hookbus.testing.fake_models.FakeOpenAIChat` (``OPENAI_BASE_URL``,
plain http on 127.0.0.1), with a dummy key and model (``hosts.command("qwen")`` gives the
pinned Node 22 and entry). The user's settings (``~/.qwen/settings.json``) select the
OpenAI auth and turn off telemetry, usage statistics and update checks.

``--approval-mode yolo`` is required: without it a headless run refuses every tool
before any hook runs (offline recipe, ``shared/hosts/more-hosts-offline``). No trust
switch is needed for project hooks: 0.24.4 loads them only in a trusted folder, but with
``security.folderTrust.enabled`` off (its default) every folder is trusted
(``Config.getProjectHooks``, ``isWorkspaceTrusted`` in the bundle).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hookbus.testing.fake_models import FakeOpenAIChat, Scenario

from .harness import RUN_TIMEOUT, HostRun, Workspace, run_process

#: The offline recipe's ``user-settings.json``.
USER_SETTINGS = {
    "security": {"auth": {"selectedType": "openai"}},
    "model": {"name": "fake-model"},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}


@dataclass(frozen=True)
class QwenRun(HostRun):
    """One finished Qwen run."""

    model: FakeOpenAIChat

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The ``--output-format json`` result: a list of stream messages, the last of type
        ``result``."""
        result: list[dict[str, Any]] = json.loads(self.process.stdout)
        return result

    @property
    def result(self) -> dict[str, Any]:
        """The closing ``{"type": "result", "session_id", "result", ...}`` message."""
        [found] = [m for m in self.messages if m.get("type") == "result"]
        return found


@dataclass(frozen=True)
class Qwen:
    """Qwen Code (a pinned real program, run by its pinned Node) in one workspace."""

    command: Sequence[str]
    workspace: Workspace

    def run(
        self,
        prompt: str,
        scenario: Scenario | Mapping[str, Any],
        *,
        timeout: float = RUN_TIMEOUT,
    ) -> QwenRun:
        ws = self.workspace
        user = ws.home / ".qwen" / "settings.json"
        if not user.exists():
            user.parent.mkdir(parents=True, exist_ok=True)
            user.write_text(json.dumps(USER_SETTINGS))
        argv = [*self.command, prompt, "--output-format", "json", "--approval-mode", "yolo"]
        with FakeOpenAIChat(scenario, log_path=ws.root / "requests.jsonl") as model:
            env = {**ws.base_env(), "OPENAI_API_KEY": "sk-fake",
                   "OPENAI_BASE_URL": f"{model.url}/v1", "OPENAI_MODEL": "fake-model"}  # fmt: skip
            started = time.monotonic()
            done = run_process(argv, cwd=ws.project, env=env, timeout=timeout)
            seconds = time.monotonic() - started
        return QwenRun(argv, done, seconds, model)
