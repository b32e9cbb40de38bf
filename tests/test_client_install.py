"""``hookbus install --server``: the installed command runs the warm server's client,
inside the same shell wrapper, and answers with a server, without one, and when the
server takes the request and never answers."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_server import EXIT, STDERR, STDOUT, FakeServer
from support import hookbus_cli, hookbus_inproc, pre_tool

import hookbus
from hookbus.hosts.shared.manifest import CLIENT_LAUNCHER, UNANSWERED_GUARD, interpreter_of
from hookbus.runtime.warm import wire

GUARD = """
import hookbus

@hookbus.handler("before-tool", tools="shell", timeout=2, fail_closed=True, env="GUARD_MODE")
def guard(event):
    if "rm -rf" in (event.tool.command or ""):
        return hookbus.Reply.deny("no rm -rf")
    return None
"""


@pytest.fixture
def state(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short state root (a socket's path is limited to 107 bytes)."""
    root = Path(tempfile.mkdtemp(prefix="hbi"))
    monkeypatch.setenv("HOOKBUS_STATE_DIR", str(root))
    monkeypatch.setenv("HOOKBUS_SERVE_IDLE", "3")
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def project(tmp_path: Path, state: Path) -> Path:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "guard_mod.py").write_text(GUARD)
    (root / ".hookbus.toml").write_text('enable = ["guard_mod:guard"]\n')
    return root


def installed_command(project: Path, *flags: str) -> str:
    done = hookbus_inproc(project, "install", "--host", "claude", *flags)
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    (group,) = settings["hooks"]["PreToolUse"]
    return str(group["hooks"][0]["command"])


def host_runs(command: str, project: Path, payload: bytes) -> subprocess.CompletedProcess[bytes]:
    """``command`` as Claude Code runs a hook: ``/bin/sh -c``, the payload on stdin."""
    return subprocess.run(["/bin/sh", "-c", command], input=payload, capture_output=True,
                          cwd=project, timeout=60, check=False)  # fmt: skip


def test_default_install_runs_the_client(project: Path) -> None:
    """Without a flag the command is the warm server's client; ``--no-server`` and
    ``--command absolute`` write ``hookbus run`` itself."""
    assert CLIENT_LAUNCHER in installed_command(project)
    for flag in ("--no-server", "--command=absolute"):
        command = installed_command(project, flag)
        assert CLIENT_LAUNCHER not in command
        assert "__main__.py run --host claude --event PreToolUse" in command


def test_a_plain_reinstall_keeps_the_form_installed(project: Path) -> None:
    """A reinstall with no flag keeps what the user chose: the cold command after
    ``--no-server``, the ``path`` form after ``--command path``, the client after
    ``--server``; ``--no-server`` on a ``path`` install leaves it a ``path`` install."""
    installed_command(project, "--no-server")
    assert "__main__.py run --host claude" in installed_command(project)
    installed_command(project, "--command", "path")
    assert "; hookbus run --host claude" in installed_command(project)
    assert "; hookbus run --host claude" in installed_command(project, "--no-server")
    installed_command(project, "--server")
    assert CLIENT_LAUNCHER in installed_command(project)


def test_server_install_runs_the_client(project: Path) -> None:
    """``--server`` writes the client's command (absolute interpreter, ``-I -S``), with
    the host's default timeout, and no ``--env`` (the client sends its whole environment)."""
    command = installed_command(project, "--server")
    assert CLIENT_LAUNCHER in command
    assert "-I -S -c" in command
    assert "--host claude --project CLAUDE_PROJECT_DIR: --event PreToolUse --timeout " in command
    assert "--env" not in command
    program, main = interpreter_of(command) or ("", None)
    assert program.endswith("python")
    assert main is not None
    client = Path(main).parent / "runtime" / "warm"
    assert (client / "client.py").is_file()
    assert list((client / "__pycache__").glob("client.*.pyc"))


def test_an_install_naming_the_clients_old_folder_is_drift_and_is_replaced(
    project: Path,
) -> None:
    """Before the client moved into ``hookbus/runtime/warm/``, the server form named the
    package's folder: doctor calls such an install drift with the fix, and ``install``
    replaces its entries (recognised as hookbus's) instead of adding a second set."""
    package = str(Path(hookbus.__file__).parent)
    command = installed_command(project)
    settings = project / ".claude" / "settings.json"
    old = command.replace(f"{package}/runtime/warm", package)
    assert old != command and f"[ -f {package}/client.py ]" in old
    settings.write_text(settings.read_text().replace(
        json.dumps(command)[1:-1], json.dumps(old)[1:-1]))  # fmt: skip
    assert interpreter_of(old) == interpreter_of(command)
    report = json.loads(hookbus_inproc(project, "doctor", "--json").stdout)
    assert any("differ" in p["message"] and "hookbus install --host claude" in p["fix"]
               for p in report["problems"]), report["problems"]  # fmt: skip
    assert installed_command(project) == command  # one entry, the new one


def test_server_install_verifies_and_switches_back(project: Path) -> None:
    """``verify`` recognises the server form as installed; ``--no-server`` writes the
    cold command back."""
    installed_command(project, "--server")
    checked = hookbus_inproc(project, "verify", "--host", "claude")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "up to date" in checked.stdout
    assert CLIENT_LAUNCHER not in installed_command(project, "--no-server")


def test_server_goes_with_the_absolute_form_only(project: Path) -> None:
    """``--server`` with ``--command path`` is refused, naming both."""
    done = hookbus_inproc(project, "install", "--host", "claude", "--server", "--command", "path")
    assert done.returncode != 0
    assert "--command path" in done.stderr


def test_installed_client_command_answers_without_a_server(project: Path, state: Path) -> None:
    """No server: the installed command answers from the cold path (the guard's deny,
    and no opinion for a harmless command)."""
    command = installed_command(project, "--server")
    denied = host_runs(command, project, pre_tool("rm -rf /", project))
    assert denied.returncode == 0
    assert json.loads(denied.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    allowed = host_runs(command, project, pre_tool("ls", project))
    assert (allowed.returncode, allowed.stdout, allowed.stderr) == (0, b"", b"")


def test_installed_client_command_answers_from_a_server(project: Path, state: Path) -> None:
    """A server listening: its reply is the hook's, through the shell wrapper."""
    command = installed_command(project, "--server")
    server = FakeServer(state / "run" / wire.socket_name())
    try:
        result = host_runs(command, project, pre_tool("ls", project))
    finally:
        server.close()
    assert (result.returncode, result.stdout, result.stderr) == (EXIT, STDOUT, STDERR)
    assert len(server.requests) == 1


def test_hung_server_gets_the_commands_fallback(project: Path, state: Path) -> None:
    """A server that never answers, and no index the client can read: the client exits
    1 with no output by the deadline and the wrapper answers the fallback, here the
    refusal a fail-closed guard owes."""
    command = installed_command(project, "--server")
    short = re.sub(r"--timeout [0-9.]+", "--timeout 3", command)
    assert short != command
    shutil.rmtree(state / "index")
    server = FakeServer(state / "run" / wire.socket_name(), "hang")
    try:
        result = host_runs(short, project, pre_tool("ls", project))
    finally:
        server.close()
    assert result.returncode == 0
    reply = json.loads(result.stdout)["hookSpecificOutput"]
    assert reply["permissionDecision"] == "deny"
    assert UNANSWERED_GUARD in reply["permissionDecisionReason"]


SPINNER = """
import re
import hookbus

@hookbus.handler("before-tool", tools="shell", timeout=2, fail_closed=True)
def spinner(event):
    with open("runs.txt", "a") as f:
        f.write("ran\\n")
    if "spin" in (event.tool.command or ""):
        re.match(r"(a+)+$", "a" * 64 + "b")  # _sre holds the GIL: no thread can answer
    return None
"""


def test_a_handler_holding_the_gil_in_the_server_gets_the_fallback_once(
    project: Path, state: Path
) -> None:
    """A fail-closed handler spinning in C with the GIL held, in a real server's worker:
    the worker's own timer ends it past the dispatch's deadline, the server tells the
    client ``unanswered``, and the client answers the refusal its fresh index holds for
    the guard. The call ran once: the client does not run it again on its cold path."""
    (project / "guard_mod.py").write_text(SPINNER)
    (project / ".hookbus.toml").write_text('enable = ["guard_mod:spinner"]\nbudget = 3\n')
    command = installed_command(project)
    started = hookbus_cli(project, "serve", "--detach")
    assert started.returncode == 0, started.stderr
    warmed = host_runs(command, project, pre_tool("ls", project))  # the module warm
    assert (warmed.returncode, warmed.stdout) == (0, b"")
    (project / "runs.txt").unlink()
    result = host_runs(command, project, pre_tool("spin", project))
    assert result.returncode == 0
    reply = json.loads(result.stdout)["hookSpecificOutput"]
    # The client's own answer, from the fresh index (the wrapper's would say it too).
    assert reply == {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                     "permissionDecisionReason": "hookbus: no answer in time; fail-closed "
                                                 "guard_mod:spinner wants it"}  # fmt: skip
    assert (project / "runs.txt").read_text() == "ran\n"
    log = [json.loads(line) for line in (state / "diagnostics.jsonl").read_text().splitlines()]
    assert [d["event"] for d in log if d["level"] != "info"] == ["watchdog-fired"]


def test_in_process_hosts_speak_to_the_server_unless_told_not_to(project: Path) -> None:
    """OpenCode's and Kilo's plugins, Pi's extension and Hermes's plugin ask the warm
    server by default; ``--no-server`` bakes ``hookbus run`` alone, which a plain
    reinstall keeps (the form is read back from the file), and verify finds no drift."""
    hermes = project / "hermes-home"
    files = {"opencode": project / ".opencode" / "plugin" / "hookbus.js",
             "kilo": project / ".kilo" / "plugin" / "hookbus.js",
             "pi": project / ".pi" / "extensions" / "hookbus.ts",
             "hermes": hermes / "plugins" / "hookbus" / "__init__.py"}  # fmt: skip
    # Hermes has user settings only: its configuration is named.
    env = {"HERMES_HOME": str(hermes), "HOOKBUS_CONFIG": str(project / ".hookbus.toml")}
    for host, path in files.items():
        for flags, server in (((), True), (("--no-server",), False), ((), False)):
            done = hookbus_inproc(project, "install", "--host", host, *flags, env=env)
            assert done.returncode == 0, done.stderr
            assert "does not apply" not in done.stdout  # Pi's note on a form it ignores
            text = path.read_text()
            assert (CLIENT_LAUNCHER in text) is server, (host, flags)
            assert server or "__main__.py" in text  # hookbus run, by path
            checked = hookbus_inproc(project, "verify", "--host", host, env=env)
            assert checked.returncode == 0, (host, flags, checked.stdout + checked.stderr)


def test_hook_files_keep_their_form_and_verify_clean(project: Path) -> None:
    """Cline's hook scripts (files hookbus owns, no settings file) get the client by
    default; a plain reinstall keeps ``--no-server``'s scripts; verify and doctor find
    no drift in either form and doctor names it."""
    script = project / ".clinerules" / "hooks" / "PreToolUse"
    for flags, form in (((), "server"), (("--no-server",), "absolute"), ((), "absolute")):
        done = hookbus_inproc(project, "install", "--host", "cline", *flags)
        assert done.returncode == 0, done.stderr
        assert (CLIENT_LAUNCHER in script.read_text()) == (form == "server")
        checked = hookbus_inproc(project, "verify", "--host", "cline")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        report = json.loads(hookbus_inproc(project, "doctor", "--json", "--host", "cline").stdout)
        (install,) = [i for i in report["hosts"][0]["installs"] if i["installed"]]
        assert (install["form"], install["drift"]) == (form, [])


LENIENT = (
    GUARD
    + """

@hookbus.handler("before-tool", tools="shell", timeout=2)
def lenient(event):
    return None
"""
)


def test_a_guard_enabled_after_install_is_honoured_when_the_server_never_answers(
    project: Path, state: Path
) -> None:
    """Installed with a handler that is not fail-closed (the wrapper's fallback: no
    opinion), then a fail-closed guard enabled: a server that takes the call and never
    answers gets, at the client's deadline, the refusal the fresh index holds for the
    guard, not the fallback written before it."""
    (project / "guard_mod.py").write_text(LENIENT)
    (project / ".hookbus.toml").write_text('enable = ["guard_mod:lenient"]\n')
    command = installed_command(project, "--server")
    assert UNANSWERED_GUARD not in command
    short = re.sub(r"--timeout [0-9.]+", "--timeout 3", command)
    (project / ".hookbus.toml").write_text('enable = ["guard_mod:lenient", "guard_mod:guard"]\n')
    assert hookbus_inproc(project, "manifest", "--host", "claude").returncode == 0  # the index
    server = FakeServer(state / "run" / wire.socket_name(), "hang")
    try:
        result = host_runs(short, project, pre_tool("ls", project))
    finally:
        server.close()
    assert (result.returncode, result.stderr) == (0, b"")
    assert json.loads(result.stdout)["hookSpecificOutput"] == {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "hookbus: no answer in time; fail-closed guard_mod:guard "
                                    "wants it"}  # fmt: skip
    assert len(server.requests) == 1
