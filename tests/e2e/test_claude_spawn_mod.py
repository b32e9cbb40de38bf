"""hookbus's Claude plugin and its agent.spawn module in the real Claude Code, offline.

``claude plugin validate`` reads the installed folder as the engine will; then, with the
plugin in ``~/.claude/skills/hookbus/`` (which Claude auto-loads as ``hookbus@skills-dir``),
the fake model's parent turn calls the Agent tool with ``model: "opus"`` while the session
runs on sonnet, and the fake server records the model of every request: the child's show
where it really ran. Against a stand-in guard (``guard_standin.py``) the module's own
behaviour (set, refuse, fail open); against the real guard (``enable = ["guard"]``), the
whole path, through the plugin and through the settings install. Claude Code 2.1.197
loads none of the plugin.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from hookbus.hosts.claude.plugin import guard_argv, render_module
from hookbus.local.store import Store

from .harness import Claude, Run, Workspace

pytestmark = pytest.mark.e2e

STANDIN = [sys.executable, str(Path(__file__).parent.parent / "guard_standin.py")]
#: The parent runs on sonnet; its Agent call asks for opus.
PARENT = ("--model", "sonnet")


def agent_script(marker: str, model: str | None = "opus") -> dict[str, Any]:
    """The parent calls the Agent tool (``model`` requested); the child runs one Bash
    command that prints what it inherited; both then finish."""
    call: dict[str, Any] = {"description": "Echo in subagent", "subagent_type": "general-purpose",
                            "prompt": f"{marker}-CHILD: print the variable"}  # fmt: skip
    if model is not None:
        call["model"] = model
    echo = {"command": "echo mod=${HOOKBUS_CLAUDE_SPAWN_MOD:-unset}", "description": "Echo"}
    return {"conversations": [
        {"match": f"{marker}-CHILD", "turns": [{"tool_use": {"name": "Bash", "input": echo}},
                                               {"text": "Child done."}]},
        {"match": marker, "turns": [{"tool_use": {"name": "Agent", "input": call}},
                                    {"text": "Parent done."}]},
    ]}  # fmt: skip


def plugin_folder(ws: Workspace) -> Path:
    return ws.home / ".claude" / "skills" / "hookbus"


def install_plugin(ws: Workspace, handlers: dict[str, Any], **kwargs: Any) -> Path:
    """``hookbus install --host claude --plugin --scope user`` following the project's
    configuration (``HOOKBUS_CONFIG``); the plugin folder."""
    config = {"HOOKBUS_CONFIG": str(ws.project / ".hookbus.toml")}
    ws.install_hookbus(handlers, args=["--plugin", "--scope", "user"], env=config, **kwargs)
    return plugin_folder(ws)


def plant_module(folder: Path, argv: list[str], wait_ms: int = 10_000) -> None:
    """The module with ``argv`` (the stand-in guard) baked in, named in hooks.json as
    install names it: what install writes once the guard is enabled."""
    hooks_file = folder / "hooks" / "hooks.json"
    hooks = json.loads(hooks_file.read_text())
    hooks_file.write_text(json.dumps({"description": hooks["description"],
                                      "modules": ["./spawn.js"], "hooks": hooks["hooks"]}))  # fmt: skip
    (folder / "hooks" / "spawn.js").write_text(render_module(argv, wait_ms))


def with_standin(ws: Workspace, wait_ms: int = 10_000) -> Path:
    """The plugin installed (the recorder's command hooks) with the module asking the
    stand-in guard, which answers as the run's ``$STANDIN`` says."""
    folder = install_plugin(ws, {})
    plant_module(folder, STANDIN, wait_ms)
    return folder


def install_builtin(ws: Workspace, *args: str) -> None:
    """``enable = ["guard"]`` in the project, and ``hookbus install --host claude ARGS``."""
    (ws.project / ".hookbus.toml").write_text('enable = ["guard"]\n')
    env = {**ws.base_env(), "HOOKBUS_CONFIG": str(ws.project / ".hookbus.toml")}
    done = subprocess.run([sys.executable, "-m", "hookbus", "install", "--host", "claude", *args],
                          cwd=ws.project, env=env, capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def child_models(run: Run, marker: str) -> set[str]:
    models = set(run.model.models(f"{marker}-CHILD"))
    assert models, run.describe()
    return models


def explained(run: Run, debug: Path, workspace: Workspace) -> str:
    """The run, with what explains the guard's answer (it failed once on a loaded
    machine, the child on opus): Claude's debug lines about hooks and models, and
    hookbus's diagnostics."""
    lines = debug.read_text(errors="replace").splitlines() if debug.exists() else []
    said = [line for line in lines if "hook" in line.lower() or "model" in line.lower()]
    log = workspace.state / "diagnostics.jsonl"
    diagnostics = log.read_text(errors="replace") if log.exists() else "(no diagnostics)"
    return (f"{run.describe()}\n--- Claude's debug (hooks, models)\n"
            f"{chr(10).join(said[-60:])}\n--- diagnostics\n{diagnostics[-4000:]}")  # fmt: skip


def child_printed(run: Run, marker: str) -> str:
    """What the child's Bash call printed: the tool results its requests carry."""
    results = [block for body in run.model.conversation(f"{marker}-CHILD")
               for message in body["messages"] if isinstance(message.get("content"), list)
               for block in message["content"] if block.get("type") == "tool_result"]  # fmt: skip
    return json.dumps(results)


def parent_models(run: Run, marker: str) -> set[str]:
    parent = [b for b in run.model.conversation(marker) if f"{marker}-CHILD" not in
              run.model.first_user_text(b)]  # fmt: skip
    return {str(b.get("model")) for b in parent}


def validate(claude: Claude, folder: Path) -> dict[str, Any]:
    done = subprocess.run(
        [str(claude.executable), "plugin", "validate", "--json", str(folder)],
        env={**claude.workspace.base_env()}, capture_output=True, text=True, timeout=120,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def test_claude_validates_the_installed_plugin(claude: Claude, workspace: Workspace) -> None:
    """``claude plugin validate`` passes on the folder install writes, and lists what the
    module hooks (session.start, agent.spawn, the latter with a .catch), calls and sets."""
    folder = install_plugin(workspace, {})
    plant_module(folder, STANDIN)
    report = validate(claude, folder)
    assert report["success"] is True, report
    assert report["manifest"]["errors"] == []
    [hooks] = [c for c in report["contents"] if c["type"] == "hooks"]
    assert hooks["errors"] == [] and hooks["warnings"] == []
    [module] = hooks["modules"]
    assert module["module"] == "./spawn.js"
    assert module["uses"]["events"] == ["session.start", "agent.spawn"]
    assert {"process.run", "env.set"} <= set(module["uses"]["calls"])
    assert module["uses"]["env"]["writes"] == ["HOOKBUS_CLAUDE_SPAWN_MOD"]
    assert hooks["gatingHooks"] == [{"module": "./spawn.js", "pattern": "agent.spawn",
                                     "hook": "agent.spawn", "hasCatch": True}]  # fmt: skip


def test_claude_plugin_test_runs_the_module_in_claudes_engine(
    claude: Claude, workspace: Workspace
) -> None:
    """``claude plugin test`` runs ``tests/claude_mod/spawn.test.ts`` against the installed
    module (its real argv) in Claude Code's own engine: session.start sets the variable;
    cap sets, clear_model clears and refuse denies; a guard that cannot run, exits non-zero
    or prints junk fails open, recorded, the variable cleared."""
    folder = install_plugin(workspace, {})
    plant_module(folder, guard_argv(sys.executable))
    tests = folder / "tests" / "claude"
    tests.mkdir(parents=True)
    shutil.copyfile(Path(__file__).parent.parent / "claude_mod" / "spawn.test.ts",
                    tests / "spawn.test.ts")  # fmt: skip
    done = subprocess.run(
        [str(claude.executable), "plugin", "test", str(folder)], env=workspace.base_env(),
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert " 7 pass" in said and " 0 fail" in said, said


def test_the_module_moves_the_child_onto_the_guards_model(
    claude: Claude, workspace: Workspace
) -> None:
    """The guard answers cap to sonnet: the child's requests run on sonnet, not opus; the
    command hooks see the variable equal to their plugin root, and so does the child's
    Bash (it inherits the variable, not the root)."""
    folder = with_standin(workspace)
    answer = json.dumps({"action": "cap", "model": "sonnet"})
    log = {"STANDIN": answer, "STANDIN_LOG": str(workspace.root / "asked.jsonl")}
    run = claude.run("E2E-CAP: delegate it", agent_script("E2E-CAP"), tools=("Bash", "Agent"),
                     args=PARENT, env=log)  # fmt: skip
    assert run.returncode == 0, run.describe()
    assert all("sonnet" in m for m in parent_models(run, "E2E-CAP")), run.describe()
    assert all("sonnet" in m for m in child_models(run, "E2E-CAP")), run.describe()
    [asked] = [json.loads(x) for x in (workspace.root / "asked.jsonl").read_text().splitlines()]
    assert asked["agent_type"] == "general-purpose" and asked["model"] == "opus"
    assert "sonnet" in asked["parent_model"]
    assert asked["session_id"] == run.output["session_id"]
    assert f"mod={folder}" in child_printed(run, "E2E-CAP")


def test_without_the_module_the_child_runs_on_what_it_asked(
    claude: Claude, workspace: Workspace
) -> None:
    """The control: the same run with a passing guard keeps the child on opus (the fake
    records the model each request names)."""
    with_standin(workspace)
    run = claude.run("E2E-PASS: delegate it", agent_script("E2E-PASS"), tools=("Bash", "Agent"),
                     args=PARENT)  # fmt: skip
    assert run.returncode == 0, run.describe()
    assert all("opus" in m for m in child_models(run, "E2E-PASS")), run.describe()


def test_a_refusal_reaches_the_model_and_no_child_starts(
    claude: Claude, workspace: Workspace
) -> None:
    """The guard refuses: no child request reaches the fake, and the parent's next request
    carries the guard's message as the Agent tool's error."""
    message = "E2E-REFUSE: do the work yourself"
    with_standin(workspace)
    answer = json.dumps({"action": "refuse", "message": message})
    run = claude.run("E2E-REFUSE: delegate it", agent_script("E2E-REFUSE"),
                     tools=("Bash", "Agent"), args=PARENT, env={"STANDIN": answer})  # fmt: skip
    assert run.returncode == 0, run.describe()
    assert run.model.conversation("E2E-REFUSE-CHILD") == []
    after = run.model.conversation("E2E-REFUSE")[-1]
    assert message in json.dumps(after["messages"][-1]["content"]), run.describe()


def test_a_hanging_guard_fails_open(claude: Claude, workspace: Workspace) -> None:
    """The guard hangs past the module's wait: the engine kills it, the child starts on
    what it asked, one spawn-mod-failed line is logged, and the variable is cleared, so the
    child's Bash no longer has it."""
    with_standin(workspace, wait_ms=2000)
    run = claude.run("E2E-HANG: delegate it", agent_script("E2E-HANG"), tools=("Bash", "Agent"),
                     args=PARENT, env={"STANDIN": "hang"})  # fmt: skip
    assert run.returncode == 0, run.describe()
    assert all("opus" in m for m in child_models(run, "E2E-HANG")), run.describe()
    [line] = [d for d in workspace.diagnostics() if d.get("event") == "spawn-mod-failed"]
    assert "still running after 2000ms" in line["message"]
    assert line["session_id"] == run.output["session_id"]
    assert "mod=unset" in child_printed(run, "E2E-HANG")


@pytest.mark.parametrize("claude_version", ["2.1.197"])
def test_an_older_claude_loads_none_of_the_plugin(claude: Claude, workspace: Workspace) -> None:
    """2.1.197 has no mods and does not auto-load ``~/.claude/skills/`` plugins; loaded
    with ``--plugin-dir`` it rejects the whole hooks file, because it names events 2.1.197
    does not know (``PostModelSwitch``, ``PreSkillShellCommand``; ``modules`` alone it
    ignores). So nothing of the plugin runs there, and the child runs on what it asked:
    such a build needs the settings install."""
    folder = with_standin(workspace)
    answer = json.dumps({"action": "cap", "model": "sonnet"})
    for args in (PARENT, (*PARENT, "--plugin-dir", str(folder))):
        run = claude.run("E2E-OLD: delegate it", agent_script("E2E-OLD"),
                         tools=("Bash", "Agent"), args=args, env={"STANDIN": answer})  # fmt: skip
        assert run.returncode == 0, run.describe()
        assert workspace.events() == []
        assert all("opus" in m for m in child_models(run, "E2E-OLD")), run.describe()
        assert "mod=unset" in child_printed(run, "E2E-OLD")


# -- the real guard (issue 11): the child of an over-ceiling Agent call runs on sonnet ----


@pytest.mark.parametrize("how", ["plugin", "settings"])
def test_the_guard_keeps_the_child_on_the_parents_family(
    claude: Claude, workspace: Workspace, how: str
) -> None:
    """With ``enable = ["guard"]``, an Agent call asking for opus under a sonnet parent
    runs on sonnet, with one dispatch row: through the plugin the module decides at
    agent.spawn (Claude's debug log says a hook moved the model, and the PreToolUse
    guard passed it through), through the settings install the PreToolUse guard's
    updatedInput does."""
    debug = workspace.root / "claude-debug.txt"
    args = (*PARENT, "--debug-file", str(debug))
    if how == "plugin":
        install_builtin(workspace, "--plugin", "--scope", "user")
        assert (plugin_folder(workspace) / "hooks" / "spawn.js").is_file()
    else:
        install_builtin(workspace)
    run = claude.run("E2E-GUARD: delegate it", agent_script("E2E-GUARD"),
                     tools=("Bash", "Agent"), args=args)  # fmt: skip
    assert run.returncode == 0, run.describe()
    assert all("sonnet" in m for m in child_models(run, "E2E-GUARD")), explained(
        run, debug, workspace)  # fmt: skip
    [row] = Store(str(workspace.state / "store.sqlite3"), time.monotonic() + 30).dispatches()
    assert (row.host, row.session_id) == ("claude", run.output["session_id"])
    assert (row.agent_type, row.requested_model, row.action) == ("general-purpose", "opus", "cap")
    assert "sonnet" in row.decided_model and "sonnet" in row.parent_model
    moved = "agent.spawn general-purpose: model opus -> sonnet by a hook"
    assert (moved in debug.read_text(errors="replace")) is (how == "plugin")
    assert [d for d in workspace.diagnostics() if d.get("event") == "spawn-mod-failed"] == []
