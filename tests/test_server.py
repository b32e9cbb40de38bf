"""``hookbus serve``, the warm server, as real processes: the real ``serve --detach`` in a
temporary state folder, talked to by a tiny client of the wire protocol written here."""

from __future__ import annotations

import ast
import json
import os
import select
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import compile_now, hookbus_cli, pre_tool, wait_for

import hookbus
from hookbus.runtime.warm import pool, served, server, wire
from hookbus.runtime.warm.client import IDENTITY_ENV
from hookbus.testing import run_cli

ROOT = Path(__file__).resolve().parent.parent

HANDLERS = """
import re, time
import hookbus

@hookbus.handler("before-tool", tools="shell", timeout=2, fail_closed=True)
def guard(event):
    if "rm -rf" in (event.tool.command or ""):
        return hookbus.Reply.deny("no rm -rf")
    return None

@hookbus.handler("before-tool", tools="shell", timeout=25)
def sleepy(event):
    time.sleep(30)

@hookbus.handler("before-tool", tools="shell", timeout=20)
def slow_deny(event):
    time.sleep(3)
    return hookbus.Reply.deny("slow but sure")

@hookbus.handler("before-tool", tools="shell", timeout=10)
def stuck_in_c(event):
    # Catastrophic backtracking: _sre holds the GIL, no Python-level timeout can fire.
    re.match(r"(a+)+$", "a" * 64 + "b")

@hookbus.handler("before-tool", tools="shell", timeout=10)
async def deaf_in_c(event):
    import signal
    signal.signal(signal.SIGALRM, signal.SIG_IGN)  # the worker's own timer cannot end it
    re.match(r"(a+)+$", "a" * 64 + "b")
"""


def project(root: Path, *enable: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "hooks_srv.py").write_text(HANDLERS)
    names = ", ".join(f'"hooks_srv:{name}"' for name in enable)
    (root / ".hookbus.toml").write_text(f"enable = [{names}]\n")
    return root


def users_handlers(module: str, source: str, config: str) -> Path:
    """The user's configuration folder with ``<module>.py`` holding ``source`` and
    ``config.toml`` holding ``config``: handlers the server may keep warm (a project's
    code never runs in it)."""
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "hookbus"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{module}.py").write_text(source)
    (folder / "config.toml").write_text(config)
    compiled = hookbus_cli(folder, "manifest", "--host", "claude", "--scope", "user")
    assert compiled.returncode == 0, compiled.stderr  # its index, before the first call
    return folder


class Client:
    """One connection speaking protocol v1 (independently of :mod:`hookbus.runtime.warm.wire`)."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(60)
        address = wire.Address(path)  # a pytest folder is too long for sockaddr_un
        try:
            self.sock.connect(address.path)
        finally:
            address.close()

    def send(self, header: dict[str, object], *frames: bytes) -> None:
        """All frames in one write, as the client sends them. A server that refuses on the
        header alone may close before reading the rest: its answer is still there to read."""
        data = json.dumps(header).encode()
        try:
            self.sock.sendall(b"".join(len(p).to_bytes(4, "big") + p for p in (data, *frames)))
        except BrokenPipeError:
            pass

    def frame(self) -> bytes | None:
        """The next frame; None when the server closed the connection first."""
        head = self._exactly(4)
        if head is None:
            return None
        return self._exactly(int.from_bytes(head, "big"))

    def _exactly(self, size: int) -> bytes | None:
        data = b""
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            if not chunk:
                return None
            data += chunk
        return data

    def pending(self) -> bool:
        """True while nothing (no answer, no close) has arrived."""
        return not select.select([self.sock], [], [], 0)[0]

    def close(self) -> None:
        self.sock.close()


def header(cwd: Path, op: str = "run", **fields: object) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items()
           if k.startswith("HOOKBUS_") or k in IDENTITY_ENV}  # fmt: skip
    return {"proto": 1, "version": hookbus.__version__, "op": op, "host": "claude",
            "event": None, "timeout": None, "cwd": str(cwd), "env": env, **fields}  # fmt: skip


def ask(
    path: str, cwd: Path, payload: bytes, **fields: object
) -> tuple[dict[str, object], bytes, bytes]:
    """One run request: the answer header, stdout and stderr."""
    client = Client(path)
    try:
        client.send(header(cwd, **fields), payload)
        first = client.frame()
        assert first is not None, "the server closed the connection without an answer"
        answer = json.loads(first)
        if not answer["ok"]:
            return answer, b"", b""
        return answer, client.frame() or b"", client.frame() or b""
    finally:
        client.close()


def start(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return hookbus_cli(cwd, "serve", "--detach", *args)


@pytest.fixture
def state(isolated_environment: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """This test's state folder, with no ``XDG_RUNTIME_DIR`` (the socket goes under it);
    any server started in it stopped afterwards, its children killed."""
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    yield isolated_environment
    stop_all(isolated_environment / "run")


def stop_all(folder: Path) -> None:
    pid_file = folder / wire.pid_name()
    try:
        pid = int(pid_file.read_text())
    except (OSError, ValueError):
        return
    children = Path(f"/proc/{pid}/task/{pid}/children")
    for child in children.read_text().split() if children.exists() else ():
        try:
            os.killpg(int(child), signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    wait_for(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid), "the server's exit")


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] == "Z"
    except OSError:
        return True


def diagnostics(state: Path) -> list[dict[str, object]]:
    log = state / "diagnostics.jsonl"
    return [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []


def sock(state: Path) -> str:
    return str(state / "run" / wire.socket_name())


@pytest.fixture
def guarded(tmp_path: Path, state: Path) -> Path:
    """A project enabling the fail-closed guard, its index compiled, a server running."""
    root = project(tmp_path / "proj", "guard")
    compile_now(root)
    started = start(root)
    assert started.returncode == 0, started.stderr
    return root


@pytest.mark.parametrize("command", ["rm -rf /tmp/x", "ls -la"])
def test_answers_byte_for_byte_as_hookbus_run(guarded: Path, state: Path, command: str) -> None:
    """A request is answered exactly as ``hookbus run`` answers the same payload: the
    guard's deny, and Claude's no-opinion (exit 0, nothing written)."""
    payload = pre_tool(command, guarded)
    cold = run_cli("claude", payload, cwd=guarded)
    answer, out, err = ask(sock(state), guarded, payload)
    assert (answer, out, err) == ({"ok": True, "exit": cold.exit_code}, cold.stdout, cold.stderr)
    if command.startswith("rm"):
        assert json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "deny"
    else:
        assert out == b""


def test_status_then_stop(guarded: Path, state: Path) -> None:
    """``serve --status --json`` shows the pid, version and requests served; ``--stop``
    ends the server and removes its socket and pid file."""
    ask(sock(state), guarded, pre_tool("ls", guarded))
    shown = hookbus_cli(guarded, "serve", "--status", "--json")
    assert shown.returncode == 0, shown.stderr
    status = json.loads(shown.stdout)
    assert (status["version"], status["served"], status["socket"]) == (
        hookbus.__version__,
        1,
        sock(state),
    )
    assert status["rss_kb"] > 0
    assert status["workers"]["count"] == 2
    text = hookbus_cli(guarded, "serve", "--status").stdout
    assert "requests served" in text and "2 workers" in text
    assert server.server_status() is not None
    stopped = hookbus_cli(guarded, "serve", "--stop")
    assert stopped.returncode == 0, stopped.stderr
    assert not (state / "run" / wire.socket_name()).exists()
    assert not (state / "run" / wire.pid_name()).exists()
    assert server.server_status() is None
    assert hookbus_cli(guarded, "serve", "--status").returncode == 1
    codes = [d["event"] for d in diagnostics(state)]
    assert "server-started" in codes
    assert "server-stopped" in codes


@pytest.mark.parametrize("slow", ["sleepy", "stuck_in_c"])
def test_a_hung_handler_delays_no_other_request(tmp_path: Path, state: Path, slow: str) -> None:
    """A handler sleeping 30 s, or holding the GIL in a runaway regex, stalls its own
    request only: another project's request is answered while it is still pending."""
    stuck = project(tmp_path / "stuck", slow)
    with (stuck / ".hookbus.toml").open("a") as f:
        f.write("budget = 25\n")  # the sleeper is pending 25 s: the other request has them
    fine = project(tmp_path / "fine", "guard")
    compile_now(stuck)
    compile_now(fine)
    assert start(fine).returncode == 0
    hanging = Client(sock(state))
    hanging.send(header(stuck, timeout=30.0), pre_tool("ls", stuck))
    answer, out, _ = ask(sock(state), fine, pre_tool("rm -rf /", fine))
    assert answer == {"ok": True, "exit": 0}
    assert b'"permissionDecision":"deny"' in out
    assert hanging.pending()
    hanging.close()


def test_a_server_killed_mid_request_still_answers_it(tmp_path: Path, state: Path) -> None:
    """SIGKILL of the server while a child answers: the child answers all the same, and
    a new server starts at once (no child holds the old one's lock)."""
    root = project(tmp_path / "proj", "slow_deny")
    with (root / ".hookbus.toml").open("a") as f:
        f.write("budget = 20\n")
    compile_now(root)
    assert start(root).returncode == 0
    first = server.server_status()
    assert first is not None
    client = Client(sock(state))
    client.send(header(root, timeout=30.0), pre_tool("ls", root))
    wait_for(lambda: (server.server_status() or first).served == 1, "the request forked")
    os.kill(first.pid, signal.SIGKILL)
    wait_for(lambda: _zombie(first.pid) or not Path(f"/proc/{first.pid}").exists(), "the kill")
    again = start(root)
    assert again.returncode == 0, again.stderr
    answer = json.loads(client.frame() or b"{}")
    out = client.frame() or b""
    client.close()
    assert answer == {"ok": True, "exit": 0}
    assert json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"] == "slow but sure"
    assert server.server_status().pid != first.pid  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("handler", "code"), [("stuck_in_c", "watchdog-fired"), ("deaf_in_c", "server-child-killed")]
)
def test_a_child_past_its_deadline_is_ended_and_its_client_told(
    tmp_path: Path, state: Path, handler: str, code: str
) -> None:
    """A call stuck in C (the GIL held) past its deadline, the request's 2 s: its child
    ends by its own timer past the dispatch's deadline (``watchdog-fired``), or, when a
    handler has silenced that timer, the server kills it a second past the request's
    deadline (``server-child-killed``). Either way the client is told ``unanswered``
    (the installed command's fallback then answers) and the server goes on."""
    stuck = project(tmp_path / "stuck", handler)
    compile_now(stuck)
    assert start(stuck).returncode == 0
    client = Client(sock(state))
    began = time.monotonic()
    client.send(header(stuck, timeout=2.0), pre_tool("ls", stuck))
    status = json.loads(client.frame() or b"{}")
    client.close()
    assert (status["ok"], status["refused"]) == (False, "unanswered"), status
    if code == "server-child-killed":
        assert time.monotonic() - began >= 3.0
    wait_for(lambda: code in [d["event"] for d in diagnostics(state)], "the diagnostic")
    [ended] = [d for d in diagnostics(state) if d["event"] == code]
    assert ended["host"] == "claude"
    assert server.server_status() is not None  # the server itself goes on


@pytest.mark.parametrize(
    ("fields", "refused"),
    [({"version": "0.0.1-other"}, "version"), ({"proto": 2}, "proto"),
     ({"host": "nosuchhost"}, "bad-request"), ({"op": "dance"}, "bad-request")],
)  # fmt: skip
def test_refusals(guarded: Path, state: Path, fields: dict[str, object], refused: str) -> None:
    """Another hookbus version, another protocol, an unknown host or op: one refusal
    frame, which sends the client down the cold path."""
    answer, _, _ = ask(sock(state), guarded, pre_tool("ls", guarded), **fields)
    assert answer["ok"] is False
    assert answer["refused"] == refused
    assert answer["message"]


@pytest.mark.parametrize("name", IDENTITY_ENV)
@pytest.mark.parametrize("value", ["/elsewhere", None])
def test_a_call_of_another_configuration_identity_is_refused(
    guarded: Path, state: Path, name: str, value: str | None
) -> None:
    """A call whose variables that pick the configuration or state (one changed, or
    unset) are not the server's own is refused (its client runs the cold path): code
    its caller picked never loads in a process that serves the user's calls."""
    env = dict(header(guarded)["env"])  # type: ignore[call-overload]
    if value is None and name not in env:
        value = ""  # unset already: set, even empty, is another identity
    if value is None:
        del env[name]
    else:
        env[name] = value
    answer, _, _ = ask(sock(state), guarded, pre_tool("rm -rf /", guarded), env=env)
    assert (answer["ok"], answer["refused"]) == (False, "bad-request")
    assert name in str(answer["message"])
    _, out, _ = ask(sock(state), guarded, pre_tool("rm -rf /", guarded))
    assert b"deny" in out  # its own identity's calls are served


def test_a_frame_over_the_limit_is_refused(guarded: Path, state: Path) -> None:
    """A payload frame over 4 MiB is refused (never read whole)."""
    client = Client(sock(state))
    data = json.dumps(header(guarded)).encode()
    client.sock.sendall(
        len(data).to_bytes(4, "big") + data + (wire.MAX_FRAME + 1).to_bytes(4, "big")
    )
    answer = json.loads(client.frame() or b"{}")
    client.close()
    assert (answer["ok"], answer["refused"]) == (False, "bad-request")


def test_a_silent_client_is_dropped(guarded: Path, state: Path) -> None:
    """A client that connects and sends nothing is refused after the header's bound,
    and the server answers others meanwhile."""
    silent = Client(sock(state))
    _, out, _ = ask(sock(state), guarded, pre_tool("rm -rf /", guarded))
    assert b"deny" in out
    refused = json.loads(silent.frame() or b"{}")
    silent.close()
    assert (refused["ok"], refused["refused"]) == (False, "bad-request")


def test_a_second_server_leaves_the_live_one(guarded: Path, state: Path) -> None:
    """``serve`` with a live server on the socket exits 1 saying so; the first serves on.
    A client's start lock it was started under is removed (a client that lost the race
    to start the first must not keep every other call from starting one for 10 s)."""
    first = server.server_status()
    lock = state / "run" / wire.start_lock()
    lock.touch()
    second = start(guarded)
    assert second.returncode == 1
    assert "another hookbus server runs" in second.stderr
    assert server.server_status().pid == first.pid  # type: ignore[union-attr]
    assert not lock.exists()


def test_stale_socket_and_junk_are_replaced_or_ignored(tmp_path: Path, state: Path) -> None:
    """A dead server's socket is replaced; junk in the folder (files, a folder, an old
    temporary socket name) is left alone and does not stop the server."""
    root = project(tmp_path / "proj", "guard")
    folder = state / "run"
    folder.mkdir(parents=True, mode=0o700)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    address = wire.Address(str(folder / wire.socket_name()))
    dead.bind(address.path)
    address.close()
    dead.close()  # a socket file no one listens on
    (folder / wire.pid_name()).write_text("999999\n")
    (folder / ".server.12345.sock").write_text("junk")
    (folder / "junk.txt").write_bytes(os.urandom(100))
    (folder / "somedir").mkdir()
    started = start(root)
    assert started.returncode == 0, started.stderr
    _, out, _ = ask(sock(state), root, pre_tool("rm -rf /", root))
    assert b"deny" in out
    assert (folder / "junk.txt").exists()
    assert (folder / "somedir").is_dir()
    assert (folder / ".server.12345.sock").read_text() == "junk"


@pytest.mark.parametrize("removed", ["socket", "folder"])
def test_a_server_whose_socket_was_removed_stops(removed: str, tmp_path: Path, state: Path) -> None:
    """Its socket deleted, or its whole folder (a runtime folder cleaned at logout): no
    client can reach that server and its lock no longer keeps another out, so it stops
    within a few seconds, saying why, and the next start listens where clients look."""
    root = project(tmp_path / "proj", "guard")
    assert start(root).returncode == 0
    status = server.server_status()
    assert status is not None
    folder = state / "run"
    if removed == "socket":
        (folder / wire.socket_name()).unlink()
    else:
        shutil.rmtree(folder)
    wait_for(lambda: not Path(f"/proc/{status.pid}").exists() or _zombie(status.pid),
             "the server's exit")  # fmt: skip
    stopped = [d for d in diagnostics(state) if d["event"] == "server-stopped"]
    assert "was removed" in str(stopped[-1]["message"])
    assert start(root).returncode == 0
    _, out, _ = ask(sock(state), root, pre_tool("rm -rf /", root))
    assert b"deny" in out


def test_a_folder_others_may_write_is_refused(tmp_path: Path, state: Path) -> None:
    """A socket folder writable by others, or owned by another user, is refused: no
    server, and ``serve`` says why."""
    folder = state / "run"
    folder.mkdir(parents=True)
    folder.chmod(0o777)
    refused = start(tmp_path)
    assert refused.returncode == 1
    assert "writable by group or others" in refused.stderr
    if os.geteuid() == 0:
        folder.chmod(0o700)
        os.chown(folder, 65534, 65534)
        refused = start(tmp_path)
        assert (refused.returncode, "owned by uid 65534" in refused.stderr) == (1, True)


def test_peer_uid_is_this_users() -> None:
    """SO_PEERCRED on a socket pair names this process and its uid."""
    a, b = socket.socketpair(socket.AF_UNIX)
    try:
        assert server.peer_uid(a) == (os.getpid(), os.geteuid())
    finally:
        a.close()
        b.close()


FOREIGN = """
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(30)
s.connect(sys.argv[1])
hdr = b'{"proto": 1, "version": "%s", "op": "status"}'
try:
    s.sendall(len(hdr).to_bytes(4, "big") + hdr)
    print(repr(s.recv(100)))
except OSError as e:
    print("error", e)
"""


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv"
)
def test_another_user_is_refused(
    tmp_path: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process of another uid that can reach the socket (its folder opened up for the
    test) is closed at once, with no answer, and ``server-refused`` names its uid."""
    runtime = Path(tempfile.mkdtemp(prefix="hookbus-runtime-", dir="/tmp"))
    try:
        runtime.chmod(0o711)
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
        root = project(tmp_path / "proj", "guard")
        assert start(root).returncode == 0
        (runtime / "hookbus").chmod(0o711)
        path = runtime / "hookbus" / wire.socket_name()
        path.chmod(0o666)
        script = FOREIGN % hookbus.__version__
        foreign = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3",
             "-I", "-c", script, str(path)], capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        # Closed at once: an empty read, or a reset or broken pipe if the close came first.
        said = foreign.stdout.strip()
        assert said == "b''" or said.startswith(("error [Errno 104]", "error [Errno 32]")), foreign
        refused = [d for d in diagnostics(state) if d["event"] == "server-refused"]
        assert refused and refused[0]["uid"] == 65534
        mine = wire.ask("status")
        assert isinstance(mine, wire.ServerStatus)
    finally:
        stop_all(runtime / "hookbus")
        shutil.rmtree(runtime, ignore_errors=True)


def test_idle_server_exits(tmp_path: Path, state: Path) -> None:
    """With ``--idle 2`` the server exits by itself once idle, and removes its socket."""
    root = project(tmp_path / "proj", "guard")
    assert start(root, "--idle", "2").returncode == 0
    wait_for(lambda: not server.running(), "the idle exit")
    assert not (state / "run" / wire.socket_name()).exists()
    stopped = [d for d in diagnostics(state) if d["event"] == "server-stopped"]
    assert "idle" in str(stopped[-1]["message"])


def test_reload_after_the_handler_module_changes(tmp_path: Path, state: Path) -> None:
    """Once the server keeps a handler module of the user's warm, editing it makes the
    server re-exec (same pid, same socket), and the next answer uses the new code."""
    user = users_handlers("hooks_srv", HANDLERS, 'enable = ["hooks_srv:guard"]\n')
    root = tmp_path / "proj"
    root.mkdir()
    compile_now(root)
    assert start(root).returncode == 0
    path = sock(state)
    ask(path, root, pre_tool("ls", root))
    wait_for(lambda: warm_count() == 1, "the module kept warm")
    before = server.server_status()
    assert before is not None
    module = user / "hooks_srv.py"
    module.write_text(HANDLERS.replace('"rm -rf" in', '"git push" in').replace(
        "no rm -rf", "no pushing today"))  # fmt: skip
    _, out, _ = ask(path, root, pre_tool("git push", root))
    assert json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"] == "no pushing today"
    wait_for(lambda: "server-reloading" in [d["event"] for d in diagnostics(state)], "the reload")
    wait_for(lambda: server.server_status() is not None, "the re-executed server's answer")
    after = server.server_status()
    assert after is not None
    assert (after.pid, after.started) == (before.pid, before.started)


ENV_HANDLER = """
import hookbus

@hookbus.handler("before-tool", tools="shell", env=("SRV_TEST_MODEL",))
def model(event, ctx):
    own = os.environ.get("HOOKBUS_SRV_OWN", "unset")
    return hookbus.Reply.deny("model=" + ctx.env.get("SRV_TEST_MODEL", "unset") + " own=" + own)
"""


def test_a_call_sees_exactly_the_requests_environment(tmp_path: Path, state: Path) -> None:
    """The variables the request sends are the call's, and only they: one it does not
    send is unset in the call, even though the server's own environment has it."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "envmod.py").write_text("import os\n" + ENV_HANDLER)
    (root / ".hookbus.toml").write_text('enable = ["envmod:model"]\n')
    compile_now(root)
    started = hookbus_cli(root, "serve", "--detach", env={"HOOKBUS_SRV_OWN": "servers"})
    assert started.returncode == 0, started.stderr
    path = sock(state)

    def reason(env: dict[str, str]) -> str:
        _, out, _ = ask(path, root, pre_tool("ls", root), env={**header(root)["env"], **env})  # type: ignore[dict-item]
        return str(json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"])

    assert reason({"SRV_TEST_MODEL": "opus"}) == "model=opus own=unset"
    assert reason({"HOOKBUS_SRV_OWN": "mine"}) == "model=unset own=mine"
    assert reason({}) == "model=unset own=unset"


def warm_count() -> int:
    status = server.server_status()
    return status.warm if status is not None else -1


def test_the_server_keeps_no_projects_module_warm(tmp_path: Path, state: Path) -> None:
    """Two projects each with their own ``hooks_srv.py``: the server imports neither
    (it serves every project), and each project's calls run that project's own code,
    however they alternate."""
    first = project(tmp_path / "first", "guard")
    second = project(tmp_path / "second", "guard")
    (second / "hooks_srv.py").write_text(HANDLERS.replace('"no rm -rf"', '"second says no"'))
    compile_now(first)
    compile_now(second)
    assert start(first).returncode == 0
    path = sock(state)

    def reason(root: Path) -> str:
        _, out, _ = ask(path, root, pre_tool("rm -rf /", root))
        return str(json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"])

    for _ in range(3):
        assert reason(first) == "no rm -rf"
        assert reason(second) == "second says no"
    assert warm_count() == 0


RECORDING = """
import hookbus
from hookbus.local.store import Dispatch

@hookbus.handler("before-tool", tools="shell", timeout=10)
def record(event, ctx):
    deny = (event.tool.command or "").startswith("rm ")
    ctx.store.record(Dispatch(host=event.host, action="deny" if deny else "allow",
                              session_id=event.session_id, call_id=event.tool.call_id or ""))
    return hookbus.Reply.deny("no rm") if deny else hookbus.Reply.allow("fine")
"""
#: The issue's 32 x 200 took 26-76 s here (2 cores shared with other suites), 157 s with
#: two CPU burners besides: over the suite's budget. 32 x 50 took 31-42 s, 54-59 s with
#: the burners; benchmarks/warm_stress.py does 32 x 200 through the installed client.
CLIENTS, REQUESTS = 32, 50


def stress_call(client: int, request: int, root: Path) -> tuple[str, bytes, str]:
    """One stress call's id, payload and the decision it deserves: a third are ``rm``."""
    call_id = f"stress-{client}-{request}"
    deny = (client + request) % 3 == 0
    data = json.loads(pre_tool(f"rm -rf build/{client}" if deny else "ls -la", root))
    data["tool_use_id"] = call_id
    return call_id, json.dumps(data).encode(), "deny" if deny else "allow"


@pytest.mark.stress
@pytest.mark.timeout(180)
def test_32_clients_50_requests_each_one_row_each(tmp_path: Path, state: Path) -> None:
    """32 concurrent clients x 50 requests to a handler writing one store row per call:
    every call answered with its own decision, and exactly one row per call in the
    store, with that decision (benchmarks/warm_stress.py does the same through the
    installed client and reports times and memory)."""
    users_handlers("stress_rows", RECORDING, 'enable = ["stress_rows:record"]\n')
    root = tmp_path / "rows"
    root.mkdir()
    compile_now(root)
    assert start(root).returncode == 0
    path = sock(state)
    # Its row has the golden payload's id, not a stress call's.
    assert b'"allow"' in ask(path, root, pre_tool("ls", root))[1]
    wait_for(lambda: warm_count() == 1, "the module kept warm")
    times: list[float] = []
    failures: list[str] = []
    gate = threading.Barrier(CLIENTS)

    def client(n: int) -> None:
        gate.wait()
        for i in range(REQUESTS):
            call_id, payload, decision = stress_call(n, i, root)
            began = time.perf_counter()
            try:
                answer, out, _ = ask(path, root, payload)
                got = json.loads(out)["hookSpecificOutput"]["permissionDecision"] if out else None
            except Exception as exc:
                failures.append(f"{call_id}: {exc!r}")
                continue
            times.append(time.perf_counter() - began)
            if answer != {"ok": True, "exit": 0} or got != decision:
                failures.append(f"{call_id}: {answer} {out!r}")

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    problems = [(d["event"], d.get("error", d["message"])[-600:])
                for d in diagnostics(state) if d["level"] != "info"]  # fmt: skip
    assert failures == [], problems[:3]
    assert len(times) == CLIENTS * REQUESTS
    db = sqlite3.connect(f"file:{state / 'store.sqlite3'}?mode=ro", uri=True)
    try:
        stored = db.execute(
            "SELECT call_id, action FROM dispatches WHERE call_id LIKE 'stress-%'"
        ).fetchall()
    finally:
        db.close()
    wanted = {call_id: decision for n in range(CLIENTS) for i in range(REQUESTS)
              for call_id, _, decision in [stress_call(n, i, root)]}  # fmt: skip
    assert len(stored) == CLIENTS * REQUESTS  # so no call id has two rows
    assert dict(stored) == wanted
    times.sort()
    status = server.server_status()
    assert status is not None
    print(f"p50 {times[len(times) // 2] * 1000:.1f} ms, p99 {times[int(len(times) * 0.99)] * 1000:.1f} ms, "
          f"server RSS {status.rss_kb} KiB, served {status.served}")  # fmt: skip


CLIENT = ROOT / "hookbus" / "runtime" / "warm" / "client.py"


@pytest.mark.skipif(not CLIENT.exists(), reason="the client is not in this tree yet")
def test_the_clients_protocol_constants_agree() -> None:
    """The stdlib-only client keeps its own copies of the protocol's constants: equal."""
    values: dict[str, object] = {}
    for node in ast.parse(CLIENT.read_text()).body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            try:
                code = compile(ast.Expression(node.value), "client.py", "eval")
                values[node.targets[0].id] = eval(code, {"__builtins__": {}})
            except Exception:
                continue
    for name in ("PROTO", "MAX_FRAME", "ADDRESS_MAX"):
        assert values[name] == getattr(wire, name), name
    from hookbus import __version__
    from hookbus.runtime.intake import MAX_INPUT

    assert (values["VERSION"], values["MAX_INPUT"]) == (__version__, MAX_INPUT)


def test_idle_seconds() -> None:
    """--idle and HOOKBUS_SERVE_IDLE take positive seconds; anything else is 900."""
    assert server.idle_seconds("2.5") == 2.5
    assert server.idle_seconds("0") == server.idle_seconds("x") == 900.0


POOL_HANDLER = """
import os, re, time
import hookbus

@hookbus.handler("before-tool", tools="shell", timeout=25, env=("SRV_POOL_VAR",))
def who(event, ctx):
    with open("pids.txt", "a") as f:
        f.write(f"{os.getpid()}\\n")
    if "hang" in (event.tool.command or ""):
        time.sleep(30)  # on its thread: abandoned at the deadline
    if "gil" in (event.tool.command or ""):
        re.match(r"(a+)+$", "a" * 64 + "b")  # holds the GIL for ages: the call cannot answer
    seen = ctx.env.get("SRV_POOL_VAR", "unset") + " " + os.environ.get("SRV_POOL_LEAK", "none")
    os.environ["SRV_POOL_LEAK"] = "leaked"
    os.chdir("/")
    return hookbus.Reply.deny(seen)
"""


@pytest.fixture
def pooled(tmp_path: Path, state: Path) -> Path:
    """A project whose handler writes its pid to ``pids.txt``, its module kept warm and
    the server's two workers forked after that."""
    root = pool_project(tmp_path / "pooled")
    pool_reason(root)
    wait_for(lambda: warm_count() == 1, "the module kept warm")
    wait_for(lambda: workers() == (2, 0), "two idle workers")
    (root / "pids.txt").unlink()
    return root


def pool_project(root: Path) -> Path:
    """``root`` as a project where the user's own configuration enables
    ``POOL_HANDLER``, its index compiled, a server started for it."""
    users_handlers("poolmod", POOL_HANDLER, 'enable = ["poolmod:who"]\nbudget = 25\n')
    root.mkdir()
    compile_now(root)
    assert start(root).returncode == 0
    return root


def workers() -> tuple[int, int]:
    status = server.server_status()
    return (status.workers.count, status.workers.busy) if status else (-1, -1)


def pool_reason(root: Path, command: str = "ls", **env: str) -> str:
    """The deny reason the handler of ``POOL_HANDLER`` gives for one call."""
    path = sock(Path(os.environ["HOOKBUS_STATE_DIR"]))
    _, out, _ = ask(path, root, pre_tool(command, root), env={**header(root)["env"], **env})  # type: ignore[dict-item]
    return str(json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"])


def pids(root: Path) -> list[int]:
    return [int(x) for x in (root / "pids.txt").read_text().split()]


def test_consecutive_calls_are_answered_by_the_persistent_workers(pooled: Path) -> None:
    """Six calls one after another are answered by the server's two workers, which live
    on (not by the server, not by a fork per call); status counts the workers. (Which
    worker takes a call is a race: a worker says it is idle after its answer is out.)"""
    for _ in range(6):
        pool_reason(pooled)
    answered = set(pids(pooled))
    status = server.server_status()
    assert status is not None
    assert answered <= {int(c) for c in server_children()}
    assert 1 <= len(answered) <= 2
    assert status.pid not in answered
    wait_for(lambda: workers() == (2, 0), "two idle workers")


def test_a_variable_of_one_call_is_absent_in_the_next(pooled: Path) -> None:
    """A declared variable sent by one call, and one its handler set itself, are both
    gone in the next call answered by the same worker."""
    assert pool_reason(pooled, SRV_POOL_VAR="first") == "first none"
    assert pool_reason(pooled) == "unset none"
    assert pool_reason(pooled, SRV_POOL_VAR="third") == "third none"
    assert pool_reason(pooled) == "unset none"
    assert len(set(pids(pooled))) <= 2  # so some worker answered twice


def test_a_worker_holding_the_gil_is_killed_and_replaced(pooled: Path, state: Path) -> None:
    """Handlers holding the GIL in both workers (a runaway regex: the call itself
    cannot answer) occupy those workers only: another call is answered meanwhile by a
    one-shot child; past their dispatch's deadline the kernel ends both (their own
    timer: no thread of theirs can run), the server tells each client ``unanswered``
    (its installed fallback answers; the call must not run again), and new workers
    take their place."""
    hanging = [Client(sock(state)) for _ in range(2)]
    for client in hanging:
        client.send(header(pooled, timeout=2.0), pre_tool("gil", pooled))
    wait_for(lambda: (pooled / "pids.txt").exists() and len(pids(pooled)) == 2, "both starts")
    hung = pids(pooled)
    assert workers() == (2, 2)
    assert pool_reason(pooled) == "unset none"  # by a one-shot child: no worker is idle
    assert pids(pooled)[2] not in hung
    for client in hanging:
        status = json.loads(client.frame() or b"{}")
        assert (status["ok"], status["refused"]) == (False, "unanswered"), status
        assert "deadline passed" in status["message"]
        assert client.frame() is None  # nothing follows
        client.close()
    for pid in hung:
        wait_for(lambda p=pid: not Path(f"/proc/{p}").exists() or _zombie(p), "the kill")
    fired = [d for d in diagnostics(state) if d["event"] == "watchdog-fired"]
    assert len(fired) == 2 and all(d["host"] == "claude" for d in fired)
    assert not [d for d in diagnostics(state) if d["event"] == "server-child-killed"]
    wait_for(lambda: workers() == (2, 0), "the workers replaced")
    assert not set(map(str, hung)) & set(server_children())
    assert len(server_children()) == 2
    assert pool_reason(pooled) == "unset none"
    assert pids(pooled)[-1] not in hung


def test_a_worker_whose_handler_outlived_its_call_is_replaced(pooled: Path) -> None:
    """A sync handler still sleeping past its deadline (2 s) is abandoned: the call
    answers fail-open in time, and that worker ends rather than take another call with
    the handler still running; a new worker replaces it."""
    answer, out, _ = ask(sock(Path(os.environ["HOOKBUS_STATE_DIR"])), pooled,
                         pre_tool("hang", pooled), timeout=2.0)  # fmt: skip
    assert answer == {"ok": True, "exit": 0} and b"deny" not in out
    abandoned = pids(pooled)[0]
    wait_for(lambda: str(abandoned) not in server_children(), "the worker's end")
    wait_for(lambda: workers() == (2, 0), "the worker replaced")
    for _ in range(3):
        assert pool_reason(pooled) == "unset none"
    assert abandoned not in pids(pooled)[1:]


def server_children() -> list[str]:
    status = server.server_status()
    assert status is not None
    return Path(f"/proc/{status.pid}/task/{status.pid}/children").read_text().split()


def test_worker_count() -> None:
    """``HOOKBUS_SERVE_WORKERS`` takes 0 to 16, anything else is 2; a worker's calls
    (``HOOKBUS_SERVE_WORKER_CALLS``) 1 to a million, anything else 1 000."""
    assert pool.size("0") == 0 and pool.size("16") == 16
    assert pool.size("17") == pool.size("-1") == pool.size("x") == pool.size("") == 2
    assert pool.calls("1") == 1 and pool.calls("1000000") == 1_000_000
    assert pool.calls("0") == pool.calls("1000001") == pool.calls("y") == 1000


def test_a_worker_puts_back_exactly_the_environment_and_signals_it_had(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a call set, changed or unset in the environment (names and values that are
    not UTF-8 included) and the signal handlers it replaced are as before the call once
    the worker is clean again; a variable the call did not touch keeps its value."""
    monkeypatch.setenv("SRV_KEPT", "kept")
    monkeypatch.setenv("SRV_CHANGED", "before")
    monkeypatch.setenv("SRV_UNSET", "there")
    os.environb[b"SRV_RAW"] = b"\xff\xfe"
    monkeypatch.delenv("SRV_NEW", raising=False)
    before_env = dict(os.environ)
    before_usr1 = signal.getsignal(signal.SIGUSR1)
    cwd = os.getcwd()
    clean = pool._Clean(served.Warm({}, list(sys.path)))
    try:
        os.environ["SRV_NEW"] = "new"
        os.environ["SRV_CHANGED"] = "after"
        del os.environ["SRV_UNSET"]
        os.environb[b"SRV_RAW"] = b"\xfd"
        os.environb[b"SRV_\xff"] = b"odd"
        signal.signal(signal.SIGUSR1, lambda *_: None)
        clean.restore()
        assert dict(os.environ) == before_env
        assert os.environb[b"SRV_RAW"] == b"\xff\xfe" and b"SRV_\xff" not in os.environb
        assert os.environ["SRV_KEPT"] == "kept" and "SRV_NEW" not in os.environ
        assert signal.getsignal(signal.SIGUSR1) == before_usr1
        clean.restore()  # nothing changed since: nothing to do, nothing lost
        assert dict(os.environ) == before_env
    finally:
        del os.environb[b"SRV_RAW"]
        signal.signal(signal.SIGUSR1, before_usr1)
        os.chdir(cwd)


def test_a_call_importing_code_from_outside_the_installed_places_retires_its_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call that imported a module the worker did not hold, from outside the installed
    places (a folder its own configuration named), ends its worker (``restore`` says so);
    one that imported only installed code (the standard library, hookbus) does not."""
    (tmp_path / "picked_by_the_call.py").write_text("VALUE = 1\n")
    for name in ("picked_by_the_call", "colorsys", "hookbus.cli.doctor"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    clean = pool._Clean(served.Warm({}, list(sys.path)))
    cwd = os.getcwd()
    try:
        import colorsys  # noqa: F401

        import hookbus.cli.doctor  # noqa: F401

        assert clean.restore() is False
        sys.path.insert(0, str(tmp_path))
        import picked_by_the_call  # type: ignore[import-not-found]  # noqa: F401

        assert clean.restore() is True
        assert "picked_by_the_call" not in sys.modules
    finally:
        os.chdir(cwd)


def test_with_no_workers_each_call_has_a_one_shot_child(
    tmp_path: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``HOOKBUS_SERVE_WORKERS=0``: every call is answered by a child of its own, which
    exits once it answered; the status counts no worker."""
    monkeypatch.setenv("HOOKBUS_SERVE_WORKERS", "0")
    root = pool_project(tmp_path / "oneshot")
    for _ in range(3):
        assert pool_reason(root) == "unset none"
    answered = pids(root)
    assert len(set(answered)) == 3
    assert workers() == (0, 0)
    for pid in answered:
        wait_for(lambda p=pid: not Path(f"/proc/{p}").exists() or _zombie(p), "its exit")


def test_a_finished_handler_thread_is_waited_for_an_abandoned_one_is_not() -> None:
    """A worker goes on only when its call left no thread running: one that returned is
    waited for (it is still counted for a moment after its result is in), one asleep
    past the grace is not (in a fresh process: this one has threads of its own)."""
    script = """
import _thread, threading, time
from hookbus.runtime.warm.pool import threads_outlived
done = _thread.allocate_lock(); done.acquire()
_thread.start_new_thread(done.release, ())
done.acquire()
print(threads_outlived(5.0))
started = _thread.allocate_lock(); started.acquire()
_thread.start_new_thread(lambda: (started.release(), time.sleep(60)), ())
started.acquire()
print(threads_outlived(0.05))
"""
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60, check=True)  # fmt: skip
    assert ran.stdout.split() == ["False", "True"]


def test_a_worker_ending_after_its_last_call_loses_no_call(
    tmp_path: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One worker that answers two calls each (``HOOKBUS_SERVE_WORKER_CALLS=2``): calls
    one after another are all answered, by a new worker every two calls (or a one-shot
    child while it is forked); none is handed to a worker that is ending."""
    monkeypatch.setenv("HOOKBUS_SERVE_WORKERS", "1")
    monkeypatch.setenv("HOOKBUS_SERVE_WORKER_CALLS", "2")
    root = pool_project(tmp_path / "turnover")
    for _ in range(30):  # 15 ends, each a chance for the race a lost call would need
        assert pool_reason(root) == "unset none"
    answered = pids(root)
    assert all(answered.count(pid) <= 2 for pid in answered)
    assert len(set(answered)) >= 15
    assert not [d for d in diagnostics(state) if d["event"] != "server-started"]


OPTIONED = """
import msgspec
import hookbus

class Where(msgspec.Struct, frozen=True):
    reason: str

@hookbus.handler("before-tool", tools="shell", timeout=2, options=Where)
def says(event, ctx):
    return hookbus.Reply.deny(ctx.options.reason)
"""


def test_a_handler_with_required_options_is_kept_warm_quietly(tmp_path: Path, state: Path) -> None:
    """A handler of the user's whose options type has a required field is kept warm (its
    module imported in the server) with no ``server-warm-failed``, and calls get its options."""
    users_handlers("opt_srv", OPTIONED,
                   'enable = ["opt_srv:says"]\n\n[handlers."opt_srv:says"]\nreason = "configured"\n')  # fmt: skip
    root = tmp_path / "optioned"
    root.mkdir()
    compile_now(root)
    assert start(root).returncode == 0
    path = sock(state)

    def reason() -> str:
        _, out, _ = ask(path, root, pre_tool("ls", root))
        return str(json.loads(out)["hookSpecificOutput"]["permissionDecisionReason"])

    assert reason() == "configured"
    wait_for(lambda: warm_count() == 1, "the module kept warm")
    assert reason() == "configured"
    assert [d for d in diagnostics(state) if d["event"] == "server-warm-failed"] == []
