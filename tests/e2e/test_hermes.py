"""The real Hermes Agent 0.19.0, headless and offline, with hookbus installed in its home.

Each test scripts the model (a fake OpenAI Chat Completions API on 127.0.0.1), installs
hookbus with ``hookbus install --host hermes`` (its directory plugin, the default) beside
a plugin of the user's own, runs ``hermes -z`` and checks what really happened: whether
the command ran (``ran_proof.txt``), what the handlers got, what the model was told, how
long the tool call waited, and what hookbus wrote to its diagnostics.

Hermes runs in its own virtual environment, where hookbus is not importable: the plugin
runs the hookbus that installed it (this checkout's interpreter) by absolute path.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from . import hosts
from .conftest import GOLDEN, skip_loudly
from .harness import Workspace, capturing_goldens, dispatches
from .hermes_host import CONFIG, Hermes, HermesRun, hookbus_importable, tool_results

pytestmark = pytest.mark.e2e

PROOF = "ran_proof.txt"
#: The plugin's own bound on one callback (hookbus answers within 8 s of it).
BOUND = 10.0


@pytest.fixture(scope="session")
def hermes_argv(pytestconfig: pytest.Config) -> list[str]:
    try:
        return hosts.command("hermes")
    except hosts.HostUnavailable as exc:
        skip_loudly(pytestconfig, f"Hermes Agent cannot be installed or run: {exc}")


@pytest.fixture
def hermes(hermes_argv: list[str], workspace: Workspace, golden_seen: set[str]) -> Iterator[Hermes]:
    yield Hermes(hermes_argv, workspace).prepare()
    if capturing_goldens():
        workspace.save_goldens(GOLDEN / "hermes" / "real", golden_seen)


def install(hermes: Hermes, handlers: dict[str, Any], *args: str, record: bool = True) -> None:
    ws = hermes.workspace
    ws.install_hookbus(handlers, host="hermes", args=args, record=record,
                       env={"HOOKBUS_CONFIG": str(ws.project / ".hookbus.toml")})  # fmt: skip
    text = hermes.config.read_text()
    assert "# The user's own Hermes settings" in text and "users_plugin" in text, text


def script(marker: str, *turns: dict[str, Any]) -> dict[str, Any]:
    return {"conversations": [{"match": marker, "turns": list(turns)}]}


def terminal(command: str = f"echo hi | tee {PROOF}") -> dict[str, Any]:
    return {"tool_use": {"name": "terminal", "input": {"command": command}}}


def tool_script(marker: str) -> dict[str, Any]:
    """The model runs ``echo hi`` in the terminal, then says it is done."""
    return script(marker, terminal(), {"text": "All done."})


def finished(run: HermesRun) -> None:
    assert run.returncode == 0, run.describe()
    assert run.process.leftovers == (), run.describe()


def kinds(ws: Workspace) -> list[str]:
    return [e["kind"] for e in ws.events()]


def test_a_deny_blocks_the_terminal_and_the_model_reads_why(hermes: Hermes) -> None:
    """A deny handler's reason is the blocked call's result the model reads; the command
    never ran; the user's own plugin still saw the call."""
    install(hermes, {"deny_shell": {"reason": "E2E-DENIED: no shell today"}})
    run = hermes.run("E2E-DENY: run echo", tool_script("E2E-DENY"))
    finished(run)
    assert not (hermes.workspace.project / PROOF).exists()
    assert tool_results(run, "E2E-DENY") == [{"error": "E2E-DENIED: no shell today"}]
    assert "before-tool" in kinds(hermes.workspace)
    assert {"event": "pre_tool_call", "tool_name": "terminal"} in hermes.users_plugin_calls()
    assert [d for d in hermes.workspace.diagnostics() if d["level"] != "info"] == []


def test_a_lone_surrogate_in_the_models_tool_call_is_still_denied(hermes: Hermes) -> None:
    """The model's tool call holds a lone surrogate (``\\udcff``, which its JSON can
    spell): the deny still reaches the model and the command never ran."""
    install(hermes, {"deny_shell": {"reason": "E2E-SURROGATE-DENIED"}})
    command = terminal(f"echo hi \udcff | tee {PROOF}")
    run = hermes.run("E2E-SURROGATE: run echo", script("E2E-SURROGATE", command, {"text": "Done."}))
    finished(run)
    assert not (hermes.workspace.project / PROOF).exists()
    assert tool_results(run, "E2E-SURROGATE") == [{"error": "E2E-SURROGATE-DENIED"}]


@pytest.mark.untrusted_projects
def test_a_projects_trusted_handler_refuses_in_a_session_started_there(hermes: Hermes) -> None:
    """No ``HOOKBUS_CONFIG``: the project's own ``.hookbus.toml``, its handler in the
    project's files. Installed before ``hookbus trust``, its code runs nowhere and no
    plugin is written; trusted, then installed: Hermes started in the project is refused
    the command by the project's handler (the model reads its reason, the command never
    ran); the control, the same session started in another folder, runs it."""
    hermes = dataclasses.replace(hermes, named_config=False)
    ws = hermes.workspace
    ws.install_hookbus({"deny_shell": {"reason": "E2E-PROJECT-DENIED"}}, host="hermes")
    assert not (hermes.hermes_home / "plugins" / "hookbus").exists(), ws.install_output
    for command in (["trust"], ["install", "--host", "hermes"]):
        done = subprocess.run([sys.executable, "-m", "hookbus", *command], cwd=ws.project,
                              env=ws.base_env(), capture_output=True, text=True, timeout=60,
                              check=False)  # fmt: skip
        assert done.returncode == 0, done.stderr
    assert "serves every Hermes session" in done.stdout
    assert (hermes.hermes_home / "plugins" / "hookbus" / "__init__.py").exists()
    run = hermes.run("E2E-PROJECT: run echo", tool_script("E2E-PROJECT"))
    finished(run)
    assert not (ws.project / PROOF).exists()
    assert tool_results(run, "E2E-PROJECT") == [{"error": "E2E-PROJECT-DENIED"}]
    assert "before-tool" in kinds(ws)
    recorded = len(ws.events(other=True))
    elsewhere = ws.root / "elsewhere"
    elsewhere.mkdir()
    control = hermes.run("E2E-ELSEWHERE: run echo", tool_script("E2E-ELSEWHERE"), cwd=elsewhere)
    finished(control)
    assert (elsewhere / PROOF).read_text() == "hi\n"
    [result] = tool_results(control, "E2E-ELSEWHERE")
    assert result["output"] == "hi"
    assert len(ws.events(other=True)) == recorded  # the project's recorder: not there
    assert [d for d in ws.diagnostics() if d["event"] == "hook-unavailable"] == []


def test_shell_hooks_block_too(hermes: Hermes) -> None:
    """``--via hooks``: Hermes runs hookbus's ``config.yaml`` hook itself (consent given by
    ``--accept-hooks``), and the deny reaches the model the same way; no plugin is loaded."""
    install(hermes, {"deny_shell": {"reason": "E2E-SHELL-DENIED"}}, "--via", "hooks")
    assert not (hermes.hermes_home / "plugins" / "hookbus").exists()
    run = hermes.run("E2E-HOOKS: run echo", tool_script("E2E-HOOKS"))
    finished(run)
    assert not (hermes.workspace.project / PROOF).exists()
    assert tool_results(run, "E2E-HOOKS") == [{"error": "E2E-SHELL-DENIED"}]
    assert "before-tool" in kinds(hermes.workspace)


def test_the_entry_point_runs_in_process_instead_of_the_directory_plugin(
    hermes: Hermes,
) -> None:
    """With hookbus importable in Hermes's environment, the ``hermes_agent.plugins`` entry
    point (also named ``hookbus``) replaces the directory plugin: the deny reaches the
    model, each event is handled once, and the directory plugin (whose interpreter is
    gone here, so running it would log ``hook-unavailable``) never ran."""
    ws = hermes.workspace
    (ws.root / "bin").mkdir()
    python = ws.root / "bin" / "python3"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    install(hermes, {"deny_shell": {"reason": "E2E-IN-PROCESS"}}, "--python", str(python))
    python.unlink()
    site = hookbus_importable(ws.root / "site")
    run = hermes.run("E2E-EP: run echo", tool_script("E2E-EP"), python_path=site)
    finished(run)
    assert not (ws.project / PROOF).exists()
    assert tool_results(run, "E2E-EP") == [{"error": "E2E-IN-PROCESS"}]
    natives = [e["native"] for e in ws.events()]
    assert natives.count("pre_tool_call") == 1 and natives.count("pre_llm_call") == 1
    assert [d for d in ws.diagnostics() if d["event"] == "hook-unavailable"] == []


def test_no_opinion_leaves_the_call_untouched(hermes: Hermes) -> None:
    """With only the recorder, the command runs and its output reaches the model; every
    event of the run decodes, the tool events naming the terminal command."""
    install(hermes, {})
    run = hermes.run("E2E-PASS: run echo", tool_script("E2E-PASS"))
    finished(run)
    assert (hermes.workspace.project / PROOF).read_text() == "hi\n"
    [result] = tool_results(run, "E2E-PASS")
    assert result["output"] == "hi"
    events = hermes.workspace.events()
    assert [e["kind"] for e in events] == [
        "session-start", "before-tool", "after-tool", "session-end"]  # fmt: skip
    assert events[1]["tool"]["command"] == f"echo hi | tee {PROOF}"
    assert {e["session_id"] for e in events} == {events[0]["session_id"]}


def test_session_start_context_reaches_the_model(hermes: Hermes) -> None:
    """Context a session-start handler adds is in the first model request's user message."""
    install(hermes, {"session_context": {"text": "E2E-CONTEXT: the house rules"}})
    run = hermes.run("E2E-CTX: say hi", script("E2E-CTX", {"text": "hi"}))
    finished(run)
    first = run.model.conversation("E2E-CTX")[0]
    users = [m for m in first["messages"] if m.get("role") == "user"]
    assert "E2E-CONTEXT: the house rules" in json.dumps(users)


def test_a_subagent_decodes_with_the_childs_identity(hermes: Hermes) -> None:
    """``delegate_task``: its before-tool carries the spawn; subagent-start and -stop name
    the same child, whose own calls run as that subagent; the stop carries its summary."""
    install(hermes, {})
    scenario = {"conversations": [
        {"match": "SUBTASK-XYZ", "turns": [terminal("echo from-subagent"),
                                           {"text": "Subagent finished: printed from-subagent."}]},
        {"match": "E2E-AGENT", "turns": [
            {"tool_use": {"name": "delegate_task",
                          "input": {"goal": "SUBTASK-XYZ: run echo from-subagent"}}},
            {"text": "Main agent done."}]},
    ]}  # fmt: skip
    run = hermes.run("E2E-AGENT: delegate the echo", scenario)
    finished(run)
    events = hermes.workspace.events()
    [start] = [e for e in events if e["kind"] == "subagent-start"]
    [stop] = [e for e in events if e["kind"] == "subagent-stop"]
    assert start["child"] == stop["child"] and start["child"]["role"] == "subagent"
    assert stop["final_text"] == "Subagent finished: printed from-subagent."
    child_calls = [
        e for e in events if e["kind"] == "before-tool" and e["agent"]["role"] == "subagent"
    ]
    assert [e["tool"]["command"] for e in child_calls] == ["echo from-subagent"]
    assert child_calls[0]["agent"]["id"] == start["child"]["id"] == child_calls[0]["session_id"]
    [spawn] = [
        e for e in events if e["kind"] == "before-tool" and e["tool"]["name"] == "delegate_task"
    ]
    assert spawn["agent"]["role"] == "main" and spawn["session_id"] == start["session_id"]


@pytest.mark.parametrize("path", ["directory-plugin", "entry-point"])
@pytest.mark.parametrize("handler", ["sleep_30", "spin_in_c"])
def test_a_stuck_handler_does_not_hold_the_call_past_10_s(
    hermes: Hermes, handler: str, path: str
) -> None:
    """A handler sleeping 30 s, or spinning in C with the GIL held, costs the tool call
    less than the plugin's 10 s bound, by either plugin: the handler runs in another
    process (``hookbus run``'s worker, or one forked from Hermes by the entry point),
    killed at the budget; the call runs (the handler is fail-open), the session
    completes."""
    install(hermes, {handler: None})
    site = hookbus_importable(hermes.workspace.root / "site") if path == "entry-point" else None
    run = hermes.run("E2E-STUCK: run echo", tool_script("E2E-STUCK"), timeout=50,
                     python_path=site)  # fmt: skip
    finished(run)
    assert (hermes.workspace.project / PROOF).exists()
    requests = [r for r in run.model.requests if r.method == "POST"]
    # The call waits between the request that asked for it and the one carrying its result.
    waited = requests[1].t - requests[0].t
    assert waited < BOUND, waited
    # The bus ends a sleeping handler at the budget; only the watchdog ends a spinning one.
    codes = {d["event"] for d in hermes.workspace.diagnostics()}
    assert codes & {"handler-timeout", "watchdog-fired"}, codes


def test_hookbus_gone_blocks_nothing_and_leaves_one_diagnostic(hermes: Hermes) -> None:
    """Installed with an interpreter that then disappears (a removed venv): the plugin
    answers the no-opinion, the command runs, one ``hook-unavailable`` line is logged
    and one ``hookbus:`` line printed, and the session completes."""
    ws = hermes.workspace
    bin_dir = ws.root / "bin"
    bin_dir.mkdir()
    python = bin_dir / "python3"  # this checkout's interpreter, by a path of its own
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    install(hermes, {"deny_shell": {"reason": "never seen"}}, "--python", str(python), record=False)
    python.unlink()
    run = hermes.run("E2E-GONE: run echo", tool_script("E2E-GONE"))
    finished(run)
    assert (ws.project / PROOF).exists()
    [line] = ws.diagnostics()
    assert (line["event"], line["native"]) == ("hook-unavailable", "pre_tool_call")
    said = [x for x in run.process.stderr.splitlines() if x.startswith("hookbus:")]
    assert len(said) == 1, run.describe()


def test_loading_the_plugin_changes_nothing_but_its_own_module(
    hermes: Hermes, hermes_argv: list[str]
) -> None:
    """The installed plugin, loaded as Hermes loads it (``hermes_plugins.hookbus``) in
    Hermes's own interpreter, where hookbus is not importable, and called: ``sys.path``
    is as it was, and ``sys.modules`` gained only the plugin module itself."""
    install(hermes, {"deny_shell": {"reason": "E2E-NO"}})
    init = hermes.hermes_home / "plugins" / "hookbus" / "__init__.py"
    probe = f"""
import importlib.util, json, sys, types
import hermes_cli.plugins  # what Hermes has loaded when it loads plugins
path, modules = list(sys.path), set(sys.modules)
sys.modules.setdefault("hermes_plugins", types.ModuleType("hermes_plugins"))
modules.add("hermes_plugins")
spec = importlib.util.spec_from_file_location("hermes_plugins.hookbus", {str(init)!r})
module = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = module
spec.loader.exec_module(module)
hooks = {{}}
module.register(types.SimpleNamespace(register_hook=lambda name, fn: hooks.setdefault(name, fn)))
reply = hooks["pre_tool_call"](tool_name="terminal", args={{"command": "ls"}}, session_id="s")
try:
    import hookbus
    importable = True
except ImportError:
    importable = False
print(json.dumps({{"path": sys.path == path, "new": sorted(set(sys.modules) - modules),
                  "reply": reply, "hookbus": importable, "modify": module.has_modify()}}))
"""
    python = hermes_argv[0]
    done = subprocess.run([python, "-P", "-c", probe], capture_output=True, text=True,
                          timeout=60, cwd=hermes.workspace.project, check=False,
                          env=hermes.env())  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["hookbus"] is False
    assert found["path"] is True
    assert found["new"] == ["hermes_plugins.hookbus"]
    assert found["reply"] == {"action": "block", "message": "E2E-NO"}
    assert found["modify"] is False  # 0.19.0's own directive code has no modify


def test_install_twice_then_uninstall_gives_the_users_files_back(hermes: Hermes) -> None:
    """Install, install again (same bytes), uninstall: ``config.yaml`` is the user's own
    byte for byte, their plugin untouched, hookbus's plugin folder gone."""
    ws = hermes.workspace
    install(hermes, {"deny_shell": {"reason": "x"}})
    first = hermes.config.read_bytes()
    init = hermes.hermes_home / "plugins" / "hookbus" / "__init__.py"
    plugin = init.read_bytes()
    install(hermes, {"deny_shell": {"reason": "x"}})
    assert (hermes.config.read_bytes(), init.read_bytes()) == (first, plugin)
    env = {**ws.base_env(), "HOOKBUS_CONFIG": str(ws.project / ".hookbus.toml")}
    done = subprocess.run([sys.executable, "-m", "hookbus", "uninstall", "--host", "hermes"],
                          cwd=ws.project, env=env, capture_output=True, text=True, timeout=60,
                          check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert hermes.config.read_text() == CONFIG
    assert not init.parent.exists()
    assert (hermes.hermes_home / "plugins" / "users_plugin" / "__init__.py").exists()
    assert os.listdir(hermes.hermes_home / "plugins") == ["users_plugin"]


# -- the guard ------------------------------------------------------------------------------

PARENT_MODEL = "claude-sonnet-4-5"


def install_guard(hermes: Hermes, delegation: str) -> None:
    """``enable = ["guard"]`` alone, installed; the parent on Sonnet and ``delegation.model``
    set in the user's ``config.yaml`` (Hermes runs every delegate on it)."""
    ws = hermes.workspace
    text = hermes.config.read_text().replace("default: fake-model", f"default: {PARENT_MODEL}")
    hermes.config.write_text(f"{text}delegation:\n  model: {delegation}\n")
    (ws.project / ".hookbus.toml").write_text('enable = ["guard"]\n')
    argv = [sys.executable, "-m", "hookbus", "install", "--host", "hermes"]
    done = subprocess.run(argv, cwd=ws.project, env=hermes.env(), capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def delegation_script() -> dict[str, Any]:
    """The parent delegates a task; the child (if it runs) answers at once."""
    return {"conversations": [
        {"match": "GUARD-CHILD", "turns": [{"text": "Child done."}]},
        {"match": "E2E-GUARD", "turns": [
            {"tool_use": {"name": "delegate_task",
                          "input": {"goal": "GUARD-CHILD: list the tests"}}},
            {"text": "Parent done."}]},
    ]}  # fmt: skip


def test_the_guard_blocks_a_delegate_priced_over_the_parent(hermes: Hermes) -> None:
    """``delegation.model`` (Opus) over the parent's Sonnet: the model reads the guard's
    block as ``delegate_task``'s error, no child request reaches the model, and one
    ``block`` row is recorded."""
    install_guard(hermes, "claude-opus-4-1")
    run = hermes.run("E2E-GUARD: delegate the listing", delegation_script())
    finished(run)
    [told] = tool_results(run, "E2E-GUARD")
    assert told["error"].startswith("hookbus guard: subagent on claude-opus-4-1 is priced above")
    assert "delegation.model" in told["error"]
    assert run.model.conversation("GUARD-CHILD") == []
    assert [r["model"] for r in run.model.model_requests()] == [PARENT_MODEL, PARENT_MODEL]
    [row] = dispatches(hermes.workspace)
    assert (row.action, row.requested_model, row.parent_model) == (
        "block", "claude-opus-4-1", PARENT_MODEL)  # fmt: skip


def test_the_guard_lets_a_cheaper_delegate_run_on_its_model(hermes: Hermes) -> None:
    """A cheaper ``delegation.model`` (Haiku): the child runs, its request on Haiku, and
    one ``pass`` row is recorded."""
    install_guard(hermes, "claude-haiku-4-5")
    run = hermes.run("E2E-GUARD: delegate the listing", delegation_script())
    finished(run)
    child = run.model.conversation("GUARD-CHILD")
    assert [r["model"] for r in child] == ["claude-haiku-4-5"]
    assert [r["model"] for r in run.model.conversation("E2E-GUARD")] == [PARENT_MODEL] * 2
    assert tool_results(run, "E2E-GUARD")[0]["results"][0]["summary"] == "Child done."
    [row] = dispatches(hermes.workspace)
    assert (row.action, row.decided_model, row.parent_model) == (
        "pass", "claude-haiku-4-5", PARENT_MODEL)  # fmt: skip


def test_with_the_server_path_a_warm_server_answers_the_deny(hermes: Hermes) -> None:
    """``install --server`` and a running ``hookbus serve``: the directory plugin hands
    each call to the server over its socket, through the installed client's functions
    (its commands name a missing interpreter: a spawn would be the fallback): the deny
    reaches the model, the command never ran, and the server served every event."""
    from . import warm

    ws = hermes.workspace
    install(hermes, {"deny_shell": {"reason": "E2E-WARM-DENIED: no shell today"}}, "--server")
    plugin = hermes.hermes_home / "plugins" / "hookbus" / "__init__.py"
    text = plugin.read_text()
    assert "'server': {'timeout': " in text
    commands = f"'argv': [{sys.executable!r}"  # running one would be the fallback
    assert commands in text
    plugin.write_text(text.replace(commands, f"'argv': [{str(ws.root / 'nowhere')!r}"))
    config = {"HOOKBUS_CONFIG": str(ws.project / ".hookbus.toml")}
    with warm.server(ws, config):
        run = hermes.run("E2E-WARM: run echo", tool_script("E2E-WARM"))
        served = warm.served(ws, config)
    finished(run)
    assert not (ws.project / PROOF).exists()
    assert tool_results(run, "E2E-WARM") == [{"error": "E2E-WARM-DENIED: no shell today"}]
    assert "before-tool" in kinds(ws)
    assert served == len(ws.events()) > 0
    assert warm.problems(ws) == []
