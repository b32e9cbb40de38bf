"""The real OpenCode 1.18.33 and Kilo CLI 7.7.7, headless, in one
:class:`~tests.e2e.harness.Workspace`.

``opencode run PROMPT --format json --title e2e`` (``kilo run ...``) from the project,
against :class:`~hookbus.testing.fake_models.FakeOpenAIChat`: the provider is the
bundled ``@ai-sdk/openai-compatible`` pointed at the fake by ``opencode.json``
(``kilo.json``) in the project, which also allows bash and edits without asking.

Offline: once any plugin is configured, the host waits, before it loads plugins, for an
``npm install`` of its plugin package in each config folder (``.opencode/`` and
``~/.config/opencode/``; ``.kilo/`` and ``~/.config/kilo/``) unless the folder has a
``node_modules/`` and a ``package-lock.json`` naming the package at its root (1.18.33's
``Npm.install``; offline the install stalls ~70 s). :func:`seed` puts that there before a
run: for OpenCode the real ``@opencode-ai/plugin`` pinned in :mod:`tests.e2e.hosts`
(``opencode-plugin``), linked; for Kilo a lock file over an empty ``node_modules/`` (no
test plugin imports ``@kilocode/plugin``). The ``*_DISABLE_*`` variables stop the model
list, update, LSP and share traffic; ``KILO_NO_DAEMON=1`` keeps Kilo in one process.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hookbus.testing.fake_models import FakeOpenAIChat, Scenario

from . import hosts
from .harness import HostRun, Workspace, dispatches, run_process

#: Kilo takes 23-40 s a run on this kind of machine; OpenCode 5-15 s.
RUN_TIMEOUT = 100.0


@dataclass(frozen=True)
class Flavour:
    """What differs between OpenCode and Kilo."""

    host: str
    config_file: str
    folder: str
    package: str
    env: Mapping[str, str]


OPENCODE = Flavour(
    "opencode", "opencode.json", ".opencode", "@opencode-ai/plugin",
    {"OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1",
     "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_SHARE": "1"},
)  # fmt: skip
KILO = Flavour(
    "kilo", "kilo.json", ".kilo", "@kilocode/plugin",
    {"KILO_DISABLE_MODELS_FETCH": "1", "KILO_DISABLE_AUTOUPDATE": "1",
     "KILO_DISABLE_LSP_DOWNLOAD": "1", "KILO_DISABLE_SHARE": "1", "KILO_NO_DAEMON": "1",
     "KILO_TELEMETRY_LEVEL": "off", "KILO_DISABLE_SESSION_INGEST": "1",
     "KILO_DISABLE_CODEBASE_INDEXING": "1", "KILO_DISABLE_PRESENCE": "1"},
)  # fmt: skip


def provider_config(url: str) -> dict[str, Any]:
    model = {"name": "Fake Model", "tool_call": True,
             "limit": {"context": 128000, "output": 4096}}  # fmt: skip
    return {
        "autoupdate": False,
        "share": "disabled",
        "model": "fake/fake-model",
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible", "name": "Fake loopback",
            "options": {"baseURL": f"{url}/v1", "apiKey": "sk-fake"},
            "models": {"fake-model": model}}},
        "permission": {"bash": "allow", "edit": "allow", "webfetch": "deny"},
    }  # fmt: skip


def seed(flavour: Flavour, folder: Path) -> None:
    """Make ``folder`` (a config folder) one the host does not npm-install into."""
    folder.mkdir(parents=True, exist_ok=True)
    lock = {"name": folder.name, "lockfileVersion": 3, "requires": True,
            "packages": {"": {"dependencies": {flavour.package: "*"}}}}  # fmt: skip
    if flavour is OPENCODE:
        prefix = hosts.ensure("opencode-plugin").parent.parent.parent
        (folder / "node_modules").symlink_to(prefix / "node_modules")
        lock = json.loads((prefix / "package-lock.json").read_text())
    else:
        (folder / "node_modules").mkdir()
    (folder / "package-lock.json").write_text(json.dumps(lock, indent=2) + "\n")


def config_dirs(flavour: Flavour, ws: Workspace) -> tuple[Path, Path]:
    return ws.project / flavour.folder, ws.home / ".config" / flavour.host


@dataclass(frozen=True)
class OpenCodeRun(HostRun):
    """One finished ``run --format json``."""

    model: FakeOpenAIChat

    @property
    def lines(self) -> list[dict[str, Any]]:
        """The ``--format json`` stream: ``step_start``, ``tool_use``, ``text``, ..."""
        return self.json_lines()

    def tool_uses(self) -> list[dict[str, Any]]:
        return [line["part"] for line in self.lines if line.get("type") == "tool_use"]


@dataclass(frozen=True)
class OpenCode:
    """OpenCode or Kilo (a pinned real program) in one workspace."""

    executable: Path
    workspace: Workspace
    flavour: Flavour = OPENCODE

    def env(self) -> dict[str, str]:
        ws = self.workspace
        return {
            **ws.base_env(),
            "XDG_CONFIG_HOME": str(ws.home / ".config"),
            "XDG_DATA_HOME": str(ws.home / ".local" / "share"),
            "XDG_CACHE_HOME": str(ws.home / ".cache"),
            "XDG_STATE_HOME": str(ws.home / ".local" / "state"),
            **self.flavour.env,
        }

    @property
    def plugin_dir(self) -> Path:
        return config_dirs(self.flavour, self.workspace)[0] / "plugin"

    def prepare(self) -> None:
        """Seed the config folders and put the user's own plugin in the project's."""
        for folder in config_dirs(self.flavour, self.workspace):
            seed(self.flavour, folder)
        mine = self.plugin_dir / "mine.js"
        mine.parent.mkdir(parents=True)
        mine.write_text(users_plugin(users_log(self.workspace)))

    def install(self, handlers: dict[str, Any], *, record: bool = True) -> None:
        """``hookbus install --host H`` with ``handlers``: hookbus's plugin is written, the
        user's is untouched."""
        ws = self.workspace
        ws.install_hookbus(handlers, host=self.flavour.host, record=record)
        assert (self.plugin_dir / "mine.js").read_text() == users_plugin(users_log(ws))
        assert "hookbus-owned-file" in (self.plugin_dir / "hookbus.js").read_text()

    def point_shim_at(
        self, program: Path, wait_ms: int | None = None, events: tuple[str, ...] = ()
    ) -> None:
        """Make the installed shim run ``program`` in hookbus's place (and wait less); with
        ``events``, for those native events only (the config has one line per event)."""
        shim = self.plugin_dir / "hookbus.js"
        which = "|".join(re.escape(json.dumps(e)) for e in events) or r'"[^"]+"'
        text = re.sub(
            rf'^(\s*(?:{which}): \{{"argv": \[)"[^"]+"',
            lambda m: m.group(1) + json.dumps(str(program)),
            shim.read_text(),
            flags=re.MULTILINE,
        )
        if wait_ms is not None:
            text = re.sub(r'"wait_ms": \d+', f'"wait_ms": {wait_ms}', text)
        shim.write_text(text)

    def run(
        self,
        prompt: str,
        scenario: Scenario | Mapping[str, Any],
        *,
        timeout: float = RUN_TIMEOUT,
        config: Mapping[str, Any] | None = None,
    ) -> OpenCodeRun:
        """One ``run``; ``config`` is merged into the provider's (objects key by key)."""
        ws = self.workspace
        with FakeOpenAIChat(scenario, log_path=ws.root / "requests.jsonl") as model:
            path = ws.project / self.flavour.config_file
            merged = merge(provider_config(model.url), config or {})
            path.write_text(json.dumps(merged, indent=2) + "\n")
            argv = [str(self.executable), "run", prompt, "--format", "json", "--title", "e2e"]
            started = time.monotonic()
            done = run_process(argv, cwd=ws.project, env=self.env(), timeout=timeout)
            seconds = time.monotonic() - started
        return OpenCodeRun(argv, done, seconds, model)


def merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` laid on ``base``: objects merged key by key, anything else replaced."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged


#: The user's own plugin, already in the config folder: it notes each tool call it sees
#: (and so proves it still runs beside hookbus's).
USERS_PLUGIN = """\
import { appendFileSync } from "node:fs"
export const Mine = async () => ({
  "tool.execute.before": async (input, output) => {
    appendFileSync(%s, JSON.stringify({ tool: input.tool, args: output.args }) + "\\n")
  },
})
"""


def users_plugin(log: Path) -> str:
    return USERS_PLUGIN % json.dumps(str(log))


PROOF = "ran_proof.txt"


def users_log(ws: Workspace) -> Path:
    return ws.root / "mine.jsonl"


def save_goldens(ws: Workspace, folder: Path, seen: set[str], prefix: str = "") -> None:
    """Each native event's raw payload once, named ``<native>[.<tool>][.in-subagent]``."""
    folder.mkdir(parents=True, exist_ok=True)
    for event in ws.events(other=True):
        raw = event["raw"]
        name = event["native"]
        if tool := (raw.get("input") or {}).get("tool"):
            name += f".{tool}"
        if raw.get("parentID") or event["kind"] in ("subagent-start", "subagent-stop"):
            name += ".in-subagent"
        if prefix + name not in seen:
            seen.add(prefix + name)
            text = json.dumps(ws.anonymized(raw), indent=2)
            # info.path is the project relative to the worktree (/ outside a git repo).
            text = text.replace(str(ws.project).lstrip("/"), "<project-relative>")
            (folder / f"{name}.json").write_text(text + "\n")


def shell_turn(command: str) -> dict[str, Any]:
    return {"tool_use": {"name": "bash", "input": {"command": command, "description": "Run it"}}}


def tool_script(marker: str, command: str = f"echo hi | tee {PROOF}") -> dict[str, Any]:
    """The model runs ``command`` in the shell, then says it is done."""
    return {"conversations": [{"match": marker, "turns": [shell_turn(command),
                                                          {"text": "All done."}]}]}  # fmt: skip


def decoded(ws: Workspace, host: str = "opencode") -> list[dict[str, Any]]:
    """The recorded events decoded again from their raw payloads, whole (the recorder
    keeps a few fields only)."""
    from hookbus.hosts import driver as load_driver
    from hookbus.testing.contract import portable

    driver = load_driver(host)
    return [portable(driver.decode(json.dumps(e["raw"]).encode())) for e in ws.events()]


def kinds(ws: Workspace) -> list[str]:
    return [e["kind"] for e in ws.events()]


def diagnostics_named(ws: Workspace, code: str) -> list[dict[str, Any]]:
    return [d for d in ws.diagnostics() if d.get("event") == code]


def users_calls(ws: Workspace) -> list[dict[str, Any]]:
    return [json.loads(line) for line in users_log(ws).read_text().splitlines()]


def assert_ok(run: OpenCodeRun) -> None:
    """The host exited 0 and left no process behind (no hookbus child of the shim)."""
    assert run.returncode == 0, run.describe()
    assert run.process.leftovers == (), run.describe()


def check_deny(host: OpenCode, marker: str) -> None:
    """A deny blocks bash: the command does not run, the model's next request carries the
    reason as the tool's error, the session ends normally, the user's plugin saw the call."""
    ws = host.workspace
    reason = f"{marker}: echo is not allowed in this repo"
    host.install({"deny_shell": {"reason": reason}})
    run = host.run(f"{marker}: please run echo hi", tool_script(marker))

    assert_ok(run)
    assert not (ws.project / PROOF).exists()
    _, second = run.model.conversation(marker)
    [told] = run.model.tool_outputs(second)
    assert reason in told
    assert kinds(ws) == ["session-start", "prompt-submit", "before-tool", "stop"]
    [mine] = users_calls(ws)
    assert mine["args"]["command"] == f"echo hi | tee {PROOF}"
    assert ws.diagnostics() == [], ws.diagnostics()


def check_hookbus_missing(host: OpenCode, marker: str, nowhere: Path) -> OpenCodeRun:
    """The interpreter the shim names is gone: the shim answers its fallback (the deny
    handler is fail-open: the call runs), leaves one diagnostic line in hookbus's log and
    one on stderr, and the session completes."""
    ws = host.workspace
    host.install({"deny_shell": {"reason": marker}}, record=False)
    host.point_shim_at(nowhere / "python3")
    run = host.run(f"{marker}: please run echo hi", tool_script(marker))

    assert_ok(run)
    assert (ws.project / PROOF).read_text() == "hi\n"
    [line] = ws.diagnostics()
    assert (line["event"], line["host"], line["native"]) == (
        "hook-unavailable", host.flavour.host, "tool.execute.before")  # fmt: skip
    assert "cannot run" in line["message"]
    assert run.process.stderr.count("hookbus: tool.execute.before:") == 1
    return run


#: The parent's model and the premium profile's, both priced (Claude's ids) and served by
#: the fake provider under those names.
PARENT_MODEL, PREMIUM_MODEL = "claude-sonnet-4-5", "claude-opus-4-1"


def guard_config() -> dict[str, Any]:
    """Over the provider's config: the parent on Sonnet, and two subagents, the tier
    profile ``hookbus-premium`` pinned to Opus and the parent profile ``hookbus-parent``
    (no model: OpenCode runs it on the calling message's model)."""
    limits = {"tool_call": True, "limit": {"context": 128000, "output": 4096}}
    return {
        "model": f"fake/{PARENT_MODEL}",
        "small_model": f"fake/{PARENT_MODEL}",
        "agent": {
            "hookbus-premium": {"description": "Premium tier", "mode": "subagent",
                                "model": f"fake/{PREMIUM_MODEL}"},
            "hookbus-parent": {"description": "Runs on the parent", "mode": "subagent"},
        },
        "provider": {"fake": {"models": {PARENT_MODEL: limits, PREMIUM_MODEL: limits}}},
    }  # fmt: skip


def install_guard(host: OpenCode, options: str = "") -> None:
    """``enable = ["guard"]`` alone (``options`` after it), installed for the host."""
    ws = host.workspace
    (ws.project / ".hookbus.toml").write_text(f'enable = ["guard"]\n{options}')
    argv = [sys.executable, "-m", "hookbus", "install", "--host", host.flavour.host]
    done = subprocess.run(argv, cwd=ws.project, env=ws.base_env(), capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def premium_task(marker: str) -> dict[str, Any]:
    """The parent calls ``task`` with ``hookbus-premium``; the child answers at once."""
    return {"conversations": [
        {"match": f"{marker}-CHILD", "turns": [{"text": "Child done."}]},
        {"match": marker, "turns": [
            {"tool_use": {"name": "task", "input": {
                "description": "List the tests", "prompt": f"{marker}-CHILD: list the tests",
                "subagent_type": "hookbus-premium"}}},
            {"text": "Parent done."}]},
    ]}  # fmt: skip


def check_guard_cap(host: OpenCode, marker: str) -> OpenCodeRun:
    """``enable = ["guard"]``: the parent (Sonnet) calls ``task`` with ``hookbus-premium``
    (Opus); the shim edits the args in place to ``hookbus-parent``, so the child's request
    reaches the model on the parent's model; one ``cap`` row."""
    ws = host.workspace
    install_guard(host)
    run = host.run(f"{marker}: delegate the listing", premium_task(marker), config=guard_config())

    assert_ok(run)
    assert [r["model"] for r in run.model.conversation(f"{marker}-CHILD")] == [PARENT_MODEL]
    assert {r["model"] for r in run.model.conversation(marker)} == {PARENT_MODEL}
    [row] = dispatches(ws)
    assert (row.host, row.agent_type, row.action, row.parent_model, row.decided_model) == (
        host.flavour.host, "hookbus-premium", "cap", PARENT_MODEL, PARENT_MODEL)  # fmt: skip
    # The user's plugin runs before hookbus's: it saw the call as the model wrote it.
    [mine] = [c for c in users_calls(ws) if c["tool"] == "task"]
    assert mine["args"]["subagent_type"] == "hookbus-premium"
    return run
