"""Whole-process wall time of hookbus's Claude Code hook through the warm server's client.

Usage: ``python benchmarks/warm_latency.py [--rounds N] [--python PATH] [--no-peers]``

Every case is a command string run through ``/bin/sh -c``, as Claude Code runs command
hooks, with a PreToolUse Bash payload on stdin. The hookbus cases enable one synchronous
handler (deny ``rm -rf /``, allow the rest: ``hook_latency.py``'s case (b)), each in its
own project and state folder, with the command ``hookbus manifest --host claude`` prints:

  cold      ``--no-server``'s command (``hookbus run``, no server);
  warm      ``--server``'s command with ``hookbus serve`` running, the handler enabled by
            the user's configuration, which the server keeps warm (skipped, saying so,
            when this hookbus has no ``serve``);
  warm-project  the same, the handler a (trusted) project's: the server keeps no
            project's code warm, and a worker that ran it ends after the call, so each
            call pays a fresh worker and the module's import;
  stand-in  ``--server``'s command with a stand-in server in this process that answers
            every request at once: the client's own cost and one round trip, the floor
            the warm case approaches;
  fallback  ``--server``'s command with no server: the client runs the cold path itself
            (the start lock is kept fresh, so no server is started for the next call);
  nobody    ``--server``'s command, no server, in a project whose handler wants Read
            only: the client finds in the subscription index that nobody wants this Bash
            call and answers it alone (checked: no server is asked or started). Its
            target is the client's start, ``python -I -S -c pass``.

Baselines and peers from the same run: ``python -I -S -c pass``, ``stdlib_hook.py`` (the
same rule with json + re), cchooks and agentseam's generated single-file bundle (the same
rule), installed with pip in the benchmark's own virtual environment (``--no-peers``
skips them). Each case is warmed up and its verdict checked on an allow and a deny
payload; then every round runs each case once, in a fresh random order, on its allow
payload.

Targets (issue 12): warm p50 <= 1.25 x ``python -I -S -c pass`` and <= 0.6 x the stdlib
hook; fallback p50 <= 1.05 x cold; nobody p50 <= 1.25 x pass. Exit status 0 when the measurement succeeded, targets
met or not; 1 when it cannot be trusted (a wrong verdict, a failing hook).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import stdlib_hook

HERE = Path(__file__).resolve().parent
#: The cases' state folders, short paths outside the run's temporary folder: removed at
#: the end.
STATE_DIRS: list[str] = []
SHELL = "/bin/sh"
WARMUP = 5
MIN_ROUNDS = 30
PAYLOAD = {
    "session_id": "6f1c2b9e-3d4a-4e8b-9a77-2c1f0e5d8b31",
    "transcript_path": "/home/dev/.claude/projects/-home-dev-shop-api/6f1c2b9e.jsonl",
    "cwd": "/home/dev/shop-api",
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "npm test -- --runInBand", "description": "Run the tests"},
    "tool_use_id": "toolu_01HkT4qv9Zr2mXc8bN3pL7aQ",
}
HANDLER = f"""\
import re

from hookbus import Reply, handler

RM_ROOT = re.compile({stdlib_hook.RM_ROOT.pattern!r})


@handler("before-tool", tools="shell")
def deny_rm_root(event):
    if RM_ROOT.search(event.tool.command or ""):
        return Reply.deny({stdlib_hook.REASON!r})
    return None
"""
CCHOOKS_HOOK = f"""\
import re
from cchooks import create_context
from cchooks.contexts import PreToolUseContext

RM_ROOT = re.compile({stdlib_hook.RM_ROOT.pattern!r})
c = create_context()
if isinstance(c, PreToolUseContext) and c.tool_name == "Bash" and RM_ROOT.search(
        c.tool_input.get("command", "")):
    c.output.deny({stdlib_hook.REASON!r})
else:
    c.output.exit_success()
"""
#: agentseam's bundle leaves its ``handle`` for the user, between two marker lines.
AGENTSEAM_HANDLER = f"""\
import re as _re
_RM_ROOT = _re.compile({stdlib_hook.RM_ROOT.pattern!r})


def handle(event):
    if (event.raw or {{}}).get("tool_name") == "Bash" and _RM_ROOT.search(event.command or ""):
        return Decision.deny({stdlib_hook.REASON!r})
    return None
"""
AGENTSEAM_MARKS = ("# >>> agentseam handler >>>\n", "# <<< agentseam handler <<<\n")


class BenchmarkError(Exception):
    """The measurement cannot be trusted."""


@dataclass
class Case:
    key: str
    label: str
    command: str
    cwd: Path
    env: dict[str, str]
    #: Whether it judges (a deny payload gets a deny); the stand-in does not.
    judges: bool = True
    #: Called before each run (the fallback keeps its start lock fresh).
    before: object = None


def payloads() -> tuple[bytes, bytes]:
    deny = json.loads(json.dumps(PAYLOAD))
    deny["tool_input"]["command"] = "rm -rf /"
    return json.dumps(PAYLOAD).encode(), json.dumps(deny).encode()


def run(case: Case, payload: bytes) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    if callable(case.before):
        case.before()
    began = time.perf_counter()
    done = subprocess.run([SHELL, "-c", case.command], input=payload, capture_output=True,
                          cwd=case.cwd, env=case.env, check=False)  # fmt: skip
    return time.perf_counter() - began, done


def check(case: Case) -> None:
    """Its allow payload gets no opinion; its deny payload a deny (when it judges)."""
    allow, deny = payloads()
    _, done = run(case, allow)
    if done.returncode != 0 or done.stdout.strip() not in (b"", b"{}"):
        raise BenchmarkError(f"{case.label}: allow gave {done.returncode} {done.stdout!r} "
                             f"{done.stderr[-400:]!r}")  # fmt: skip
    if case.judges:
        _, done = run(case, deny)
        if b"deny" not in done.stdout and done.returncode != 2:
            raise BenchmarkError(f"{case.label}: deny gave {done.returncode} {done.stdout!r} "
                                 f"{done.stderr[-400:]!r}")  # fmt: skip


# -- the hookbus cases -----------------------------------------------------------------


def project(
    root: Path, name: str, base: dict[str, str], handler: str = HANDLER, *, users: bool = False
) -> tuple[Path, dict[str, str]]:
    """A project where the handler is enabled, with its own configuration folder and short
    state folder (a socket path is limited to 107 bytes): by the project's
    ``.hookbus.toml``, trusted (``hookbus trust``), or with ``users`` by the user's own
    configuration (the warm server keeps only the user's handlers warm)."""
    folder = root / name
    (folder / ".git").mkdir(parents=True)
    state = tempfile.mkdtemp(prefix="hbw")
    STATE_DIRS.append(state)
    env = {**base, "HOOKBUS_STATE_DIR": state, "XDG_CONFIG_HOME": str(root / f"{name}-config")}
    where = root / f"{name}-config" / "hookbus" if users else folder
    where.mkdir(parents=True, exist_ok=True)
    (where / "bench_sync.py").write_text(handler)
    enable = 'enable = ["bench_sync:deny_rm_root"]\n'
    (where / ("config.toml" if users else ".hookbus.toml")).write_text(enable)
    if not users:
        trusted = subprocess.run([sys.executable, "-m", "hookbus", "trust"],
                                 capture_output=True, cwd=folder, env=env, check=False)  # fmt: skip
        if trusted.returncode != 0:
            raise BenchmarkError(f"hookbus trust: {trusted.stderr.decode(errors='replace')}")
    return folder, env


def command(python: str, folder: Path, env: dict[str, str], *flags: str) -> str:
    # The local scope: the configuration hooks read (the user's and the project's).
    argv = [python, "-m", "hookbus", "manifest", "--host", "claude", "--scope", "local", *flags]
    done = subprocess.run(argv, capture_output=True, cwd=folder, env=env, check=False)
    if done.returncode != 0:
        raise BenchmarkError(f"{shlex.join(argv)}: {done.stderr.decode(errors='replace')}")
    (group,) = json.loads(done.stdout)["hooks"]["PreToolUse"]
    return str(group["hooks"][0]["command"])


def has_serve(python: str) -> bool:
    done = subprocess.run([python, "-m", "hookbus", "serve", "--help"], capture_output=True,
                          check=False)  # fmt: skip
    return done.returncode == 0


class StandIn:
    """Answers every request of protocol v1 at once with no opinion (exit 0, no output)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(64)
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        reply = b"".join(len(f).to_bytes(4, "big") + f for f in (b'{"ok": true, "exit": 0}',
                                                                 b"", b""))  # fmt: skip
        while True:
            conn, _ = self.listener.accept()
            with conn:
                for _ in range(2):
                    size = int.from_bytes(self.exact(conn, 4), "big")
                    self.exact(conn, size)
                conn.sendall(reply)

    @staticmethod
    def exact(conn: socket.socket, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = conn.recv(n - len(buf))
            if not chunk:
                raise ConnectionError
            buf += chunk
        return buf


def hookbus_cases(python: str, root: Path, base: dict[str, str]) -> tuple[list[Case], list[str]]:
    cases, notes = [], []
    folder, env = project(root, "cold", base)
    # --no-server: the client is install's default where hookbus has a server.
    cold = ("--no-server",) if has_serve(python) else ()
    cases.append(Case("cold", "hookbus cold path (hookbus run)",
                      command(python, folder, env, *cold), folder, env))  # fmt: skip
    if has_serve(python):
        for key, label, users in (
            ("warm", "client, warm server (a handler of the user's)", True),
            ("warm-project", "client, warm server, a project's handler", False),
        ):
            folder, env = project(root, key, base, users=users)
            subprocess.run([python, "-m", "hookbus", "serve", "--detach"], cwd=folder, env=env,
                           check=True, capture_output=True, timeout=60)  # fmt: skip
            cases.append(Case(key, label, command(python, folder, env, "--server"), folder, env))
    else:
        notes.append("warm: skipped, this hookbus has no `hookbus serve` yet")
    folder, env = project(root, "standin", base)
    StandIn(Path(env["HOOKBUS_STATE_DIR"]) / "run" / "server.sock")
    cases.append(Case("standin", "client, stand-in server (answers at once)",
                      command(python, folder, env, "--server"), folder, env, judges=False))  # fmt: skip
    folder, env = project(root, "fallback", base)
    lock = Path(env["HOOKBUS_STATE_DIR"]) / "run" / "server.lock"
    lock.parent.mkdir(mode=0o700, parents=True)

    def fresh_lock() -> None:
        lock.touch()  # a start "under way": the client starts no server

    cases.append(Case("fallback", "client, no server (cold fallback)",
                      command(python, folder, env, "--server"), folder, env,
                      before=fresh_lock))  # fmt: skip
    folder, env = project(root, "nobody", base, HANDLER.replace('tools="shell"', 'tools="read"'))
    run_dir = Path(env["HOOKBUS_STATE_DIR"]) / "run"

    def no_server() -> None:
        if run_dir.exists():
            raise BenchmarkError(f"nobody: the client asked or started a server ({run_dir})")

    cases.append(Case("nobody", "client, event nobody wants (no server)",
                      command(python, folder, env, "--server"),
                      folder, env, judges=False, before=no_server))  # fmt: skip
    return cases, notes


# -- baselines and peers ---------------------------------------------------------------


def peer_cases(root: Path, base: dict[str, str]) -> list[Case]:
    """cchooks and agentseam's bundle, installed in a virtual environment of their own."""
    venv = root / "peers"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "cchooks", "agentseam"], check=True)
    (root / "cchooks_hook.py").write_text(CCHOOKS_HOOK)
    code = (
        "import sys; from agentseam.bundler import bundle; sys.stdout.write(bundle('claude_code'))"
    )
    bundled = subprocess.run([py, "-c", code], capture_output=True, text=True, check=True).stdout
    (root / "agentseam_hook.py").write_text(with_handler(bundled))
    q = shlex.quote
    return [
        Case("cchooks", "cchooks", f"{q(py)} {q(str(root / 'cchooks_hook.py'))}", root, base),
        Case(
            "agentseam",
            "agentseam bundle",
            f"{q(py)} {q(str(root / 'agentseam_hook.py'))}",
            root,
            base,
        ),
    ]


def with_handler(bundled: str) -> str:
    """The bundle with the rule as its ``handle``, in the block it leaves for one."""
    start, end = AGENTSEAM_MARKS
    head, found, rest = bundled.partition(start)
    _, found_end, tail = rest.partition(end)
    if not (found and found_end):
        raise BenchmarkError("agentseam's bundle has no handler block to fill in")
    return f"{head}{start}{AGENTSEAM_HANDLER}{end}{tail}"


# -- measuring -------------------------------------------------------------------------


def measure(cases: list[Case], rounds: int) -> dict[str, list[float]]:
    allow, _ = payloads()
    for case in cases:
        check(case)
        for _ in range(WARMUP):
            run(case, allow)
    times: dict[str, list[float]] = {c.key: [] for c in cases}
    for _ in range(rounds):
        for case in random.sample(cases, len(cases)):
            took, done = run(case, allow)
            if done.returncode != 0:
                raise BenchmarkError(f"{case.label}: exit {done.returncode} {done.stderr!r}")
            times[case.key].append(took * 1000)
    return times


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(cases: list[Case], times: dict[str, list[float]], notes: list[str]) -> None:
    p50 = {k: statistics.median(v) for k, v in times.items()}
    print(f"{'case':44} {'p50 ms':>7} {'p90 ms':>7} {'x pass':>7} {'x stdlib':>8}")
    for case in cases:
        v = times[case.key]
        print(f"{case.label:44} {p50[case.key]:7.1f} {quantile(v, 0.9):7.1f} "
              f"{p50[case.key] / p50['pass']:7.2f} {p50[case.key] / p50['stdlib']:8.2f}")  # fmt: skip
    for note in notes:
        print(f"note: {note}")
    targets = [("fallback", "cold", 1.05)]
    if "warm" in p50:
        targets += [("warm", "pass", 1.25), ("warm", "stdlib", 0.6)]
    targets += [("nobody", "pass", 1.25)]
    for case, against, most in targets:
        ratio = p50[case] / p50[against]
        verdict = "met" if ratio <= most else "NOT met"
        print(f"target {case} <= {most} x {against}: {ratio:.3f} ({verdict})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS)
    parser.add_argument("--python", default=sys.executable, help="the interpreter with hookbus")
    parser.add_argument("--no-peers", action="store_true", help="skip cchooks and agentseam")
    opts = parser.parse_args()
    python = os.path.abspath(opts.python)
    if opts.rounds < MIN_ROUNDS:
        parser.error(f"--rounds must be at least {MIN_ROUNDS}")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("HOOKBUS_", "PYTHON"))}
    base.pop("XDG_RUNTIME_DIR", None)
    with tempfile.TemporaryDirectory(prefix="warm-latency-") as tmp:
        root = Path(tmp)
        base["XDG_CONFIG_HOME"] = str(root / "config")
        q = shlex.quote
        cases = [
            Case(
                "pass",
                "python -I -S -c pass",
                f"{q(python)} -I -S -c pass",
                root,
                base,
                judges=False,
            ),
            Case(
                "stdlib",
                "stdlib hook (json + re)",
                f"{q(python)} {q(str(HERE / 'stdlib_hook.py'))}",
                root,
                base,
            ),
        ]
        try:
            hooked, notes = hookbus_cases(python, root, base)
            cases += hooked
            if not opts.no_peers:
                cases += peer_cases(root, base)
            print(f"{len(cases)} cases, {opts.rounds} shuffled rounds, load "
                  f"{os.getloadavg()[0]:.2f}; client command: {hooked[-1].command}\n")  # fmt: skip
            times = measure(cases, opts.rounds)
        except BenchmarkError as exc:
            print(f"warm_latency: {exc}", file=sys.stderr)
            return 1
        finally:
            for case in cases:
                if case.key == "warm":
                    subprocess.run([python, "-m", "hookbus", "serve", "--stop"], env=case.env,
                                   cwd=case.cwd, capture_output=True, check=False, timeout=30)  # fmt: skip
            for state in STATE_DIRS:
                shutil.rmtree(state, ignore_errors=True)
        report(cases, times, notes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
