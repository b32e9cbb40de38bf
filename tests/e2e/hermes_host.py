"""The real Hermes Agent, headless, in one :class:`~tests.e2e.harness.Workspace`.

``hermes -z PROMPT --accept-hooks`` (one-shot, the final text on stdout) in the project,
against :class:`~hookbus.testing.fake_models.FakeOpenAIChat`: ``config.yaml`` in the
workspace's HOME names a ``custom`` provider, whose URL ``CUSTOM_BASE_URL`` sets per run
(``OPENAI_BASE_URL`` is not read). At start Hermes probes the endpoint (``/api/v1/models``,
``/api/show``, ``/v1/models``): the fake lists ``fake-model`` and 404s the rest, which
Hermes takes. Its two look-ups of openrouter.ai fail fast offline.

hookbus's configuration is the project's ``.hookbus.toml``, named by ``HOOKBUS_CONFIG``
(Hermes has user settings only: its one plugin serves every session); or, with
``named_config`` false, found as a user finds it, by the folder Hermes runs in.

The user's own plugin, ``users_plugin`` (enabled in ``plugins.enabled`` before hookbus),
appends every call it gets to ``users_plugin.jsonl``: install must leave it alone, and
Hermes must still run it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hookbus.testing.fake_models import FakeOpenAIChat, Scenario

from .harness import RUN_TIMEOUT, HostRun, Workspace, read_json_lines, run_process

#: ``~/.hermes/config.yaml`` before hookbus is installed: the user's own, with comments.
CONFIG = """\
# The user's own Hermes settings (install must keep these comments).
model:
  default: fake-model   # the fake model
  provider: custom
  base_url: http://127.0.0.1:9/v1   # CUSTOM_BASE_URL wins, per run
  api_key: sk-fake
plugins:
  enabled: [users_plugin]   # mine
"""
USERS_PLUGIN_YAML = "name: users_plugin\nversion: 0.1.0\ndescription: the user's own\n"
USERS_PLUGIN = """\
import json, os

def _make(event):
    def hook(**kwargs):
        with open(os.path.join(os.environ["HOME"], "users_plugin.jsonl"), "a") as f:
            f.write(json.dumps({"event": event, "tool_name": kwargs.get("tool_name")}) + "\\n")
    return hook

def register(ctx):
    for event in ("pre_tool_call", "post_tool_call", "on_session_end"):
        ctx.register_hook(event, _make(event))
"""


@dataclass(frozen=True)
class HermesRun(HostRun):
    """One finished ``hermes -z`` run."""

    model: FakeOpenAIChat


@dataclass(frozen=True)
class Hermes:
    """Hermes Agent (a pinned real program) in one workspace, with the user's own
    configuration and plugin in place."""

    argv: list[str]
    workspace: Workspace
    #: ``HOOKBUS_CONFIG`` names the project's file; else hookbus finds it by the folder.
    named_config: bool = True

    @property
    def hermes_home(self) -> Path:
        return self.workspace.home / ".hermes"

    @property
    def config(self) -> Path:
        return self.hermes_home / "config.yaml"

    def prepare(self) -> Hermes:
        plugin = self.hermes_home / "plugins" / "users_plugin"
        plugin.mkdir(parents=True)
        (plugin / "plugin.yaml").write_text(USERS_PLUGIN_YAML)
        (plugin / "__init__.py").write_text(USERS_PLUGIN)
        self.config.write_text(CONFIG)
        return self

    def env(self) -> dict[str, str]:
        ws = self.workspace
        named = {"HOOKBUS_CONFIG": str(ws.project / ".hookbus.toml")} if self.named_config else {}
        return {**ws.base_env(), **named, "OPENAI_API_KEY": "sk-fake"}

    def users_plugin_calls(self) -> list[dict[str, Any]]:
        return read_json_lines(self.workspace.home / "users_plugin.jsonl")

    def run(
        self,
        prompt: str,
        scenario: Scenario | Mapping[str, Any],
        *,
        timeout: float = RUN_TIMEOUT,
        python_path: Path | None = None,
        cwd: Path | None = None,
    ) -> HermesRun:
        """One ``hermes -z`` run in the project (or ``cwd``); ``python_path`` is put on
        Hermes's import path."""
        ws = self.workspace
        with FakeOpenAIChat(scenario, log_path=ws.root / "requests.jsonl") as model:
            argv = [*self.argv, "-z", prompt, "--accept-hooks"]
            env = {**self.env(), "CUSTOM_BASE_URL": f"{model.url}/v1"}
            if python_path is not None:
                env["PYTHONPATH"] = str(python_path)
            started = time.monotonic()
            done = run_process(argv, cwd=cwd or ws.project, env=env, timeout=timeout)
            seconds = time.monotonic() - started
        return HermesRun(argv, done, seconds, model)


def hookbus_importable(folder: Path) -> Path:
    """``folder`` made into what ``pip install hookbus`` adds to Hermes's environment, for
    ``PYTHONPATH``: hookbus, the dependencies Hermes lacks (msgspec, structlog: anyio and
    ruamel.yaml it has), and the ``hermes_agent.plugins`` entry point's metadata."""
    import msgspec
    import structlog

    import hookbus

    folder.mkdir(parents=True)
    for module in (hookbus, msgspec, structlog):
        (folder / module.__name__).symlink_to(Path(str(module.__file__)).parent)
    info = folder / "hookbus-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hookbus\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(
        "[hermes_agent.plugins]\nhookbus = hookbus.hosts.hermes.plugin\n"
    )
    return folder


def tool_results(run: HermesRun, marker: str) -> list[Any]:
    """What the model was told each tool call gave, in the conversation of ``marker``:
    the ``tool`` messages of its last request, JSON-decoded where they are JSON."""
    found = []
    for text in run.model.last_tool_outputs(marker):
        try:
            found.append(json.loads(text))
        except ValueError:
            found.append(text)
    return found
