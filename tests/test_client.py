"""``hookbus/runtime/warm/client.py`` run as a host runs it (stdin in; stdout, stderr and exit code
out) against a stand-in server speaking wire protocol v1, a broken one, or none."""

from __future__ import annotations

import ast
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_server import EXIT, STDERR, STDOUT, FakeServer, Mode
from support import compile_now, guarded_project, pre_tool, wait_for

import hookbus
from hookbus.runtime.warm import client, fallback, wire

CLIENT = Path(client.__file__).resolve()
#: Where Claude Code names its project, as its installed command tells the client.
PROJECT = ("--project", "CLAUDE_PROJECT_DIR:")
#: What the project's fail-closed guard answers for ``rm -rf`` (from the cold path).
DENY = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "no rm -rf",
    }
}


@pytest.fixture
def state(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A short state root (a socket's path is limited to 107 bytes), no runtime folder,
    and any server a client starts for the next call gone soon after the test."""
    root = Path(tempfile.mkdtemp(prefix="hbc"))
    monkeypatch.setenv("HOOKBUS_STATE_DIR", str(root))
    monkeypatch.setenv("HOOKBUS_SERVE_IDLE", "3")
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return guarded_project(tmp_path / "project")


def serve(state: Path, mode: Mode = "answer") -> Iterator[FakeServer]:
    server = FakeServer(state / "run" / wire.socket_name(), mode)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(params=["answer"])
def server(request: pytest.FixtureRequest, state: Path) -> Iterator[FakeServer]:
    yield from serve(state, request.param)


def run_client(
    cwd: Path, payload: bytes, *args: str, timeout: float = 10.0, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    argv = [sys.executable, "-I", "-S", str(CLIENT), "--host", "claude", *PROJECT,
            "--event", "PreToolUse", "--timeout", f"{timeout:g}", *args]  # fmt: skip
    return subprocess.run(argv, input=payload, capture_output=True, cwd=cwd, timeout=60,
                          env={**os.environ, **(env or {})}, check=False)  # fmt: skip


def fallbacks(state: Path) -> list[dict[str, object]]:
    """The ``client-fallback`` diagnostics written so far."""
    log = state / "diagnostics.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    return [d for d in map(json.loads, lines) if d["event"] == "client-fallback"]


def assert_cold_deny(result: subprocess.CompletedProcess[bytes]) -> None:
    assert (result.returncode, result.stderr) == (0, b""), result.stderr
    assert json.loads(result.stdout) == DENY


def test_answer_from_the_server_is_written_back(
    project: Path, server: FakeServer, state: Path
) -> None:
    """The server's stdout, stderr and exit code are the hook's, byte for byte."""
    result = run_client(project, pre_tool("rm -rf /", project))
    assert (result.returncode, result.stdout, result.stderr) == (EXIT, STDOUT, STDERR)
    assert len(server.requests) == 1


def test_request_carries_the_call_and_the_whole_environment(
    project: Path, server: FakeServer, state: Path
) -> None:
    """The header names the call (proto 1, this version, host, event, timeout, cwd) and
    carries the client's whole environment but a variable that is not UTF-8 (JSON cannot
    carry it); an older command's ``--env`` is read and changes nothing; the payload is
    stdin as read."""
    payload = pre_tool("ls", project)
    env = {"SECRET_TOKEN": "x", "GUARD_MODE": "strict", "HOOKBUS_EXTRA": "1", "ELSEWHERE": "/h",
           "NOT_UTF8": "\udcff"}  # fmt: skip
    run_client(project, payload, "--env", "GUARD_MODE,CLAUDE_PROJECT_DIR", env=env)
    ((head, body),) = server.requests
    assert body == payload
    sent = {k: v for k, v in {**os.environ, **env}.items() if k != "NOT_UTF8"}
    assert head == {
        "proto": 1, "version": hookbus.__version__, "op": "run", "host": "claude",
        "event": "PreToolUse", "timeout": 10.0, "cwd": str(project), "env": sent,
    }  # fmt: skip


def test_client_version_is_hookbus_version() -> None:
    """The client cannot import hookbus, so it states the version: the two agree."""
    assert hookbus.__version__ == client.VERSION


def test_no_server_is_answered_by_the_cold_path_and_starts_one(project: Path, state: Path) -> None:
    """With no socket at all the cold path answers, exactly as ``hookbus run`` does, and
    a server start is attempted for the next call (its lock is taken)."""
    payload = pre_tool("rm -rf /", project)
    assert_cold_deny(run_client(project, payload))
    assert (state / "run" / wire.start_lock()).exists()
    assert (state / "run").stat().st_mode & 0o777 == 0o700
    assert fallbacks(state) == []  # no server is the normal case, not a failure
    allowed = run_client(project, pre_tool("ls", project))
    assert (allowed.returncode, allowed.stdout, allowed.stderr) == (0, b"", b"")


@pytest.mark.parametrize("server", ["version", "busy", "junk"], indirect=True)
def test_refusal_or_junk_is_answered_by_the_cold_path(
    project: Path, server: FakeServer, state: Path
) -> None:
    """A server of another version, a busy one, or one answering junk: the cold path
    answers; no second server is started beside a live one that refused."""
    assert_cold_deny(run_client(project, pre_tool("rm -rf /", project)))
    assert len(server.requests) == 1
    started = (state / "run" / wire.start_lock()).exists()
    assert started == (server.mode == "junk")
    wait_for(lambda: fallbacks(state), "the client-fallback diagnostic")
    (found,) = fallbacks(state)
    assert found["socket"] == str(state / "run" / wire.socket_name())
    want = "broken" if server.mode == "junk" else f"refused: {server.mode}"
    assert str(found["reason"]).startswith(want)


@pytest.mark.parametrize("server", ["die-mid-reply"], indirect=True)
def test_server_dying_mid_reply_is_answered_by_the_cold_path(
    project: Path, server: FakeServer
) -> None:
    """A reply cut short (the server killed while writing) is not written: with time
    left, the cold path answers, and nothing of the partial reply reaches the host."""
    assert_cold_deny(run_client(project, pre_tool("rm -rf /", project)))


@pytest.mark.parametrize("server", ["die-late"], indirect=True)
def test_server_dying_near_the_deadline_leaves_the_answer_to_the_fallback(
    project: Path, server: FakeServer
) -> None:
    """A reply cut short with under 0.5 s left (2 s timeout: the deadline 1.75 s after the
    start, the server dies 1.5 s after the request) is not worth a cold path that could
    not import in time: exit 1 and no output, for the shell fallback."""
    result = run_client(project, pre_tool("rm -rf /", project), timeout=2)
    assert (result.returncode, result.stdout, result.stderr) == (1, b"", b"")


@pytest.mark.parametrize("server", ["hang"], indirect=True)
def test_server_that_never_answers_gets_exit_1_before_the_deadline(
    project: Path, server: FakeServer
) -> None:
    """A server that took the request and never answers: exit 1 with no output at the
    call's deadline (the host's timeout less 0.25 s), so the installed command's shell
    fallback answers in time."""
    began = time.monotonic()
    result = run_client(project, pre_tool("rm -rf /", project), timeout=3)
    took = time.monotonic() - began
    assert (result.returncode, result.stdout, result.stderr) == (1, b"", b"")
    assert len(server.requests) == 1
    assert 2.0 <= took < 5.0


@pytest.mark.parametrize("server", ["unanswered"], indirect=True)
def test_told_unanswered_a_fresh_index_gives_the_guards_refusal(
    project: Path, server: FakeServer, state: Path
) -> None:
    """The server says the call's worker ended without an answer: the call is not run
    again; the fresh index says a fail-closed guard may want it, so its refusal is the
    answer (even for a command the guard would allow: it did not get to say so)."""
    compile_now(project)
    result = run_client(project, pre_tool("ls", project))
    assert (result.returncode, result.stderr) == (0, b"")
    reason = json.loads(result.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason == "hookbus: no answer in time; fail-closed guard:guard wants it"
    assert len(server.requests) == 1


@pytest.mark.parametrize("server", ["unanswered"], indirect=True)
def test_told_unanswered_with_no_index_to_read_the_cold_path_decides(
    project: Path, server: FakeServer, state: Path
) -> None:
    """No index this process can read (none compiled yet): a handler made fail-closed
    since the install may want the call, so the cold path answers it, and says why."""
    assert_cold_deny(run_client(project, pre_tool("rm -rf /", project)))
    [line] = fallbacks(state)
    assert "unanswered" in line["message"]


def test_stale_socket_is_answered_by_the_cold_path(project: Path, state: Path) -> None:
    """A socket file left by a dead server (nobody listening) means no server."""
    (state / "run").mkdir(mode=0o700)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(state / "run" / wire.socket_name()))
    stale.close()
    assert_cold_deny(run_client(project, pre_tool("rm -rf /", project)))
    assert (state / "run" / wire.start_lock()).exists()


@pytest.mark.parametrize("junk", ["file", "folder", "fifo"])
def test_junk_in_the_socket_folder_is_answered_by_the_cold_path(
    project: Path, state: Path, junk: str
) -> None:
    """Whatever sits where the socket should be (a file, a folder, a FIFO, among other
    junk), the hook answers from the cold path, without hanging on it."""
    run = state / "run"
    run.mkdir(mode=0o700)
    for i in range(20):
        (run / f"junk{i}").write_bytes(os.urandom(64))
    where = run / wire.socket_name()
    if junk == "file":
        where.write_bytes(b"\0" * 100)
    elif junk == "folder":
        where.mkdir()
    else:
        os.mkfifo(where)
    assert_cold_deny(run_client(project, pre_tool("rm -rf /", project)))


@pytest.mark.parametrize("mode", [0o777, 0o770])
def test_socket_folder_writable_by_others_is_not_used(
    project: Path, state: Path, mode: int
) -> None:
    """A socket folder others could write to (someone could have put a server there) is
    never connected to: the cold path answers and no server is started in it."""
    for server in serve(state):
        (state / "run").chmod(mode)
        assert_cold_deny(run_client(project, pre_tool("rm -rf /", project)))
        assert server.requests == []
        assert not (state / "run" / wire.start_lock()).exists()
        wait_for(lambda: fallbacks(state), "the client-fallback diagnostic")
        assert "writable by group or others" in str(fallbacks(state)[0]["reason"])


def test_runtime_folder_is_preferred_when_it_is_the_users(
    project: Path, state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$XDG_RUNTIME_DIR/hookbus`` holds the socket when that folder is this user's."""
    runtime = state / "xdg"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    server = FakeServer(runtime / "hookbus" / wire.socket_name())
    try:
        result = run_client(project, pre_tool("ls", project))
    finally:
        server.close()
    assert (result.returncode, result.stdout) == (EXIT, STDOUT)


@pytest.mark.parametrize("server", ["hang"], indirect=True)
def test_signal_while_waiting_exits_1_with_no_output(project: Path, server: FakeServer) -> None:
    """The host's SIGTERM while the server still owes the reply: exit 1, nothing written,
    never a traceback (the shell fallback answers)."""
    argv = [sys.executable, "-I", "-S", str(CLIENT), "--host", "claude", *PROJECT, "--event",
            "PreToolUse", "--timeout", "30"]  # fmt: skip
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=project)  # fmt: skip
    assert proc.stdin is not None
    proc.stdin.write(pre_tool("ls", project))
    proc.stdin.close()
    proc.stdin = None
    wait_for(lambda: server.requests, "the request")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out, err) == (1, b"", b"")


def test_concurrent_starts_take_one_lock(tmp_path: Path) -> None:
    """Many clients starting a server at once: exactly one takes the lock."""
    lock = tmp_path / wire.start_lock()
    code = f"from hookbus.runtime.warm.fallback import take_lock; print(take_lock({str(lock)!r}))"
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
             for _ in range(12)]  # fmt: skip
    answers = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert sorted(answers) == [b"False"] * 11 + [b"True"]


def test_stale_lock_is_taken_over(tmp_path: Path) -> None:
    """A lock left by a start that failed more than 10 s ago does not block the next."""
    lock = tmp_path / wire.start_lock()
    lock.touch()
    assert fallback.take_lock(str(lock)) is False
    old = time.time() - 20
    os.utime(lock, (old, old))
    assert fallback.take_lock(str(lock)) is True


def _modules(importtime: bytes) -> set[str]:
    """The modules ``python -X importtime`` says were imported (its stderr)."""
    lines = [ln for ln in importtime.decode().splitlines() if ln.startswith("import time:")]
    return {ln.split("|")[-1].strip() for ln in lines[1:]}


def client_imports(
    payload: bytes, cwd: Path
) -> tuple[subprocess.CompletedProcess[bytes], set[str]]:
    """The client run on ``payload`` as a Claude Code PreToolUse hook, and the modules it
    imported beyond those ``python -I -S -c pass`` imports."""
    argv = [sys.executable, "-I", "-S", "-X", "importtime", str(CLIENT), "--host", "claude", *PROJECT,
            "--event", "PreToolUse", "--timeout", "10"]  # fmt: skip
    result = subprocess.run(argv, input=payload, capture_output=True, cwd=cwd, timeout=60,
                            check=False)  # fmt: skip
    baseline = subprocess.run([sys.executable, "-I", "-S", "-X", "importtime", "-c", "pass"],
                              capture_output=True, check=True)  # fmt: skip
    return result, _modules(result.stderr) - _modules(baseline.stderr)


def test_warm_path_imports_nothing_of_hookbus(
    project: Path, server: FakeServer, state: Path
) -> None:
    """Answered by the server, the client loads only builtin modules and none of
    hookbus's (``python -X importtime`` lists every module imported)."""
    result, imported = client_imports(pre_tool("ls", project), project)
    assert result.stdout == STDOUT
    assert imported == {"_json", "_socket"}


@pytest.mark.parametrize(
    "env",
    [
        {"HOOKBUS_STATE_DIR": "rel/state"},
        {"HOOKBUS_STATE_DIR": "~/st/../state"},
        {"XDG_STATE_HOME": "/x/y/"},
        {"HOME": "/home/someone"},
        {"XDG_RUNTIME_DIR": "relative"},
    ],
)
def test_socket_folder_is_where_the_state_root_is(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The client finds the state root by hookbus.local.state's own rule (it cannot import it)."""
    from hookbus.local import state

    monkeypatch.chdir(tmp_path)
    for name in ("HOOKBUS_STATE_DIR", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert client.socket_dir() == os.path.join(state.root_path(), "run")


def test_broken_json_is_a_value_error_where_the_client_runs() -> None:
    """Under ``-I -S``, with no ``json.decoder`` imported, a payload broken anywhere
    (cut short, a bad token inside an object) is a ValueError, as the client expects,
    not the SystemError ``_json`` gives there (the cold path then says what is wrong)."""
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import client\n"
        "for doc in (b'{\"a\":', b'{\"a\": tru}', b'[1, 2', b'{\"a\": \"\\\\x\"}', b'x', b''):\n"
        "    try:\n"
        "        client.loads(doc)\n"
        "    except ValueError:\n"
        "        print('ValueError')\n"
        "print('json.decoder' in sys.modules)\n"
    )
    ran = subprocess.run([sys.executable, "-I", "-S", "-c", script, str(CLIENT.parent)],
                         capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert ran.stdout.split() == ["ValueError"] * 6 + ["False"], ran.stderr


# -- reading stdin ---------------------------------------------------------------------

READER = """\
import sys, time
sys.path.insert(0, sys.argv[1])
import client
data, end = client.read_payload(time.monotonic() + float(sys.argv[2]))
sys.stdout.write(repr((data, end)))
"""


class _Reader:
    """A ``python -I -S`` process running the client's :func:`read_payload` on a pipe
    that this test writes to, and keeps open as long as it likes."""

    def __init__(self, wait: float, *, nonblocking: bool = False) -> None:
        read_end, self.fd = os.pipe()
        if nonblocking:
            os.set_blocking(read_end, False)  # the child's stdin shares the flag
        self.proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", READER,
                                      str(CLIENT.parent), str(wait)],
                                     stdin=read_end, stdout=subprocess.PIPE)  # fmt: skip
        os.close(read_end)

    def write(self, data: bytes) -> None:
        os.write(self.fd, data)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def result(self) -> tuple[bytes, str]:
        """What the child read, and how the read ended; stdin is closed only after."""
        out, _ = self.proc.communicate(timeout=60)
        self.close()
        data, end = ast.literal_eval(out.decode())
        return data, end


@pytest.mark.parametrize("nonblocking", [False, True], ids=["blocking", "non-blocking"])
def test_a_whole_object_on_a_stdin_kept_open_is_read_at_once(nonblocking: bool) -> None:
    """A host that writes its payload and keeps stdin open gets its answer long before
    the read's deadline, whether its pipe is blocking or not; stdin is still open when
    the read ends."""
    reader = _Reader(60.0, nonblocking=nonblocking)
    began = time.monotonic()
    reader.write(b'{"hook_event_name": "PreToolUse"}\n')
    assert reader.result() == (b'{"hook_event_name": "PreToolUse"}\n', "complete")
    assert time.monotonic() - began < 30  # not the deadline's 60 s


def test_a_brace_that_does_not_close_the_object_waits_for_the_rest() -> None:
    """A chunk ending in ``}`` that is not a whole object (the writer paused inside a
    nested value) is not taken for the payload: the rest, sent later, is read too."""
    reader = _Reader(60.0)
    reader.write(b'{"tool_input": {"command": "ls"}')
    time.sleep(0.3)  # the reader has looked, found nothing waiting, and parsed
    reader.write(b', "tool_name": "Bash"}')
    reader.close()
    data, end = reader.result()
    assert data == b'{"tool_input": {"command": "ls"}, "tool_name": "Bash"}'
    assert end in ("complete", "eof")


def test_a_payload_never_finished_ends_the_read_at_its_deadline() -> None:
    """Half an object and an open stdin: the read ends at its deadline with what came,
    as ``timeout``."""
    reader = _Reader(2.0)
    reader.write(b'{"hook_event_name": "Pre')
    assert reader.result() == (b'{"hook_event_name": "Pre', "timeout")
    assert reader.proc.returncode == 0


def test_the_read_leaves_sigalrm_as_the_host_left_it() -> None:
    """The read is timed by SIGALRM: a host that ignores SIGALRM (its children inherit
    that) still has it ignored after the read, with the payload read whole."""
    import signal

    script = READER + "\nimport _signal; sys.stdout.write(' ' + str(_signal.getsignal(14)))\n"
    done = subprocess.run([sys.executable, "-I", "-S", "-c", script, str(CLIENT.parent), "60"],
                          input=b'{"a": 1}', capture_output=True, timeout=60, check=True,
                          preexec_fn=lambda: signal.signal(signal.SIGALRM, signal.SIG_IGN))  # fmt: skip
    result, _, disposition = done.stdout.decode().rpartition(" ")
    assert ast.literal_eval(result) == (b'{"a": 1}', "eof")
    assert int(disposition) == int(signal.SIG_IGN)


def test_stdin_closed_at_once_is_the_end_of_input() -> None:
    reader = _Reader(60.0)
    reader.close()
    assert reader.result() == (b"", "eof")


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
def test_an_alarm_that_lands_before_the_read_begins_still_gets_an_answer(
    project: Path, state: Path
) -> None:
    """The stdin timer firing outside the read (a loaded machine: every ``setitimer``
    held 0.2 s by strace, so the 1 ms wait for more bytes after a whole object expires
    before its read begins) is absorbed: the call is answered (the cold path's deny),
    never exit 1 with nothing written."""
    argv = ["strace", "-qq", "-o", "/dev/null", "-e", "trace=setitimer",
            "-e", "inject=setitimer:delay_exit=200000", sys.executable, "-I", "-S",
            str(CLIENT), "--host", "claude", *PROJECT, "--event", "PreToolUse", "--timeout", "30"]  # fmt: skip
    result = subprocess.run(argv, input=pre_tool("rm -rf /", project), capture_output=True,
                            cwd=project, timeout=120, check=False)  # fmt: skip
    assert_cold_deny(result)


#: Exit codes no process can exit with, as a server might send them.
BAD_EXITS = ["256", "-1", "1" + "0" * 30, "2.0", '"2"', "true", "null", "[0]"]


@pytest.mark.parametrize("code", BAD_EXITS)
def test_an_exit_code_that_is_no_exit_status_is_a_reply_cut_short(
    project: Path, state: Path, code: str
) -> None:
    """A server's ``exit`` that is not an int in 0..255 is not passed on (256 would reach
    the host as 0, 10**30 as a traceback): the reply is not trusted, and the cold path
    answers, as for a reply cut short, with nothing on stderr but its own."""
    server = FakeServer(state / "run" / wire.socket_name(), exit=code)
    try:
        assert_cold_deny(run_client(project, pre_tool("rm -rf /", project)))
    finally:
        server.close()
    assert len(server.requests) == 1
    wait_for(lambda: fallbacks(state), "the client-fallback diagnostic")
    assert "no exit status" in str(fallbacks(state)[0]["reason"])


# -- the socket's identity -------------------------------------------------------------


def test_a_state_root_others_may_write_is_never_connected_to(project: Path, state: Path) -> None:
    """A state root writable by every user lets any of them swap its ``run/`` for a
    folder of their choosing with a server listening in it (here a private-looking
    ``run/`` renamed into place, the stand-in listening there): the client never
    connects, the cold path answers, and no server is started into that folder."""
    state.chmod(0o777)
    swapped = state / "elsewhere"
    impostor = FakeServer(swapped / wire.socket_name())  # 0700, this user's: looks private
    try:
        swapped.rename(state / "run")
        result = run_client(project, pre_tool("rm -rf /", project))
        assert impostor.requests == []
    finally:
        impostor.close()
    assert (result.returncode, json.loads(result.stdout)) == (0, DENY)
    assert not (state / "run" / wire.start_lock()).exists()
    # The state folder is refused, so the cold path's diagnostics go to stderr.
    said = [json.loads(line[line.index(b"{") :]) for line in result.stderr.splitlines()
            if b'"client-fallback"' in line]  # fmt: skip
    assert f"{state} is writable by group or others" in said[0]["reason"]


IMPOSTOR = """
import socket, sys
listener = socket.socket(socket.AF_UNIX)
listener.bind(sys.argv[1])
listener.listen(8)
print("listening", flush=True)
while True:
    conn, _ = listener.accept()
    conn.settimeout(5)
    try:
        got = conn.recv(1 << 20)
        if got:
            conn.sendall(b'\\0\\0\\0\\x17{"ok": true, "exit": 0}\\0\\0\\0\\x05allow\\0\\0\\0\\0')
    except OSError:
        got = b""
    print("received", len(got), flush=True)
    conn.close()
"""


@pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv"
)
def test_a_socket_another_user_listens_on_gets_no_payload(project: Path, state: Path) -> None:
    """A socket in the user's own folder whose listener is another uid (bound by uid
    65534 elsewhere, renamed into place): the client reads the listener's uid from the
    kernel before sending anything, sends nothing, never uses its answer, starts no
    server, and one ``client-fallback`` names the uid."""
    elsewhere = Path(tempfile.mkdtemp(prefix="hbi", dir="/tmp"))
    os.chown(elsewhere, 65534, 65534)
    (state / "run").mkdir(mode=0o700)
    impostor = subprocess.Popen(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-I",
         "-c", IMPOSTOR, str(elsewhere / "s.sock")], stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert impostor.stdout is not None
        assert impostor.stdout.readline() == "listening\n"
        os.rename(elsewhere / "s.sock", state / "run" / wire.socket_name())
        assert_cold_deny(run_client(project, pre_tool("rm -rf /", project)))
        assert impostor.stdout.readline() == "received 0\n"  # connected, then closed
    finally:
        impostor.kill()
        impostor.communicate()
        shutil.rmtree(elsewhere, ignore_errors=True)
    assert not (state / "run" / wire.start_lock()).exists()
    wait_for(lambda: fallbacks(state), "the client-fallback diagnostic")
    assert "uid 65534 listens on it" in str(fallbacks(state)[0]["reason"])


def _owned(path: Path, uid: int, mode: int) -> Path:
    path.mkdir(exist_ok=True)
    os.chown(path, uid, uid)
    path.chmod(mode)
    return path


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give folders to another uid")
def test_the_whole_path_to_the_socket_folder_is_checked(tmp_path: Path) -> None:
    """Every folder above the socket's is root's or this user's and writable by no one
    else, a root sticky folder only with this user's folder next; a link on the way is
    followed and the path it names checked the same way."""
    me, other = os.geteuid(), 65534
    base = _owned(tmp_path / "base", me, 0o755)
    mine = _owned(base / "mine", me, 0o700)
    _owned(mine / "run", me, 0o700)
    assert client.dir_problem(str(mine / "run")) is None
    assert client.dir_problem(str(mine / "missing" / "run")) is None  # absent: no server
    base.chmod(0o775)
    assert client.dir_problem(str(mine / "run")) == f"{base} is writable by group or others"
    base.chmod(0o1777)  # like /tmp: root's and sticky
    assert client.dir_problem(str(mine / "run")) is None
    theirs = _owned(base / "theirs", other, 0o755)
    _owned(theirs / "run", me, 0o700)
    assert client.dir_problem(str(theirs / "run")) == (
        f"{theirs} is owned by uid {other}, in a folder others may write")  # fmt: skip
    (base / "link").symlink_to(mine)
    os.lchown(base / "link", other, other)  # in a sticky folder: theirs to replace
    assert "a folder others may write" in str(client.dir_problem(str(base / "link" / "run")))
    base.chmod(0o755)
    assert client.dir_problem(str(theirs / "run")) == f"{theirs} is owned by uid {other}"
    assert "symbolic link of uid" in str(client.dir_problem(str(base / "link" / "run")))
    os.lchown(base / "link", me, me)
    assert client.dir_problem(str(base / "link" / "run")) is None
    (base / "up").symlink_to("theirs/..")  # relative, through a folder of another uid
    assert client.dir_problem(str(base / "up" / "mine" / "run")) == (
        f"{theirs} is owned by uid {other}")  # fmt: skip
    (mine / "run").chmod(0o755)
    assert client.dir_problem(str(base / "link" / "run")) is None
    (mine / "run").chmod(0o770)
    assert client.dir_problem(str(mine / "run")) == f"{mine}/run is writable by group or others"
    assert client.dir_problem(str(mine / "run"), private=2) == (
        f"{mine}/run is writable by group or others")  # fmt: skip


@pytest.mark.parametrize("server", ["hang"], indirect=True)
def test_server_that_never_answers_gets_the_refusal_the_index_holds(
    project: Path, server: FakeServer, state: Path
) -> None:
    """A server that took the request and never answers, with a fresh index: at the
    call's deadline the client answers the refusal the index holds for the fail-closed
    guard (the call is not run again), leaving the host its margin."""
    compile_now(project)
    began = time.monotonic()
    result = run_client(project, pre_tool("ls", project), timeout=3)
    took = time.monotonic() - began
    assert (result.returncode, result.stderr) == (0, b"")
    reason = json.loads(result.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason == "hookbus: no answer in time; fail-closed guard:guard wants it"
    assert len(server.requests) == 1
    assert 2.0 <= took < 5.0


def test_unanswered_flag_answers_what_the_index_owes_and_asks_no_server(
    project: Path, server: FakeServer, state: Path
) -> None:
    """``--unanswered`` (a shim whose server took the call and gave no answer): the
    client asks no server and answers what the index owes, the guard's refusal; with no
    index to read, the cold path decides, as for ``unanswered`` from the server."""
    assert_cold_deny(run_client(project, pre_tool("rm -rf /", project), "--unanswered"))
    compile_now(project)
    result = run_client(project, pre_tool("ls", project), "--unanswered")
    assert (result.returncode, result.stderr) == (0, b"")
    reason = json.loads(result.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason == "hookbus: no answer in time; fail-closed guard:guard wants it"
    assert server.requests == []


#: The client's read, with each read of stdin returning only after a 50 ms pause: the
#: alarm of a short timer then lands just as the read returns, as it does on a loaded
#: machine. Stdin is a file whose first 64 KiB (one read) end with ``}`` inside the object.
LATE_READS = """\
import os, sys, time
sys.path.insert(0, sys.argv[1])
import client

class Late:
    def __getattr__(self, name):
        return getattr(os, name)

    def read(self, fd, n):
        data = os.read(fd, n)
        time.sleep(0.05)
        return data

client.posix = Late()
data, end = client.read_payload(time.monotonic() + 60)
sys.stdout.write(repr((len(data), end)))
"""


@pytest.mark.parametrize("stdin", ["file", "pipe"])
def test_a_chunk_read_as_the_alarm_lands_is_kept(tmp_path: Path, stdin: str) -> None:
    """A payload whose first read ends with ``}`` inside the object, the rest read while
    the client looks for more bytes, is read whole even when that read returns after a
    timer would have fired (a 1 ms alarm under load lost the last chunk: a Claude ``Stop``
    was then answered as unreadable, the no-opinion); from a file, and from a pipe that
    holds the first 64 KiB before the client starts."""
    head = b'{"tool_input": {"pad": "'
    first = head + b"x" * ((1 << 16) - len(head) - 2) + b'"}'
    payload = first + b', "hook_event_name": "Stop"}'
    assert len(first) == 1 << 16 and json.loads(payload)
    argv = [sys.executable, "-I", "-S", "-c", LATE_READS, str(CLIENT.parent)]
    if stdin == "file":
        path = tmp_path / "payload.json"
        path.write_bytes(payload)
        with path.open("rb") as f:
            done = subprocess.run(argv, stdin=f, capture_output=True, timeout=60, check=True)
        out = done.stdout
    else:
        read_end, write_end = os.pipe()
        os.write(write_end, first)  # a pipe holds 64 KiB: the client's first read is this
        proc = subprocess.Popen(argv, stdin=read_end, stdout=subprocess.PIPE)
        os.close(read_end)
        os.write(write_end, payload[len(first) :])
        os.close(write_end)
        out, _ = proc.communicate(timeout=60)
    assert ast.literal_eval(out.decode()) == (len(payload), "eof")
