"""One warm call, counted: the client parses the payload once, reads the index once and
finds the configuration once; the server's child answering it parses the payload once,
decodes it once, finds the configuration once and reads the index once (issue 27).

Each side runs in a forked child of the test, as its process runs it (the client's
``main`` with the payload on fd 0; the one-shot child's ``served.serve``), with the
functions counted replaced by probes that write one line per call to a pipe."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import test_client
from fake_server import EXIT, STDOUT
from support import compile_now, guarded_project

import hookbus
from hookbus import hosts
from hookbus.local import discover
from hookbus.runtime import hook, index, worker
from hookbus.runtime.warm import client, served, wire

#: The client tests' short state root (a socket's path is limited), no runtime folder.
state = test_client.state


@pytest.fixture
def project(tmp_path: Path, state: Path) -> Path:
    """A project whose fail-closed guard wants shell commands, its index compiled."""
    root = guarded_project(tmp_path / "project")
    compile_now(root)
    return root


def codex_call(project: Path) -> bytes:
    """A Codex PreToolUse of ``rm -rf /`` in ``project``: Codex names its project in the
    payload (``cwd``), not in a variable, so the payload decides the configuration."""
    sample = hosts.driver("codex").sample("PreToolUse", cwd=str(project), session_id="s")
    data = json.loads(sample)
    data["tool_input"]["command"] = "rm -rf /"
    return json.dumps(data).encode()


class Probes:
    """Functions replaced by probes writing their name to a pipe; :meth:`counts` reads it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch
        self.read_fd, self.write_fd = os.pipe()

    def count(
        self, target: object, name: str, label: str, only: Callable[..., bool] | None = None
    ) -> None:
        original = getattr(target, name)
        fd = self.write_fd

        def probe(*args: object, **kwargs: object) -> object:
            if only is None or only(*args, **kwargs):
                os.write(fd, label.encode() + b"\n")
            return original(*args, **kwargs)

        self.monkeypatch.setattr(target, name, probe)

    def counts(self) -> Counter[str]:
        os.close(self.write_fd)
        with os.fdopen(self.read_fd, "rb") as f:
            return Counter(f.read().decode().split())


def in_child(run: Callable[[], int]) -> int:
    """``run()`` in a forked child with stdout and stderr on /dev/null; its exit code."""
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            code = run()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.fixture
def probes(monkeypatch: pytest.MonkeyPatch) -> Iterator[Probes]:
    found = Probes(monkeypatch)
    yield found
    for fd in (found.read_fd, found.write_fd):
        with contextlib.suppress(OSError):
            os.close(fd)


def test_the_client_parses_reads_and_discovers_once(
    project: Path, state: Path, probes: Probes
) -> None:
    """Per warm call, the client parses the payload once (a host that keeps stdin open
    too), reads the index once and finds the configuration once."""
    payload = codex_call(project)
    probes.count(client, "loads", "parse", lambda data, *a: data == payload)
    probes.count(client, "read_index", "index")
    probes.count(client, "config_files", "discover")
    stdin_r, stdin_w = os.pipe()
    os.write(stdin_w, payload)  # and kept open: the read ends at the whole object
    argv = ["--host", "codex", "--project", ":cwd", "--event", "PreToolUse", "--timeout", "20"]

    def run() -> int:
        os.dup2(stdin_r, 0)
        os.close(stdin_w)
        os.chdir(project)
        return client.main(argv)

    server = test_client.FakeServer(state / "run" / wire.socket_name())
    try:
        code = in_child(run)
    finally:
        server.close()
        os.close(stdin_r)
        os.close(stdin_w)
    assert code == EXIT, "the stand-in server answered the call"
    assert len(server.requests) == 1
    assert probes.counts() == {"parse": 1, "index": 1, "discover": 1}


def test_the_servers_child_parses_reads_and_discovers_once(
    project: Path, state: Path, probes: Probes
) -> None:
    """Per warm call, the server's child answering it parses the payload once, decodes
    it once, finds the configuration once and reads the index once, and denies."""
    payload = codex_call(project)
    probes.count(json, "loads", "parse", lambda data, *a, **k: data == payload)
    probes.count(worker, "decode", "decode")
    probes.count(index, "read", "index")
    probes.count(discover, "config_paths", "discover")
    probes.monkeypatch.setattr(hook, "config_paths", discover.config_paths)
    req = wire.Request(proto=wire.PROTO, version=hookbus.__version__, op="run", host="codex",
                       event="PreToolUse", timeout=20.0, cwd=str(project),
                       env=dict(os.environ))  # fmt: skip
    ours, theirs = socket.socketpair()
    report_r, report_w = os.pipe()
    warm = served.Warm({}, list(sys.path))
    try:
        code = in_child(lambda: served.serve(theirs, req, payload, report_w, warm))
        theirs.close()
        reply = wire.Connection.__new__(wire.Connection)
        reply.sock, reply.deadline = ours, time.monotonic() + 30
        answer, stdout = json.loads(reply.receive()), reply.receive()
    finally:
        ours.close()
        os.close(report_r)
        os.close(report_w)
    assert code == 0
    assert answer == {"ok": True, "exit": 0}
    assert b"no rm -rf" in stdout and stdout != STDOUT
    assert probes.counts() == {"parse": 1, "decode": 1, "index": 1, "discover": 1}


def test_the_clients_gate_is_the_index_gate(project: Path) -> None:
    """The client's stdlib copy of who may want an event says what
    ``Lookup.candidates`` (the one gate of the runtime) says, for every host, event and
    tool of a compiled index, and with a handler whose declaration is unknown."""
    files = discover.config_paths(str(project))
    lookup = index.read(files)
    assert lookup.fresh and lookup.data is not None
    data = lookup.data
    unknown = json.loads(json.dumps(data))
    unknown["handlers"][0]["subscription"] = None
    tools = (None, 42, "Bash", "Read", "shell", "mcp__server__tool", "run_shell_command", "")
    for found in (data, unknown):
        gate = index.Lookup(files, "fresh", found)
        for host, routes in found["routes"].items():
            for native in (*routes, "NoSuchEvent"):
                for tool in tools:
                    expected = bool(gate.candidates(host, native, tool))
                    assert client._wanted(found, host, native, tool) == expected, (
                        host, native, tool)  # fmt: skip
