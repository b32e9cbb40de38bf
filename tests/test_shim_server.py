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
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_server import FakeServer
from support import hookbus_cli, install_project, wait_for
from test_client import IMPOSTOR
from test_server import stop_all

from hookbus.hosts.shared import warm
from hookbus.runtime.warm import client, wire

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
    pid = run / wire.pid_name()
    return (run / wire.socket_name()).exists() and pid.exists() and pid.read_text().strip() != ""


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
        and f"fix: run: hookbus install --host {host} --no-server\n" in done.stdout
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
    fake = FakeServer(state / "run" / wire.socket_name(), "version")
    try:
        answers, _ = drive(project, host, COMMANDS[:1])
    finally:
        fake.close()
    assert [{k: v for k, v in r.items() if k != "ms"} for r in answers] == ANSWERS[:1]
    # Two requests: the shim's, then its command's (the client asks before its cold path).
    assert [h["event"] for h, _ in fake.requests] == [
        "tool.execute.before" if host != "pi" else "tool_call"] * 2  # fmt: skip
    assert [d["event"] for d in problems(state)] == ["client-fallback"]
    assert not (state / "run" / wire.pid_name()).exists()


#: What the index owes a call a fail-closed ``hooks_mod:shell`` may want, when the server
#: that took it gave no answer.
OWED = "hookbus: no answer in time; fail-closed hooks_mod:shell wants it"
#: A handler on the same tools that is not fail-closed: installed alone, the event's baked
#: fallback is "change nothing".
LENIENT = 'enable = ["hooks_mod:lenient"]\n'
LENIENT_HANDLER = """

@hookbus.handler("before-tool", tools="shell", timeout=5)
def lenient(event):
    return None
"""


def hang_after(project: Path, state: Path, host: str, commands: list[str]) -> tuple[
        list[dict[str, Any]], str, FakeServer]:  # fmt: skip
    """The installed shim's answers with a server that takes each call and never answers,
    the event's timeout made 3 s (the shim waits for it until 2.75 s)."""
    edit(project, host, '"timeout": 10', '"timeout": 3')
    fake = FakeServer(state / "run" / wire.socket_name(), "hang")
    try:
        answers, stderr = drive(project, host, commands)
    finally:
        fake.close()
    return answers, stderr, fake


@pytest.mark.parametrize("host", HOSTS)
def test_a_server_that_never_answers_gets_what_the_index_owes(
    project: Path, state: Path, host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that takes the call and never answers: at the client's deadline (the
    timeout less 0.25 s) the shim runs the client's command with ``--unanswered``, which
    answers the refusal the index holds for the fail-closed guard, without running the
    call again; the request carried the call's host, event, timeout, folder and
    environment, whole."""
    monkeypatch.setenv("SHIM_ENV_PROBE", "seen")
    install(project, host, "--server")
    [answer], stderr, fake = hang_after(project, state, host, COMMANDS[2:])
    assert answer["block"] == OWED and 2750 <= answer["ms"] < 30000, stderr
    [(head, payload)] = fake.requests  # the command asked no server
    assert (head["proto"], head["op"], head["host"], head["timeout"], head["cwd"]) == (
        1, "run", host, 3, str(project))  # fmt: skip
    assert head["env"]["HOOKBUS_STATE_DIR"] == str(state)
    assert (head["env"]["SHIM_ENV_PROBE"], head["env"]["PATH"]) == ("seen", os.environ["PATH"])
    assert "ls" in payload.decode()


@pytest.mark.parametrize("host", ["opencode", "pi"])
def test_a_guard_enabled_after_install_is_honoured_when_the_server_never_answers(
    project: Path, state: Path, host: str
) -> None:
    """Installed with a handler that is not fail-closed (the baked fallback: change
    nothing), then a fail-closed guard enabled: a server that never answers gets the
    guard's refusal from the index, not the fallback baked before it."""
    (project / "hooks_mod.py").write_text(REWRITE + LENIENT_HANDLER)
    (project / ".hookbus.toml").write_text(LENIENT)
    text = install(project, host, "--server")
    assert GUARD_FALLBACK not in text
    (project / ".hookbus.toml").write_text('enable = ["hooks_mod:lenient", "hooks_mod:shell"]\n')
    assert hookbus_cli(project, "manifest", "--host", host).returncode == 0  # the index
    [answer], _, _ = hang_after(project, state, host, COMMANDS[2:])
    assert answer["block"] == OWED


def test_a_socket_path_past_the_address_limit_is_reached(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A state folder whose socket path is longer than a sockaddr_un holds: the plugin
    connects through its folder's descriptor, as the client does, and the server answers."""
    deep = tmp_path / ("x" * 60) / ("y" * 60)
    monkeypatch.setenv("HOOKBUS_STATE_DIR", str(deep))
    assert len(str(deep / "run" / wire.socket_name())) > 108
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
    assert "'server': {'timeout': " in text and "client.run()" in text
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


def test_hermes_plugin_a_server_that_never_answers_gets_what_the_index_owes(
    project: Path, state: Path, hermes: Path
) -> None:
    """A server that takes the call and never answers: at the plugin's wait (its bound,
    here 3 s, within the client's deadline) the guard's refusal the index holds, one
    diagnostic; the request named the host, event and timeout."""
    plugin = hermes_install(project, hermes, "--server")
    text = plugin.read_text()
    assert "'bound': 10.0" in text
    plugin.write_text(text.replace("'bound': 10.0", "'bound': 3.0"))
    fake = FakeServer(state / "run" / wire.socket_name(), "hang")
    try:
        [answer], _ = hermes_drive(project, plugin, COMMANDS[2:])
    finally:
        fake.close()
    assert answer["got"] == {"action": "block", "message": OWED}
    assert 3000 <= answer["ms"] < 30000
    [line] = problems(state)
    assert "no answer from the warm server within 3 s" in line["message"]
    [(head, _)] = fake.requests
    assert (head["host"], head["event"], head["timeout"]) == ("hermes", "pre_tool_call", 8)


def test_hermes_plugin_a_guard_enabled_after_install_is_honoured_when_the_server_never_answers(
    project: Path, state: Path, hermes: Path
) -> None:
    """Installed with a handler that is not fail-closed (the baked fallback: no opinion),
    then a fail-closed guard enabled: a server that never answers gets the guard's
    refusal from the index, through the client's own functions."""
    (project / "hooks_mod.py").write_text(REWRITE + LENIENT_HANDLER)
    (project / ".hookbus.toml").write_text('python_path = ["."]\n' + LENIENT)
    plugin = hermes_install(project, hermes, "--server")
    assert GUARD_FALLBACK not in plugin.read_text()
    plugin.write_text(plugin.read_text().replace("'bound': 10.0", "'bound': 3.0"))
    (project / ".hookbus.toml").write_text(
        'python_path = ["."]\nenable = ["hooks_mod:lenient", "hooks_mod:shell"]\n')  # fmt: skip
    assert hookbus_cli(project, "manifest", "--host", "hermes").returncode == 0  # the index
    fake = FakeServer(state / "run" / wire.socket_name(), "hang")
    try:
        [answer], _ = hermes_drive(project, plugin, COMMANDS[2:])
    finally:
        fake.close()
    assert answer["got"] == {"action": "block", "message": OWED}


@pytest.mark.parametrize("code", ["256", "1" + "0" * 30, "-1"])
def test_a_server_exit_code_that_is_no_exit_status_leaves_the_call_to_the_command(
    project: Path, state: Path, code: str
) -> None:
    """A server answering an ``exit`` that is no exit status (Node reads 10**30 as an
    integer) is a reply not to trust: the shim runs the client's command, which does
    not trust it either and answers from the cold path, not the event's fallback."""
    install(project, "opencode", "--server")
    fake = FakeServer(state / "run" / wire.socket_name(), exit=code)
    try:
        answers, _ = drive(project, "opencode", COMMANDS[2:])
    finally:
        fake.close()
    assert [{k: v for k, v in r.items() if k != "ms"} for r in answers] == ANSWERS[2:]
    assert len(fake.requests) == 2  # the shim's, then its command's
    assert [d["event"] for d in problems(state)] == ["client-fallback"]


def test_hermes_plugin_a_server_exit_code_that_is_no_exit_status_is_not_trusted(
    project: Path, state: Path, hermes: Path
) -> None:
    """The Hermes plugin reads the reply with the client's own functions: an ``exit`` of
    256 is not trusted, and the client's command answers from the cold path."""
    plugin = hermes_install(project, hermes, "--server")
    fake = FakeServer(state / "run" / wire.socket_name(), exit="256")
    try:
        [answer], stderr = hermes_drive(project, plugin, COMMANDS[2:])
    finally:
        fake.close()
    assert answer["got"] is None and stderr == ""
    assert [d["event"] for d in problems(state)] == ["client-fallback"]


@pytest.mark.parametrize("host", ["opencode", "pi"])
def test_a_state_root_others_may_write_is_never_connected_to(
    project: Path, state: Path, host: str
) -> None:
    """The shim checks the whole path to the socket as the client does: under a state
    root every user may write (its ``run/`` swapped for one with a stand-in listening),
    it never connects; its command, the client, does not either, and answers from the
    cold path."""
    install(project, host, "--server")
    swapped = state / "elsewhere"
    fake = FakeServer(swapped / wire.socket_name())
    try:
        stop_all(state / "run")
        shutil.rmtree(state / "run", ignore_errors=True)
        swapped.rename(state / "run")
        state.chmod(0o777)
        answers, _ = drive(project, host, COMMANDS[:1])
    finally:
        state.chmod(0o700)
        fake.close()
    assert [{k: v for k, v in r.items() if k != "ms"} for r in answers] == ANSWERS[:1]
    assert fake.requests == []


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv"
)
def test_a_socket_another_user_listens_on_gets_nothing_from_the_shim(
    project: Path, state: Path
) -> None:
    """Node cannot ask the kernel who listens: the shim refuses a socket file another
    uid owns (bound by uid 65534, renamed into the user's own folder), sends it nothing,
    and leaves the call to its command (the client, which asks the kernel)."""
    install(project, "opencode", "--server")
    elsewhere = Path(tempfile.mkdtemp(prefix="hbi", dir="/tmp"))
    os.chown(elsewhere, 65534, 65534)
    (state / "run").mkdir(mode=0o700, exist_ok=True)
    impostor = subprocess.Popen(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-I",
         "-c", IMPOSTOR, str(elsewhere / "s.sock")], stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert impostor.stdout is not None
        assert impostor.stdout.readline() == "listening\n"
        os.rename(elsewhere / "s.sock", state / "run" / wire.socket_name())
        answers, _ = drive(project, "opencode", COMMANDS[:1])
        assert [{k: v for k, v in r.items() if k != "ms"} for r in answers] == ANSWERS[:1]
        # One connection only, the client's, closed before a byte was sent.
        assert impostor.stdout.readline() == "received 0\n"
    finally:
        impostor.kill()
        out, _ = impostor.communicate()
        shutil.rmtree(elsewhere, ignore_errors=True)
    assert out == ""


def test_hermes_plugin_a_state_root_others_may_write_is_never_connected_to(
    project: Path, state: Path, hermes: Path
) -> None:
    """The Hermes plugin checks the socket's path with the client's own function: under
    a state root every user may write (its ``run/`` swapped for one with a stand-in
    listening), neither it nor its command connects; the cold path answers."""
    plugin = hermes_install(project, hermes, "--server")
    swapped = state / "elsewhere"
    fake = FakeServer(swapped / wire.socket_name())
    try:
        stop_all(state / "run")
        shutil.rmtree(state / "run", ignore_errors=True)
        swapped.rename(state / "run")
        state.chmod(0o777)
        [answer], _ = hermes_drive(project, plugin, COMMANDS[:1])
    finally:
        state.chmod(0o700)
        fake.close()
    assert answer["got"]["action"] == "block" and "not that" in answer["got"]["message"]
    assert fake.requests == []


def _folder(path: Path, uid: int, mode: int) -> Path:
    path.mkdir(exist_ok=True)
    os.chown(path, uid, uid)
    path.chmod(mode)
    return path


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give folders to another uid")
def test_the_shims_path_check_is_the_clients(tmp_path: Path) -> None:
    """server.js's ``dirProblem`` says what the client's ``dir_problem`` says, word for
    word, over layouts of folders, links, owners and modes (sticky or not)."""
    other = 65534
    base = _folder(tmp_path / "base", 0, 0o1777)
    mine = _folder(base / "mine", 0, 0o700)
    _folder(mine / "run", 0, 0o700)
    theirs = _folder(base / "theirs", other, 0o755)
    _folder(theirs / "run", 0, 0o700)
    _folder(_folder(base / "open", 0, 0o777) / "run", 0, 0o700)
    _folder(mine / "wide", 0, 0o770)
    (mine / "file").write_text("")
    (base / "link").symlink_to(mine)
    (base / "their-link").symlink_to(mine)
    os.lchown(base / "their-link", other, other)
    (mine / "up").symlink_to("../theirs/..")
    (mine / "loop").symlink_to("loop")
    paths = [mine / "run", theirs / "run", base / "open" / "run", mine / "wide",
             mine / "file", base / "link" / "run", base / "their-link" / "run",
             mine / "up" / "mine" / "run", mine / "loop" / "run", mine / "nothing" / "run",
             Path("/"), mine / "run" / ".." / "run"]  # fmt: skip
    source = (Path(client.__file__).parents[2] / "hosts" / "shared" / "server.js").read_text()
    function = re.search(r"^function dirProblem\(folder\) \{\n.*?^\}\n", source, re.S | re.M)
    assert function is not None
    script = ('import { lstatSync, readlinkSync } from "node:fs"\n' + function.group(0)
              + "console.log(JSON.stringify(JSON.parse(process.argv[2]).map(dirProblem)))\n")  # fmt: skip
    (tmp_path / "check.mjs").write_text(script)
    done = subprocess.run([NODE or "node", str(tmp_path / "check.mjs"), json.dumps(list(map(str, paths)))],
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    expected = [client.dir_problem(str(p)) for p in paths]
    assert json.loads(done.stdout) == expected
    # mine/run, reached also through a link and through "..", a missing one, and "/".
    assert sum(e is None for e in expected) == 5


def test_the_shims_send_the_protocol_the_client_states(tmp_path: Path) -> None:
    """What a shim is baked to send (proto, version) is read from the client's file, the
    one statement of each: a client stating another protocol is what the shims then send."""
    assert warm.server_config() == {"proto": client.PROTO, "version": client.VERSION}
    assert wire.PROTO == client.PROTO
    text = Path(client.__file__).read_text()
    assert text.count("\nPROTO = 1\n") == 1
    other = tmp_path / "client.py"
    other.write_text(text.replace("\nPROTO = 1\n", "\nPROTO = 7\n"))
    assert warm.protocol(str(other)) == (7, client.VERSION)
