"""``hookbus install --host pi``: an extension of hookbus's own in ``.pi/extensions/``
(the user's extensions never touched), only the wanted events baked in, and the extension
itself driven as Pi drives it (Node, the real ``hookbus run`` behind it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support import hookbus_cli, hookbus_inproc, listing

GUARDS = """
import hookbus

@hookbus.handler("before-tool", tools="shell", fail_closed=True, timeout=5)
def shell(event):
    if "rm -rf /" in (event.tool.command or ""):
        return hookbus.Reply.deny("not that")
    if event.tool.command == "make":
        return hookbus.Reply.rewrite({"command": "make -n"})
    return None

@hookbus.handler("session-start")
def hello(event): ...
"""
MINE = 'export default function (pi) { pi.on("tool_call", async () => undefined); }\n'
GOLDEN = Path(__file__).parent / "golden" / "pi" / "real"
NODE = shutil.which("node")
#: Loads an extension as Pi does (its default export given an ``on`` registry), calls
#: the handler of one event with a real payload's event and a context like Pi's, and
#: prints what it returned, the event as it was left, and how long it took.
DRIVER = """
const [path, name, event, cwd] = process.argv.slice(2);
const mod = await import(path);
const handlers = {};
mod.default({ on: (n, f) => { handlers[n] = f; } });
const ev = JSON.parse(event);
const ctx = { cwd, model: { provider: "fake", id: "fake-model" },
  sessionManager: { getSessionId: () => "s-1", getSessionFile: () => null } };
const started = Date.now();
const result = handlers[name] ? await handlers[name](ev, ctx) : "not registered";
console.log(JSON.stringify({ result: result ?? null, event: ev, ms: Date.now() - started,
  registered: Object.keys(handlers) }));
"""


@pytest.fixture
def project(tmp_path: Path, isolated_environment: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "hooks_mod.py").write_text(GUARDS)
    (root / ".hookbus.toml").write_text('enable = ["hooks_mod:shell", "hooks_mod:hello"]\n')
    return root


def extension(project: Path) -> Path:
    return project / ".pi" / "extensions" / "hookbus.ts"


def wanted(project: Path) -> dict[str, Any]:
    text = extension(project).read_text()
    start = text.index("const WANTED = ") + len("const WANTED = ")
    return json.loads(text[start : text.index(";\n", start)])  # type: ignore[no-any-return]


def test_install_writes_an_extension_with_only_the_wanted_events(project: Path) -> None:
    """hookbus.ts, marked as hookbus's: tool_call for bash alone, by absolute path with
    --timeout, a bound 2 s past it and the fail-closed block as its fallback;
    session_start with no tool filter and {} as its fallback; verify is clean."""
    done = hookbus_inproc(project, "install", "--host", "pi", "--no-server")
    assert done.returncode == 0, done.stderr
    assert "hookbus-owned-file" in extension(project).read_text()
    baked = wanted(project)
    assert list(baked) == ["session_start", "tool_call"]
    call = baked["tool_call"]
    assert call["argv"][:4] == [sys.executable, "-E", "-P", call["argv"][3]]
    assert call["argv"][3].endswith("hookbus/__main__.py")
    assert call["argv"][4:] == ["run", "--host", "pi", "--event", "tool_call", "--timeout", "10"]
    assert call["waitMs"] == 12000
    assert call["tools"]["names"] == ["bash"]
    assert call["fallback"]["result"]["block"] is True
    assert (baked["session_start"]["fallback"], baked["session_start"]["tools"]) == ({}, None)
    verify = hookbus_inproc(project, "verify", "--host", "pi")
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_install_install_uninstall_keeps_the_users_extensions(project: Path) -> None:
    """Two installs (the second a no-op, the same bytes), uninstall: our file gone, the
    user's extension and Pi's settings exactly as they were."""
    mine = project / ".pi" / "extensions" / "mine.ts"
    mine.parent.mkdir(parents=True)
    mine.write_text(MINE)
    (project / ".pi" / "settings.json").write_text('{"theme": "dark"}\n')
    assert hookbus_inproc(project, "install", "--host", "pi").returncode == 0
    once = extension(project).read_bytes()
    again = hookbus_inproc(project, "install", "--host", "pi")
    assert again.returncode == 0 and "already up to date" in again.stdout
    assert extension(project).read_bytes() == once
    assert oct(extension(project).stat().st_mode & 0o777) == oct(0o644)
    assert hookbus_inproc(project, "uninstall", "--host", "pi").returncode == 0
    assert not extension(project).exists()
    assert mine.read_text() == MINE
    assert (project / ".pi" / "settings.json").read_text() == '{"theme": "dark"}\n'


def test_uninstall_removes_the_folders_install_made(project: Path) -> None:
    """In a project with no ``.pi/``, uninstall gives back exactly what was there."""
    before = [str(p.relative_to(project)) for p in listing(project)]
    assert hookbus_inproc(project, "install", "--host", "pi").returncode == 0
    assert hookbus_inproc(project, "uninstall", "--host", "pi").returncode == 0
    assert [str(p.relative_to(project)) for p in listing(project)] == before


def test_a_users_own_hookbus_ts_is_refused_and_nothing_wanted_writes_nothing(
    project: Path,
) -> None:
    """An extension of the user's named hookbus.ts is never overwritten; a configuration
    wanting no Pi event writes no file."""
    extension(project).parent.mkdir(parents=True)
    extension(project).write_text(MINE)
    done = hookbus_inproc(project, "install", "--host", "pi")
    assert done.returncode == 1 and "not written by hookbus" in done.stderr
    assert extension(project).read_text() == MINE
    extension(project).unlink()
    (project / ".hookbus.toml").write_text("enable = []\n")
    assert hookbus_inproc(project, "install", "--host", "pi").returncode == 0
    assert not extension(project).exists()


def test_the_user_scope_follows_pi_coding_agent_dir(project: Path, tmp_path: Path) -> None:
    """``--scope user`` writes into ``$PI_CODING_AGENT_DIR/extensions`` and uninstall
    removes it from there, leaving Pi's folder."""
    agent = tmp_path / "agent"
    agent.mkdir()
    user_config = tmp_path / "xdg-config" / "hookbus"
    user_config.mkdir(parents=True)
    (user_config / "config.toml").write_text(
        f'python_path = ["{project}"]\nenable = ["hooks_mod:hello"]\n'
    )
    env = {"PI_CODING_AGENT_DIR": str(agent)}
    done = hookbus_inproc(project, "install", "--host", "pi", "--scope", "user", env=env)
    assert done.returncode == 0, done.stderr
    assert (agent / "extensions" / "hookbus.ts").is_file()
    assert (
        hookbus_inproc(project, "uninstall", "--host", "pi", "--scope", "user", env=env).returncode
        == 0
    )
    assert sorted(p.name for p in agent.rglob("*")) == []


# -- the extension, driven as Pi drives it -------------------------------------------------


def drive(project: Path, name: str, event: dict[str, Any], state: Path) -> dict[str, Any]:
    """Call the installed extension's ``name`` handler with ``event`` in Node."""
    loadable = project / "hookbus.mjs"  # Node imports .mjs; Pi's jiti the .ts itself
    shutil.copyfile(extension(project), loadable)
    (project / "driver.mjs").write_text(DRIVER)
    done = subprocess.run(
        [NODE or "node", str(project / "driver.mjs"), str(loadable), name, json.dumps(event),
         str(project)],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "HOOKBUS_STATE_DIR": str(state)}, cwd=project,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found: dict[str, Any] = json.loads(done.stdout)
    found["stderr"] = done.stderr
    return found


def call(command: str) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((GOLDEN / "tool_call.json").read_text())["payload"]
    event["input"] = {"command": command, "timeout": 5}
    return event


needs_node = pytest.mark.skipif(NODE is None, reason="node is not on PATH")


@needs_node
def test_the_extension_blocks_rewrites_in_place_and_leaves_the_rest(
    project: Path, isolated_environment: Path
) -> None:
    """Through the real hookbus: a deny is Pi's block; a rewrite replaces ``event.input``'s
    keys in the very object Pi runs; a harmless call and an unwanted tool are untouched."""
    assert hookbus_inproc(project, "install", "--host", "pi").returncode == 0
    state = isolated_environment
    denied = drive(project, "tool_call", call("rm -rf /"), state)
    assert denied["result"] == {"block": True, "reason": "not that"}
    rewritten = drive(project, "tool_call", call("make"), state)
    assert (rewritten["result"], rewritten["event"]["input"]) == (None, {"command": "make -n"})
    harmless = drive(project, "tool_call", call("ls"), state)
    assert (harmless["result"], harmless["event"]["input"]) == (
        None,
        {"command": "ls", "timeout": 5},
    )
    other = {**call("rm -rf /"), "toolName": "read", "input": {"path": "x"}}
    assert drive(project, "tool_call", other, state)["result"] is None
    assert drive(project, "tool_result", {}, state)["result"] == "not registered"
    assert not (state / "diagnostics.jsonl").exists() or all(
        json.loads(line)["event"] != "hook-unavailable"
        for line in (state / "diagnostics.jsonl").read_text().splitlines()
    )


@needs_node
@pytest.mark.parametrize("guarded", [True, False])
def test_hookbus_gone_answers_the_fallback_with_one_diagnostic(
    project: Path, isolated_environment: Path, guarded: bool
) -> None:
    """The interpreter baked in is gone: a fail-closed handler's event is blocked, any
    other left alone; one line on stderr and one ``hook-unavailable`` line in the log."""
    if not guarded:
        (project / "hooks_mod.py").write_text(
            GUARDS.replace("fail_closed=True", "fail_closed=False")
        )
    assert hookbus_inproc(project, "install", "--host", "pi").returncode == 0
    text = (
        extension(project).read_text().replace(json.dumps(sys.executable), '"/nonexistent/python"')
    )
    extension(project).write_text(text)
    found = drive(project, "tool_call", call("ls"), isolated_environment)
    if guarded:
        assert found["result"]["block"] is True and "fail-closed" in found["result"]["reason"]
    else:
        assert found["result"] is None
    assert [line for line in found["stderr"].splitlines() if line.startswith("hookbus: ")] == [
        found["stderr"].strip()
    ]  # fmt: skip
    [line] = [
        json.loads(x) for x in (isolated_environment / "diagnostics.jsonl").read_text().splitlines()
    ]
    assert (line["event"], line["host"], line["native"], line["session_id"]) == (
        "hook-unavailable", "pi", "tool_call", "s-1"
    )  # fmt: skip
    assert line["argv"][0] == "/nonexistent/python"
    listed = subprocess.run(
        [sys.executable, "-m", "hookbus", "log", "--json"], capture_output=True, text=True,
        timeout=60, check=False, env={**os.environ, "HOOKBUS_STATE_DIR": str(isolated_environment)},
    )  # fmt: skip
    assert "hook-unavailable" in listed.stdout


@needs_node
def test_the_extension_bounds_its_wait_and_kills_what_it_ran(
    project: Path, isolated_environment: Path, tmp_path: Path
) -> None:
    """hookbus that never answers (a program sleeping 60 s in its place): the extension
    answers the fallback when its own bound expires and leaves no process behind."""
    (project / "hooks_mod.py").write_text(GUARDS.replace("fail_closed=True", "fail_closed=False"))
    assert hookbus_inproc(project, "install", "--host", "pi", "--no-server").returncode == 0
    marker = tmp_path / "hung-marker"
    sleeper = [sys.executable, "-c", f"import time; open({str(marker)!r}, 'w'); time.sleep(60)"]
    replace_argv(project, "tool_call", sleeper)
    text = extension(project).read_text()
    extension(project).write_text(text.replace('"waitMs": 12000', '"waitMs": 2000'))
    started = time.monotonic()
    found = drive(project, "tool_call", call("ls"), isolated_environment)
    assert found["result"] is None and 2000 <= found["ms"] < 20000
    assert time.monotonic() - started < 30
    assert marker.exists()
    alive = subprocess.run(
        ["pgrep", "-f", str(marker)], capture_output=True, text=True, check=False
    )
    assert alive.stdout.strip() == ""
    assert "no answer in 2 s" in found["stderr"]


def test_hookbus_try_finds_the_installed_command(project: Path) -> None:
    """``hookbus try`` reads the command of an event from the extension it would write,
    with its --timeout, and says the event is registered."""
    done = hookbus_cli(project, "try", "--host", "pi", "--event", "tool_call", "--tool", "bash",
                       "--input", '{"command": "rm -rf /"}')  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "--event tool_call --timeout 10" in done.stdout
    assert "not registered" not in done.stdout
    assert '{"result":{"block":true,"reason":"not that"}}' in done.stdout


def test_another_command_form_still_writes_the_absolute_path_and_says_so(project: Path) -> None:
    """``--command path`` cannot apply to an extension that spawns no shell: the absolute
    form is written, with a note."""
    done = hookbus_inproc(project, "install", "--host", "pi", "--command", "path")
    assert done.returncode == 0, done.stderr
    assert "--command path does not apply" in done.stdout + done.stderr
    assert wanted(project)["tool_call"]["argv"][0] == sys.executable


def replace_argv(project: Path, native: str, argv: list[str]) -> None:
    """Bake ``argv`` in place of the installed command of ``native`` (a broken install)."""
    text = extension(project).read_text()
    start = text.index(f'"{native}": {{')
    head, tail = text[:start], text[start:]
    begin = tail.index('"argv": [')
    end = tail.index("]", begin) + 1
    extension(project).write_text(head + tail[:begin] + f'"argv": {json.dumps(argv)}' + tail[end:])


@needs_node
@pytest.mark.parametrize(
    ("argv", "why"),
    [
        (["{python}", "-P", "/nonexistent/hookbus/__main__.py", "run"], "hookbus exited 2"),
        (["/bin/sh", "-c", "echo not json"], 'unreadable answer from hookbus: "not json\\n"'),
        (["/bin/sh", "-c", "echo '[]'"], "unreadable answer"),
        (["/bin/sh", "-c", "echo '{}'; exit 3"], "hookbus exited 3"),
        (["/bin/sh", "-c", "kill -9 $$"], "hookbus was killed by SIGKILL"),
    ],
    ids=["package-gone", "not-json", "not-an-object", "exit-3", "killed"],
)
def test_every_failure_is_the_fallback_and_one_diagnostic(
    project: Path, isolated_environment: Path, argv: list[str], why: str
) -> None:
    """Whatever goes wrong behind the extension, the call is left alone (no fail-closed
    handler here), and one ``hook-unavailable`` line says what it was."""
    (project / "hooks_mod.py").write_text(GUARDS.replace("fail_closed=True", "fail_closed=False"))
    assert hookbus_inproc(project, "install", "--host", "pi", "--no-server").returncode == 0
    replace_argv(project, "tool_call", [a.replace("{python}", sys.executable) for a in argv])
    found = drive(project, "tool_call", call("rm -rf /"), isolated_environment)
    assert (found["result"], found["event"]["input"]["command"]) == (None, "rm -rf /")
    [line] = (isolated_environment / "diagnostics.jsonl").read_text().splitlines()
    assert why in json.loads(line)["message"]
    assert found["stderr"].splitlines() == [f"hookbus: {json.loads(line)['message']}"]
