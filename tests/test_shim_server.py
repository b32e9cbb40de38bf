"""The in-process shims with ``install --server``: OpenCode's and Kilo's plugin and Pi's
extension (run by Node, as their hosts run them) hand a call to the warm server over its
socket and apply its answer as they apply ``hookbus run``'s; with no server they run the
client's command (the cold path, and a server started for the next call); a server that
takes the call and never answers gets the event's fallback at the shim's wait."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_server import FakeServer
from support import hookbus_cli, install_project, wait_for
from test_server import stop_all

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not on PATH")
HOSTS = ["opencode", "kilo", "pi"]
GUARD_FALLBACK = "hookbus could not run, and a fail-closed handler wants this event"
REWRITE = """
import hookbus

@hookbus.handler("before-tool", tools="shell", fail_closed=True, timeout=5)
def shell(event):
    if "rm -rf /" in (event.tool.command or ""):
        return hookbus.Reply.deny("not that")
    if event.tool.command == "make":
        return hookbus.Reply.rewrite({"command": "make -n"})
    return None
"""
#: Loads an installed shim as its host does and calls its pre-tool hook once per command:
#: prints, per call, {"block": reason} or {"args": the call's input as left}, and "ms".
DRIVER = """
const [kind, path, commands] = process.argv.slice(2)
const mod = await import(path)
let call
if (kind === "pi") {
  const handlers = {}
  mod.default({ on: (n, f) => { handlers[n] = f } })
  const ctx = { cwd: process.cwd(), model: null,
    sessionManager: { getSessionId: () => "s-1", getSessionFile: () => null } }
  call = async (command) => {
    const event = { type: "tool_call", toolName: "bash", toolCallId: "c", input: { command } }
    const result = await handlers.tool_call(event, ctx)
    return result && result.block ? { block: result.reason } : { args: event.input }
  }
} else {
  const hooks = await mod.HookbusPlugin({ directory: process.cwd() })
  call = async (command) => {
    const output = { args: { command } }
    try {
      await hooks["tool.execute.before"]({ tool: "bash", sessionID: "s", callID: "c" }, output)
    } catch (e) {
      return { block: e.message }
    }
    return { args: output.args }
  }
}
const results = []
for (const command of JSON.parse(commands)) {
  const started = Date.now()
  const result = await call(command)
  results.push({ ...result, ms: Date.now() - started })
}
console.log(JSON.stringify(results))
"""


@pytest.fixture
def state(isolated_environment: Path) -> Iterator[Path]:
    """The test's state folder (the socket goes in its ``run/``); any server started in it
    stopped afterwards."""
    yield isolated_environment
    stop_all(isolated_environment / "run")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = install_project(tmp_path / "proj")
    (root / "hooks_mod.py").write_text(REWRITE)
    (root / ".hookbus.toml").write_text('enable = ["hooks_mod:shell"]\n')
    return root


def shim(project: Path, host: str) -> Path:
    if host == "pi":
        return project / ".pi" / "extensions" / "hookbus.ts"
    return project / f".{host}" / "plugin" / "hookbus.js"


def install(project: Path, host: str, *flags: str) -> str:
    done = hookbus_cli(project, "install", "--host", host, *flags)
    assert done.returncode == 0, done.stderr
    return shim(project, host).read_text()


def drive(project: Path, host: str, commands: list[str]) -> tuple[list[dict[str, Any]], str]:
    """The installed shim, loaded by Node, asked about each shell command in turn."""
    path = shim(project, host)
    if host == "pi":  # Node imports .mjs; Pi's jiti the .ts itself
        path = shutil.copyfile(path, project / "hookbus-pi.mjs")
    (project / "driver.mjs").write_text(DRIVER)
    kind = "pi" if host == "pi" else "opencode"
    done = subprocess.run(
        [NODE or "node", str(project / "driver.mjs"), kind, str(path), json.dumps(commands)],
        cwd=project, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results, done.stderr


def edit(project: Path, host: str, old: str, new: str) -> None:
    path = shim(project, host)
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def served(project: Path) -> int:
    done = hookbus_cli(project, "serve", "--status", "--json")
    assert done.returncode == 0, done.stderr
    count: int = json.loads(done.stdout)["served"]
    return count


def listening(state: Path) -> bool:
    """A server listens in ``state`` and has written its pid (``stop_all`` finds it)."""
    run = state / "run"
    pid = run / "server.pid"
    return (run / "server.sock").exists() and pid.exists() and pid.read_text().strip() != ""


def problems(state: Path) -> list[dict[str, Any]]:
    log = state / "diagnostics.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    return [d for d in map(json.loads, lines) if d["level"] != "info"]


COMMANDS = ["rm -rf /", "make", "ls"]
ANSWERS = [{"block": "not that"}, {"args": {"command": "make -n"}}, {"args": {"command": "ls"}}]


@pytest.mark.parametrize("host", HOSTS)
def test_no_server_install_bakes_no_server(project: Path, host: str) -> None:
    """With ``--no-server`` the shim spawns ``hookbus run``: no server part."""
    text = install(project, host, "--no-server")
    assert "__main__.py" in text and "client.run()" not in text
    assert ('"server"' not in text) if host != "pi" else ("const SERVER = null;" in text)


@pytest.mark.parametrize("host", HOSTS)
def test_verify_knows_a_shim_installed_with_server(project: Path, host: str) -> None:
    """``verify`` reads the form from the shim itself: up to date after ``--server``;
    against ``--no-server`` it differs, and the fix it names says ``--no-server``."""
    install(project, host, "--server")
    done = hookbus_cli(project, "verify", "--host", host)
    assert done.returncode == 0 and "up to date" in done.stdout, done.stdout
    done = hookbus_cli(project, "verify", "--host", host, "--no-server")
    assert (
        done.returncode == 1
        and f"to fix: hookbus install --host {host} --no-server\n" in done.stdout
    )


@pytest.mark.parametrize("host", HOSTS)
def test_the_warm_server_answers_as_the_cold_path(project: Path, state: Path, host: str) -> None:
    """A server running: the shim's answers (a deny, a rewrite in place, no opinion) are
    the cold path's, the server counts each call, and no process is spawned (the command
    is pointed at a program that does not exist: a spawn would be the fallback)."""
    install(project, host, "--no-server")
    cold, _ = drive(project, host, COMMANDS)
    assert [{k: v for k, v in r.items() if k != "ms"} for r in cold] == ANSWERS
    text = install(project, host, "--server")
    python = re.search(r'"argv": \[\s*"([^"]+)"', text)
    assert python is not None and "client.run()" in text
    edit(project, host, json.dumps(python.group(1)), json.dumps(str(project / "nope")))
    started = hookbus_cli(project, "serve", "--detach")
    assert started.returncode == 0, started.stderr
    before = served(project)
    warm, stderr = drive(project, host, COMMANDS)
    assert [{k: v for k, v in r.items() if k != "ms"} for r in warm] == ANSWERS
    assert served(project) == before + len(COMMANDS)
    assert (stderr, problems(state)) == ("", [])


@pytest.mark.parametrize("host", HOSTS)
def test_no_server_the_clients_command_answers_and_starts_one(
    project: Path, state: Path, host: str
) -> None:
    """No socket: the shim runs the client's command, whose cold path answers (the same
    answers), and which starts a server for the next call, as an installed command would."""
    install(project, host, "--server")
    answers, stderr = drive(project, host, COMMANDS[:1])
    assert [{k: v for k, v in r.items() if k != "ms"} for r in answers] == ANSWERS[:1]
    wait_for(lambda: listening(state), "the server the client started")
    assert served(project) == 0  # the call itself was the cold path's
    assert (stderr, problems(state)) == ("", [])


@pytest.mark.parametrize("host", HOSTS)
def test_a_refusing_server_leaves_the_call_to_the_command(
    project: Path, state: Path, host: str
) -> None:
    """A server of another version refuses: the command (the client) answers from the
    cold path, says so in a ``client-fallback`` diagnostic, and starts no server."""
    install(project, host, "--server")
    fake = FakeServer(state / "run" / "server.sock", "version")
    try:
        answers, _ = drive(project, host, COMMANDS[:1])
    finally:
        fake.close()
    assert [{k: v for k, v in r.items() if k != "ms"} for r in answers] == ANSWERS[:1]
    # Two requests: the shim's, then its command's (the client asks before its cold path).
    assert [h["event"] for h, _ in fake.requests] == [
        "tool.execute.before" if host != "pi" else "tool_call"] * 2  # fmt: skip
    assert [d["event"] for d in problems(state)] == ["client-fallback"]
    assert not (state / "run" / "server.pid").exists()


@pytest.mark.parametrize("host", HOSTS)
def test_a_server_that_never_answers_gets_the_fallback_at_the_wait(
    project: Path, state: Path, host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that takes the call and never answers: the fail-closed guard's fallback
    (the block) at the shim's wait, here 3 s, with one diagnostic naming the server; the
    request carried the call's host, event, timeout, folder and the host's whole
    environment."""
    monkeypatch.setenv("SHIM_ENV_PROBE", "seen")
    text = install(project, host, "--server")
    wait = re.search(r'"(wait_ms|waitMs)": (\d+)', text)
    assert wait is not None
    edit(project, host, wait.group(0), f'"{wait.group(1)}": 3000')
    fake = FakeServer(state / "run" / "server.sock", "hang")
    try:
        [answer], stderr = drive(project, host, COMMANDS[2:])
    finally:
        fake.close()
    assert answer["block"] == GUARD_FALLBACK and 3000 <= answer["ms"] < 30000
    [line] = problems(state)
    assert "no answer from the warm server in 3" in line["message"]
    assert stderr.count("hookbus: ") == 1
    [(head, payload)] = fake.requests
    assert (head["proto"], head["op"], head["host"], head["timeout"], head["cwd"]) == (
        1, "run", host, 10, str(project))  # fmt: skip
    assert head["env"]["HOOKBUS_STATE_DIR"] == str(state)
    assert (head["env"]["SHIM_ENV_PROBE"], head["env"]["PATH"]) == ("seen", os.environ["PATH"])
    assert "ls" in payload.decode()


def test_a_socket_path_past_the_address_limit_is_reached(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A state folder whose socket path is longer than a sockaddr_un holds: the plugin
    connects through its folder's descriptor, as the client does, and the server answers."""
    deep = tmp_path / ("x" * 60) / ("y" * 60)
    monkeypatch.setenv("HOOKBUS_STATE_DIR", str(deep))
    assert len(str(deep / "run" / "server.sock")) > 108
    install(project, "opencode", "--server")
    try:
        started = hookbus_cli(project, "serve", "--detach")
        assert started.returncode == 0, started.stderr
        before = served(project)
        answers, stderr = drive(project, "opencode", COMMANDS[:1])
        assert [{k: v for k, v in r.items() if k != "ms"} for r in answers] == ANSWERS[:1]
        assert (served(project), stderr) == (before + 1, "")
    finally:
        stop_all(deep / "run")


# -- Hermes's directory plugin (Python, in Hermes's process) ---------------------------------

#: Loads the installed plugin as Hermes does and calls its ``pre_tool_call`` callback once
#: per command: prints, per call, the directive it returned and "ms".
HERMES_DRIVER = """
import importlib.util, json, sys, time
spec = importlib.util.spec_from_file_location("hookbus_plugin", sys.argv[1])
plugin = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plugin)
hooks = {}
class Ctx:
    def register_hook(self, name, fn):
        hooks[name] = fn
plugin.register(Ctx())
results = []
for command in json.loads(sys.argv[2]):
    started = time.monotonic()
    got = hooks["pre_tool_call"](tool_name="terminal", args={"command": command},
                                 session_id="s", task_id="t", tool_call_id="c")
    results.append({"got": got, "ms": round((time.monotonic() - started) * 1000)})
print(json.dumps(results))
"""


@pytest.fixture
def hermes(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Hermes home, hookbus's configuration named (Hermes has user settings only)."""
    home = tmp_path / "hermes-home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    monkeypatch.setenv("HOOKBUS_CONFIG", str(project / ".hookbus.toml"))
    (project / ".hookbus.toml").write_text('python_path = ["."]\nenable = ["hooks_mod:shell"]\n')
    return home


def hermes_install(project: Path, home: Path, *flags: str) -> Path:
    done = hookbus_cli(project, "install", "--host", "hermes", *flags)
    assert done.returncode == 0, done.stderr
    return home / "plugins" / "hookbus" / "__init__.py"


def hermes_drive(project: Path, plugin: Path, commands: list[str]) -> tuple[list[Any], str]:
    """The installed plugin, loaded in a Python of its own as Hermes loads it."""
    done = subprocess.run(
        [sys.executable, "-c", HERMES_DRIVER, str(plugin), json.dumps(commands)],
        cwd=project, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results: list[Any] = json.loads(done.stdout)
    return results, done.stderr


def test_hermes_plugin_the_warm_server_answers_as_the_cold_path(
    project: Path, state: Path, hermes: Path
) -> None:
    """With ``--server`` and a server running, the plugin's directives are the cold
    path's, the server counts each call, and no command runs (it names a program that
    does not exist: running it would be the fallback)."""
    plugin = hermes_install(project, hermes, "--no-server")
    cold, _ = hermes_drive(project, plugin, COMMANDS)
    assert cold[0]["got"]["action"] == "block" and "not that" in cold[0]["got"]["message"]
    plugin = hermes_install(project, hermes, "--server")
    text = plugin.read_text()
    assert "'server': {'client': " in text and "client.run()" in text
    plugin.write_text(text.replace(repr(sys.executable), repr(str(project / "nope"))))
    started = hookbus_cli(project, "serve", "--detach")
    assert started.returncode == 0, started.stderr
    before = served(project)
    warm, stderr = hermes_drive(project, plugin, COMMANDS)
    assert [r["got"] for r in warm] == [r["got"] for r in cold]
    assert served(project) == before + len(COMMANDS)
    # Hermes 0.19.0 has no rewrite: the cold and the warm call each say so, nothing else.
    assert stderr == ""
    assert [d["event"] for d in problems(state)] == ["reply-degraded"] * 2


def test_hermes_plugin_without_a_server_runs_the_client_which_starts_one(
    project: Path, state: Path, hermes: Path
) -> None:
    """No server: the client's command answers from the cold path and starts a server."""
    plugin = hermes_install(project, hermes, "--server")
    [answer], stderr = hermes_drive(project, plugin, COMMANDS[:1])
    assert answer["got"]["action"] == "block" and "not that" in answer["got"]["message"]
    wait_for(lambda: listening(state), "the server the client started")
    assert (stderr, problems(state)) == ("", [])


def test_hermes_plugin_a_server_that_never_answers_gets_the_fallback_at_the_bound(
    project: Path, state: Path, hermes: Path
) -> None:
    """A server that takes the call and never answers: the guard's block at the plugin's
    bound (here 3 s), one diagnostic; the request named the host, event and timeout."""
    plugin = hermes_install(project, hermes, "--server")
    text = plugin.read_text()
    assert "'bound': 10.0" in text
    plugin.write_text(text.replace("'bound': 10.0", "'bound': 3.0"))
    fake = FakeServer(state / "run" / "server.sock", "hang")
    try:
        [answer], _ = hermes_drive(project, plugin, COMMANDS[2:])
    finally:
        fake.close()
    assert answer["got"] == {"action": "block", "message": GUARD_FALLBACK}
    assert 3000 <= answer["ms"] < 30000
    [line] = problems(state)
    assert "no answer from the warm server within 3 s" in line["message"]
    [(head, _)] = fake.requests
    assert (head["host"], head["event"], head["timeout"]) == ("hermes", "pre_tool_call", 8)
