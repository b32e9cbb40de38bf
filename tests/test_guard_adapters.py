"""The guard through the in-process hosts' adapters: ``hookbus install --host H`` with
``enable = ["guard"]`` into a scratch project, the installed shim or plugin loaded the way
its host loads it (Node for OpenCode's and Kilo's plugin and Pi's extension, an import
with a fake ``ctx`` for Hermes's plugin), its hook called with the payload the host
passes, and the verdict checked where the host would see it: the task's ``output.args``
edited in place, an Error thrown, Pi's event left alone, Hermes's block directive.
Each case also checks the one dispatch row the call recorded."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import hookbus_cli

from hookbus.local.store import Dispatch, open_store

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not on PATH")
SONNET, OPUS = "claude-sonnet-4-5", "claude-opus-4-1"
SECRET = "sk-live-PLANTED-4f9a8b7c6d5e"


def rows() -> list[Dispatch]:
    store = open_store(time.monotonic() + 30)
    try:
        return store.dispatches()
    finally:
        store.close()


def guard_project(root: Path, options: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / ".hookbus.toml").write_text(f'enable = ["guard"]\n{options}')
    return root


def secret_free(state: Path) -> None:
    for path in state.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), f"the planted secret is in {path}"


# -- OpenCode and Kilo (plugin API v1) ------------------------------------------------------

#: Loads the plugin as OpenCode does (``HookbusPlugin(ctx)`` gives the hooks), then calls
#: each ``[hook, input, output]`` in turn, keeping a handle on ``output.args`` to show
#: whether it was edited in place (OpenCode runs the object it passed, not a new one).
OPENCODE_DRIVER = """
const mod = await import(process.argv[2])
const calls = JSON.parse(process.argv[3])
const hooks = await mod.HookbusPlugin({ directory: process.cwd(), worktree: process.cwd() })
const results = []
for (const [name, input, output] of calls) {
  const args = output && output.args
  try {
    await hooks[name](input, output)
    results.push({ ok: true, output, same: !args || output.args === args })
  } catch (e) {
    results.push({ ok: false, error: e.message })
  }
}
console.log(JSON.stringify({ hooks: Object.keys(hooks).sort(), results }))
"""


def chat_message(session: str, model: str) -> list[Any]:
    """``chat.message`` as OpenCode 1.18.33 calls it: the model in the input when the
    prompt named one, and always in ``output.message`` (``session/prompt.ts``)."""
    ref = {"providerID": "anthropic", "modelID": model}
    message = {"id": "msg_1", "role": "user", "sessionID": session, "agent": "build",
               "model": ref}  # fmt: skip
    parts = [{"type": "text", "text": f"Delegate it. {SECRET}", "sessionID": session}]
    return ["chat.message", {"sessionID": session, "agent": "build", "model": ref,
            "messageID": "msg_1"}, {"message": message, "parts": parts}]  # fmt: skip


def task(session: str, agent: str, call: str = "call_1") -> list[Any]:
    args = {"description": "Find tests", "prompt": f"List the tests. {SECRET}",
            "subagent_type": agent}  # fmt: skip
    return ["tool.execute.before", {"tool": "task", "sessionID": session, "callID": call},
            {"args": args}]  # fmt: skip


def drive_opencode(project: Path, host: str, calls: list[Any]) -> dict[str, Any]:
    folder = ".opencode" if host == "opencode" else ".kilo"
    script = project / "drive.mjs"
    script.write_text(OPENCODE_DRIVER)
    plugin = project / folder / "plugin" / "hookbus.js"
    done = subprocess.run(
        [NODE or "node", str(script), str(plugin), json.dumps(calls)],
        cwd=project, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    found: dict[str, Any] = json.loads(done.stdout)
    return found


@pytest.fixture(params=["opencode", "kilo"])
def opencode_host(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@needs_node
def test_opencode_caps_a_premium_task_by_running_it_as_the_parent_profile(
    tmp_path: Path, isolated_environment: Path, opencode_host: str
) -> None:
    """``chat.message`` fills the parent-model cache (Sonnet); the ``task`` to
    ``hookbus-premium`` (Opus) has its very ``output.args`` edited to
    ``hookbus-parent``; one ``cap`` row, no prompt text anywhere."""
    project = guard_project(tmp_path / "proj")
    assert hookbus_cli(project, "install", "--host", opencode_host).returncode == 0
    found = drive_opencode(project, opencode_host, [
        chat_message("ses_parent", SONNET), task("ses_parent", "hookbus-premium")])  # fmt: skip
    assert "tool.execute.before" in found["hooks"] and "chat.message" in found["hooks"]
    _, capped = found["results"]
    assert capped["ok"] and capped["same"], capped
    assert capped["output"]["args"] == {"description": "Find tests",
        "prompt": f"List the tests. {SECRET}", "subagent_type": "hookbus-parent"}  # fmt: skip
    [row] = rows()
    assert (row.host, row.session_id, row.call_id, row.agent_type, row.action) == (
        opencode_host, "ses_parent", "call_1", "hookbus-premium", "cap")  # fmt: skip
    assert (row.parent_model, row.requested_model, row.reasons) == (
        SONNET, "", ("over-parent",))  # fmt: skip
    assert (row.tier, row.decided_model) == ("premium", SONNET), row
    secret_free(isolated_environment)


@needs_node
def test_opencode_output_message_alone_names_the_parents_model(
    tmp_path: Path, isolated_environment: Path
) -> None:
    """``opencode run`` without ``--model`` calls ``chat.message`` with only the
    ``sessionID`` in its input (the model is in ``output.message``, as recorded from the
    real 1.18.33): the cache is still fed, and the premium task is still capped."""
    project = guard_project(tmp_path / "proj")
    assert hookbus_cli(project, "install", "--host", "opencode").returncode == 0
    message = chat_message("ses_bare", SONNET)
    message[1] = {"sessionID": "ses_bare"}
    found = drive_opencode(project, "opencode", [message, task("ses_bare", "hookbus-premium")])
    assert found["results"][1]["output"]["args"]["subagent_type"] == "hookbus-parent"
    assert [(r.action, r.parent_model) for r in rows()] == [("cap", SONNET)]


@needs_node
def test_opencode_blocks_a_task_it_cannot_move_onto_the_parent(
    tmp_path: Path, isolated_environment: Path
) -> None:
    """With no parent profile (``parent = ""``) an over-ceiling task cannot be switched:
    the hook throws, and the Error's message is the guard's text (what the model reads)."""
    project = guard_project(tmp_path / "proj", '[handlers.guard]\nparent = ""\n')
    assert hookbus_cli(project, "install", "--host", "opencode").returncode == 0
    found = drive_opencode(project, "opencode", [
        chat_message("ses_p", "claude-haiku-4-5"), task("ses_p", "hookbus-premium")])  # fmt: skip
    blocked = found["results"][1]
    assert not blocked["ok"]
    assert blocked["error"].startswith("hookbus guard: ") and "opus" in blocked["error"]
    [row] = rows()
    assert (row.action, row.parent_model, row.agent_type) == (
        "block", "claude-haiku-4-5", "hookbus-premium")  # fmt: skip


@needs_node
def test_opencode_passes_a_cheaper_task_untouched(
    tmp_path: Path, isolated_environment: Path
) -> None:
    """A ``hookbus-cheap`` task (Haiku) under an Opus parent: args untouched, one ``pass``
    row; a session whose chat.message named no model is not cached."""
    project = guard_project(tmp_path / "proj")
    assert hookbus_cli(project, "install", "--host", "opencode").returncode == 0
    call = task("ses_rich", "hookbus-cheap")
    found = drive_opencode(project, "opencode", [chat_message("ses_rich", OPUS), call])
    passed = found["results"][1]
    assert passed["ok"] and passed["same"] and passed["output"]["args"] == call[2]["args"]
    assert [(r.action, r.parent_model, r.decided_model) for r in rows()] == [
        ("pass", OPUS, "haiku")]  # fmt: skip


# -- Pi ---------------------------------------------------------------------------------

#: Loads the extension as Pi does (its default export given an ``on`` registry) and calls
#: its ``tool_call`` handler with the event and a context like Pi's.
PI_DRIVER = """
const [path, event, cwd] = process.argv.slice(2)
const mod = await import(path)
const handlers = {}
mod.default({ on: (n, f) => { handlers[n] = f } })
const ev = JSON.parse(event)
const ctx = { cwd, model: { provider: "anthropic", id: "claude-opus-4-1" },
  sessionManager: { getSessionId: () => "pi-session", getSessionFile: () => null } }
const result = await handlers.tool_call(ev, ctx)
console.log(JSON.stringify({ result: result ?? null, event: ev, registered: Object.keys(handlers) }))
"""


@needs_node
def test_pi_records_a_subagent_call_and_changes_nothing(
    tmp_path: Path, isolated_environment: Path
) -> None:
    """Pi's ``subagent`` tool names no model: the extension returns nothing, the event's
    input is as it was, and one ``log`` row says no price was checked (the parent's model
    is the one Pi's ``ctx`` names)."""
    project = guard_project(tmp_path / "proj")
    assert hookbus_cli(project, "install", "--host", "pi").returncode == 0
    loadable = project / "hookbus.mjs"  # Node imports .mjs; Pi's jiti the .ts itself
    shutil.copyfile(project / ".pi" / "extensions" / "hookbus.ts", loadable)
    (project / "driver.mjs").write_text(PI_DRIVER)
    spawn = {"agent": "scout", "task": f"Find the tests. {SECRET}"}
    event = {"type": "tool_call", "toolName": "subagent", "toolCallId": "call_pi",
             "input": dict(spawn)}  # fmt: skip
    done = subprocess.run(
        [NODE or "node", str(project / "driver.mjs"), str(loadable), json.dumps(event),
         str(project)],
        cwd=project, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["registered"] == ["tool_call"]
    assert (found["result"], found["event"]["input"]) == (None, spawn)
    [row] = rows()
    assert (row.host, row.session_id, row.call_id, row.agent_type, row.action) == (
        "pi", "pi-session", "call_pi", "scout", "log")  # fmt: skip
    assert (row.reasons, row.parent_model) == (("no-price-check",), f"anthropic/{OPUS}")
    secret_free(isolated_environment)


# -- Hermes -------------------------------------------------------------------------------

HERMES_HINT = "Do the work in this session, or ask the user to lower or unset delegation.model"


@pytest.fixture
def hermes_home(
    tmp_path: Path, isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A Hermes home whose user settings hookbus's configuration (``HOOKBUS_CONFIG``)
    enables the guard in; the test writes the models into ``config.yaml``."""
    home = tmp_path / "hermes-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    config = guard_project(tmp_path / "proj") / ".hookbus.toml"
    monkeypatch.setenv("HOOKBUS_CONFIG", str(config))
    monkeypatch.chdir(config.parent)
    return home


def models(home: Path, parent: str, delegate: str) -> None:
    (home / "config.yaml").write_text(
        f"model:\n  default: {parent}\n  provider: anthropic\ndelegation:\n  model: {delegate}\n"
    )


def directory_plugin(home: Path) -> dict[str, Callable[..., Any]]:
    """The installed ``plugins/hookbus/__init__.py``, imported as Hermes imports a user
    plugin, and registered with a ``ctx`` that keeps each callback."""
    path = home / "plugins" / "hookbus" / "__init__.py"
    spec = importlib.util.spec_from_file_location("hermes_plugins.hookbus", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found: dict[str, Callable[..., Any]] = {}
    module.register(types.SimpleNamespace(register_hook=found.setdefault))
    return found


def entry_point(monkeypatch: pytest.MonkeyPatch) -> dict[str, Callable[..., Any]]:
    """The ``hermes_agent.plugins`` entry point: :mod:`hookbus.hosts.hermes.plugin` as shipped,
    every event dispatched in-process (:func:`hookbus.runtime.inproc.dispatch`)."""
    from hookbus.hosts.hermes import plugin as hermes_plugin

    monkeypatch.setattr(hermes_plugin, "BAKED", None)
    found: dict[str, Callable[..., Any]] = {}
    hermes_plugin.register(types.SimpleNamespace(register_hook=found.setdefault))
    return found


def delegate(hooks: dict[str, Callable[..., Any]], **args: Any) -> Any:
    """``pre_tool_call`` as Hermes 0.19.0 calls it for ``delegate_task``."""
    return hooks["pre_tool_call"](tool_name="delegate_task", args=args,
                                  session_id="hermes-session", task_id="",
                                  tool_call_id="call_h")  # fmt: skip


@pytest.mark.parametrize("way", ["directory-plugin", "entry-point"])
def test_hermes_blocks_a_delegate_over_the_parent(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch, isolated_environment: Path, way: str
) -> None:
    """``delegation.model`` (Opus) over the parent's (Sonnet): the callback returns
    Hermes's block directive with the guard's text, by either plugin; one ``block`` row
    with both models from ``config.yaml``; no prompt text stored."""
    models(hermes_home, f"anthropic/{SONNET}", f"anthropic/{OPUS}")
    if way == "directory-plugin":
        assert hookbus_cli(Path.cwd(), "install", "--host", "hermes").returncode == 0
        hooks = directory_plugin(hermes_home)
    else:
        hooks = entry_point(monkeypatch)
    reply = delegate(hooks, goal=f"List the tests. {SECRET}")
    assert reply == {"action": "block", "message": (
        f"hookbus guard: subagent on anthropic/{OPUS} is priced above the parent's model "
        f"anthropic/{SONNET}. {HERMES_HINT} in Hermes's config.yaml.")}  # fmt: skip
    [row] = rows()
    assert (row.host, row.session_id, row.action, row.requested_model, row.parent_model) == (
        "hermes", "hermes-session", "block", f"anthropic/{OPUS}", f"anthropic/{SONNET}")  # fmt: skip
    secret_free(isolated_environment)


@pytest.mark.parametrize("way", ["directory-plugin", "entry-point"])
def test_hermes_lets_a_cheaper_delegate_run(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch, way: str
) -> None:
    """A cheaper ``delegation.model`` (Haiku): no directive (the delegate runs), one
    ``pass`` row; ``action: "list"`` spawns nothing and records nothing."""
    models(hermes_home, f"anthropic/{SONNET}", "anthropic/claude-haiku-4-5")
    if way == "directory-plugin":
        assert hookbus_cli(Path.cwd(), "install", "--host", "hermes").returncode == 0
        hooks = directory_plugin(hermes_home)
    else:
        hooks = entry_point(monkeypatch)
    assert delegate(hooks, goal="List the tests") is None
    assert delegate(hooks, action="list") is None
    assert [(r.action, r.decided_model) for r in rows()] == [
        ("pass", "anthropic/claude-haiku-4-5")]  # fmt: skip


def test_the_hermes_plugin_runs_no_hookbus_for_a_tool_the_guard_does_not_want(
    hermes_home: Path,
) -> None:
    """With only the guard enabled, a terminal call runs no hookbus (the index of the
    call's configuration says nobody wants it): it answers no opinion even with the baked
    commands gone, and leaves no diagnostic."""
    assert hookbus_cli(Path.cwd(), "install", "--host", "hermes").returncode == 0
    plugin = hermes_home / "plugins" / "hookbus" / "__init__.py"
    text = plugin.read_text()
    gone = text.replace(f"'argv': [{sys.executable!r}", "'argv': ['/nonexistent/python'")
    assert gone != text
    plugin.write_text(gone)
    hooks = directory_plugin(hermes_home)
    assert hooks["pre_tool_call"](tool_name="terminal", args={"command": "ls"}) is None
    assert not (Path(os.environ["HOOKBUS_STATE_DIR"]) / "diagnostics.jsonl").exists()
