"""Many concurrent hooks against one warm server: every answer right, every row stored.

Usage: ``python benchmarks/warm_stress.py [--clients 32] [--requests 200] [--reload-every S]
[--python PATH]``

Issue 12 asks for "32 concurrent clients x 200 requests each: all answered, none lost, no
row lost in the store, server RSS and p99 reported". This benchmark runs exactly what
Claude Code runs, at that rate:

- an isolated environment: its own ``HOOKBUS_STATE_DIR`` (a short path: the socket is
  in it), its own ``XDG_CONFIG_HOME``, no ``XDG_RUNTIME_DIR``;
- the user's configuration (in that ``XDG_CONFIG_HOME``) enabling one ``before-tool``
  handler that writes one dispatch row per call through ``ctx.store`` (the guard's way)
  and answers deny for ``rm`` and allow for everything else, with its reason: the warm
  server keeps only the user's and the built-in handlers warm (a project's handler runs
  in a fresh worker that retires after the call: ``warm_latency.py``'s ``warm-project``
  case measures that price, not this stress);
- ``hookbus install --host claude --server --scope local`` in a project (the local
  settings follow the user's configuration and the project's), and the PreToolUse
  command it wrote to ``.claude/settings.local.json``, run through ``/bin/sh -c`` as
  Claude Code runs hooks, with a PreToolUse Bash payload on stdin whose ``tool_use_id``
  is unique;
- ``hookbus serve --detach`` started first and warmed up (the handler module kept warm,
  both workers idle), then ``--clients`` threads released together, each running the
  command ``--requests`` times one after another;
- with ``--reload-every S``, the handler module's mtime moved on every S seconds while
  they run: the server re-executes itself each time (``server-reloading``).

The command's own fallback (what the shell answers when the client exits 1 with no
reply) is marked: it also writes ``hookbus-wrapper-fallback after exit N`` to stderr, so
a call the client left unanswered fails the run instead of passing as an answer.

Every answer is checked (exit 0, nothing on stderr, the decision and reason the command
deserves), then the store: exactly one row per call id, with the action that call was
answered. Each row also names the process that ran the handler and its parent, which
tells who answered: the server's persistent workers (many calls each), its one-shot
children (one call each), or a cold path (a parent that is not the server). The
``client-fallback`` diagnostics are counted too. Meanwhile a sampler reads the server's
and each child's ``Rss`` and ``Pss`` from ``/proc/<pid>/smaps_rollup`` every 0.1 s.

Exit status 0 when every call was answered right by the warm server and every row is
there; 1 otherwise (a wrong, missing or cold answer, a lost or doubled row). Results,
per-call times included, go to ``benchmarks/results/warm_stress.json`` (git-ignored).
The server is stopped at the end, whatever happened, and its children with it.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHELL = "/bin/sh"
WARMUP = 5
SAMPLE_EVERY = 0.1
#: No call of a warm server takes this long; a hung one is a failure, not a stall.
CALL_LIMIT = 60.0
HANDLER = """\
import os

import hookbus
from hookbus.local.store import Dispatch


@hookbus.handler("before-tool", tools="shell", timeout=10)
def record(event, ctx):
    deny = (event.tool.command or "").startswith("rm ")
    # Who ran it (pid/parent pid): the benchmark tells workers, one-shot children and
    # cold paths apart by it.
    ctx.store.record(Dispatch(host=event.host, action="deny" if deny else "allow",
                              session_id=event.session_id, call_id=event.tool.call_id or "",
                              agent_type=f"{os.getpid()}/{os.getppid()}"))
    if deny:
        return hookbus.Reply.deny("stress: no rm")
    return hookbus.Reply.allow("stress: fine")
"""
REASONS = {"deny": "stress: no rm", "allow": "stress: fine"}
#: What the marked command's fallback writes to stderr, then how its hook exited.
WRAPPER_FALLBACK = "hookbus-wrapper-fallback after exit "


class StressError(Exception):
    """The run could not be set up or measured."""


#: The reasons of the run's ``client-fallback`` diagnostics.
FALLBACK_REASONS: list[str] = []


def payload(project: Path, call_id: str, command: str) -> bytes:
    return json.dumps({
        "session_id": "5e7d0c2a-1b3f-4c8e-9d6a-7f2e1a0b9c43",
        "transcript_path": str(project / "transcript.jsonl"),
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "stress"},
        "tool_use_id": call_id,
    }).encode()  # fmt: skip


def expected(client: int, request: int) -> tuple[str, str]:
    """The command of one call and the decision it deserves: a third are ``rm``."""
    if (client + request) % 3 == 0:
        return f"rm -rf build/{client}", "deny"
    return f"ls -la src/{client}", "allow"


def check(done: subprocess.CompletedProcess[bytes], decision: str) -> str | None:
    """None when ``done`` is the answer ``decision`` deserves, else what was wrong."""
    if done.returncode != 0 or done.stderr:
        return f"exit {done.returncode}, stderr {done.stderr[-300:]!r}"
    try:
        out = json.loads(done.stdout)["hookSpecificOutput"]
    except (ValueError, KeyError, TypeError):
        return f"stdout {done.stdout[-300:]!r}"
    if (out.get("permissionDecision"), out.get("permissionDecisionReason")) != (
        decision, REASONS[decision]):  # fmt: skip
        return f"expected {decision}, got {out!r}"
    return None


class Setup:
    """The project, its installed command, its environment and its server."""

    def __init__(self, python: str, root: Path) -> None:
        self.python = python
        self.project = root / "proj"
        (self.project / ".git").mkdir(parents=True)  # the configuration search stops here
        # The user's configuration: the only handlers (with the built-in ones) the warm
        # server keeps warm.
        user = root / "config" / "hookbus"
        user.mkdir(parents=True)
        self.module = user / "stress_rows.py"
        self.module.write_text(HANDLER)
        (user / "config.toml").write_text('enable = ["stress_rows:record"]\n')
        # Short: the socket's path must fit a sockaddr_un.
        self.state = Path(tempfile.mkdtemp(prefix="hbs"))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HOOKBUS_", "PYTHON"))}
        env.pop("XDG_RUNTIME_DIR", None)
        self.env = {**env, "HOOKBUS_STATE_DIR": str(self.state),
                    "XDG_CONFIG_HOME": str(root / "config"),
                    "CLAUDE_PROJECT_DIR": str(self.project)}  # fmt: skip
        self.hookbus("install", "--host", "claude", "--server", "--scope", "local")
        settings = json.loads((self.project / ".claude" / "settings.local.json").read_text())
        (group,) = [g for g in settings["hooks"]["PreToolUse"] if "Bash" in g["matcher"]]
        self.command: str = group["hooks"][0]["command"]
        if "client" not in self.command:
            raise StressError(f"the installed command does not run the client: {self.command}")
        self.command = mark_fallback(self.command)

    def hookbus(self, *args: str) -> str:
        done = subprocess.run([self.python, "-m", "hookbus", *args], cwd=self.project,
                              env=self.env, capture_output=True, text=True, timeout=120,
                              check=False)  # fmt: skip
        if done.returncode != 0:
            raise StressError(f"hookbus {' '.join(args)}: {done.stdout}{done.stderr}")
        return done.stdout

    def status(self) -> dict[str, object]:
        return dict(json.loads(self.hookbus("serve", "--status", "--json")))

    def call(self, call_id: str, command: str) -> tuple[float, subprocess.CompletedProcess[bytes]]:
        data = payload(self.project, call_id, command)
        began = time.perf_counter()
        done = subprocess.run([SHELL, "-c", self.command], input=data, capture_output=True,
                              cwd=self.project, env=self.env, timeout=CALL_LIMIT,
                              check=False)  # fmt: skip
        return time.perf_counter() - began, done

    def warm_up(self) -> None:
        """A few calls, until the handler module is warm and both workers are idle."""
        for i in range(WARMUP):
            _, done = self.call(f"warmup-{i}", "ls")
            if (wrong := check(done, "allow")) is not None:
                raise StressError(f"warm-up call: {wrong}")
        until = time.monotonic() + 30
        while True:
            status = self.status()
            workers = status["workers"]
            assert isinstance(workers, dict)
            if status["warm"] == 1 and workers["busy"] == 0 and workers["count"] >= 1:
                return
            if time.monotonic() > until:
                raise StressError(f"the server did not settle: {status}")
            time.sleep(0.1)

    def stop(self) -> None:
        """Stop whatever server runs in this state folder, its children first killed."""
        pid_file = self.state / "run" / "server.pid"
        try:
            pid = int(pid_file.read_text())
        except (OSError, ValueError):
            return
        subprocess.run([self.python, "-m", "hookbus", "serve", "--stop"], cwd=self.project,
                       env=self.env, capture_output=True, timeout=60, check=False)  # fmt: skip
        until = time.monotonic() + 30
        while alive(pid) and time.monotonic() < until:
            time.sleep(0.05)
        for child in children(pid):  # only if it did not stop: its workers' groups
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child, signal.SIGKILL)
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def mark_fallback(command: str) -> str:
    """``command`` with its shell fallback (after the ``fi`` of its ``if``: see
    ``hookbus.hosts.shared.manifest.shell_command``) also writing :data:`WRAPPER_FALLBACK` and
    the hook's exit status (``$s``) to stderr."""
    mark = f"printf '{WRAPPER_FALLBACK}%s' \"$s\" >&2"
    marked = command.replace("; fi; ", f"; fi; {mark}; ", 1)
    if marked == command:
        raise StressError(f"no shell fallback found in the installed command: {command}")
    return marked


class Reloader(threading.Thread):
    """Moves the handler module's mtime on every ``every`` seconds: the server, which
    watches the modules it keeps warm, re-executes itself."""

    def __init__(self, module: Path, every: float) -> None:
        super().__init__(daemon=True)
        self.module = module
        self.every = every
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(self.every):
            stamp = time.time_ns()
            os.utime(self.module, ns=(stamp, stamp))


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def memory(pid: int) -> tuple[int, int] | None:
    """``Rss`` and ``Pss`` of ``pid`` in KiB; None once it is gone."""
    try:
        lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
    except OSError:
        return None
    found = {k: int(v.split()[0]) for k, _, v in (x.partition(":") for x in lines[1:])
             if k in ("Rss", "Pss")}  # fmt: skip
    return (found["Rss"], found["Pss"]) if len(found) == 2 else None


class Sampler(threading.Thread):
    """The server's and its children's memory, every :data:`SAMPLE_EVERY` seconds."""

    def __init__(self, server: int) -> None:
        super().__init__(daemon=True)
        self.server = server
        self.samples: list[dict[int, tuple[int, int]]] = []
        self.done = threading.Event()

    def sample(self) -> dict[int, tuple[int, int]]:
        found = {}
        for pid in (self.server, *children(self.server)):
            if (rss_pss := memory(pid)) is not None:
                found[pid] = rss_pss
        self.samples.append(found)
        return found

    def run(self) -> None:
        while not self.done.wait(SAMPLE_EVERY):
            self.sample()


def summarise(sampler: Sampler, calls_by_pid: dict[int, int]) -> dict[str, object]:
    """Max and end of the server's memory, of its persistent workers' (processes that
    answered more than one call) and of its one-shot children's (one call each)."""
    server = sampler.server
    end = sampler.samples[-1]

    def group(sample: dict[int, tuple[int, int]], worker: bool) -> list[tuple[int, int]]:
        return [v for p, v in sample.items()
                if p != server and (calls_by_pid.get(p, 0) > 1) == worker]  # fmt: skip

    out: dict[str, object] = {"samples": len(sampler.samples)}
    out["server"] = {
        "rss_kb_max": max(s[server][0] for s in sampler.samples if server in s),
        "pss_kb_max": max(s[server][1] for s in sampler.samples if server in s),
        "rss_kb_end": end[server][0] if server in end else None,
        "pss_kb_end": end[server][1] if server in end else None,
    }
    for name, worker in (("workers", True), ("one_shot_children", False)):
        sets = [group(s, worker) for s in sampler.samples]
        each = [v for g in sets for v in g]
        out[name] = {
            "count_max": max(len(g) for g in sets),
            "count_end": len(group(end, worker)),
            "rss_kb_max_each": max((v[0] for v in each), default=0),
            "pss_kb_max_each": max((v[1] for v in each), default=0),
            "rss_kb_max_total": max(sum(v[0] for v in g) for g in sets),
            "pss_kb_max_total": max(sum(v[1] for v in g) for g in sets),
            "rss_kb_end_total": sum(v[0] for v in group(end, worker)),
            "pss_kb_end_total": sum(v[1] for v in group(end, worker)),
        }
    return out


def drive(setup: Setup, clients: int, requests: int) -> tuple[list[float], list[str], float]:
    """Every client's calls: the per-call times, what went wrong, the total wall time."""
    times: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    gate = threading.Barrier(clients + 1)

    def client(n: int) -> None:
        gate.wait()
        for i in range(requests):
            command, decision = expected(n, i)
            try:
                took, done = setup.call(f"stress-{n}-{i}", command)
                wrong = check(done, decision)
            except (OSError, subprocess.SubprocessError) as exc:
                took, wrong = 0.0, repr(exc)
            with lock:
                if wrong is None:
                    times.append(took)
                else:
                    failures.append(f"stress-{n}-{i}: {wrong}")

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    gate.wait()
    began = time.perf_counter()
    for t in threads:
        t.join()
    return times, failures, time.perf_counter() - began


def rows(setup: Setup) -> tuple[dict[str, tuple[str, int, int]], collections.Counter[str]]:
    """The stress calls' rows by call id (action, pid, parent pid), and how many rows
    each call id has."""
    db = sqlite3.connect(f"file:{setup.state / 'store.sqlite3'}?mode=ro", uri=True)
    try:
        found = db.execute("SELECT call_id, action, agent_type FROM dispatches "
                           "WHERE call_id LIKE 'stress-%'").fetchall()  # fmt: skip
    finally:
        db.close()
    by_id: dict[str, tuple[str, int, int]] = {}
    for call_id, action, who in found:
        pid, _, parent = who.partition("/")
        by_id[call_id] = (action, int(pid), int(parent))
    return by_id, collections.Counter(call_id for call_id, _, _ in found)


def quantile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass
class Run:
    """What one stress run measured."""

    clients: int
    requests: int
    server: int
    load: float
    times: list[float]
    failures: list[str]
    wall: float
    #: The stress calls' rows by call id: (action, pid, parent pid).
    by_id: dict[str, tuple[str, int, int]]
    #: How many rows each call id has.
    counts: collections.Counter[str]
    #: The diagnostics written, by event name.
    events: collections.Counter[str]
    served: int
    sampler: Sampler


def measure(setup: Setup, clients: int, requests: int, reload_every: float | None = None) -> Run:
    setup.hookbus("serve", "--detach")
    setup.warm_up()
    server = int(str(setup.status()["pid"]))
    sampler = Sampler(server)
    sampler.sample()
    sampler.start()
    load = os.getloadavg()[0]
    print(f"{clients} clients x {requests} requests, load {load:.2f}, server {server}; "
          f"command: {setup.command}\n")  # fmt: skip
    reloader = None
    if reload_every is not None:
        reloader = Reloader(setup.module, reload_every)
        reloader.start()
    times, failures, wall = drive(setup, clients, requests)
    if reloader is not None:
        reloader.done.set()
        reloader.join()
    sampler.done.set()
    sampler.join()
    sampler.sample()  # the end
    served = int(str(setup.status()["served"]))
    by_id, counts = rows(setup)
    log = setup.state / "diagnostics.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    seen = [json.loads(line) for line in lines]
    events = collections.Counter(d["event"] for d in seen)
    # Why a client answered cold: the diagnostic's reason, kept for the results.
    FALLBACK_REASONS.extend(str(d.get("reason")) for d in seen if d["event"] == "client-fallback")
    return Run(clients, requests, server, load, times, failures, wall, by_id, counts, events,
               served, sampler)  # fmt: skip


def tally(run: Run) -> tuple[bool, dict[str, object]]:
    """Whether all is right, and the results: times, failures, the rows checked against
    the calls, who answered, memory."""
    total = run.clients * run.requests
    ids = {f"stress-{n}-{i}": expected(n, i)[1]
           for n in range(run.clients) for i in range(run.requests)}  # fmt: skip
    missing = set(ids) - set(run.by_id)
    doubled = [k for k, v in run.counts.items() if v > 1]
    unknown = set(run.by_id) - set(ids)
    wrong_action = [k for k, (action, _, _) in run.by_id.items() if ids.get(k, action) != action]
    warm = [pid for _, pid, parent in run.by_id.values() if parent == run.server]
    calls_by_pid = collections.Counter(warm)
    cold = len(run.by_id) - len(warm)
    ordered = sorted(run.times)
    ms = {f"p{round(q * 100)}": round(quantile(ordered, q) * 1000, 1) for q in (0.5, 0.9, 0.99)}
    ms["max"] = round(ordered[-1] * 1000, 1) if ordered else 0.0
    results: dict[str, object] = {
        "clients": run.clients, "requests": run.requests, "calls": total,
        "cpus": os.cpu_count(), "load_before": run.load, "load_after": os.getloadavg()[0],
        "wall_s": round(run.wall, 2), "calls_per_s": round(total / run.wall, 1),
        "call_ms": ms, "answered_right": len(run.times), "failures": len(run.failures),
        "failure_samples": run.failures[:20],
        "rows": sum(run.counts.values()), "rows_missing": len(missing),
        "rows_doubled": len(doubled), "rows_unknown": len(unknown),
        "rows_wrong_action": len(wrong_action),
        "answered_by_workers": sum(n for n in calls_by_pid.values() if n > 1),
        "answered_by_one_shot_children": sum(n for n in calls_by_pid.values() if n == 1),
        "calls_per_worker": sorted(n for n in calls_by_pid.values() if n > 1),
        "answered_cold": cold, "client_fallbacks": run.events["client-fallback"],
        "fallback_reasons": FALLBACK_REASONS,
        "served": run.served, "diagnostics": dict(run.events),
        "memory": summarise(run.sampler, calls_by_pid),
        "times_ms": [round(t * 1000, 2) for t in run.times],
    }  # fmt: skip
    ok = (not run.failures and len(run.times) == total and not missing and not doubled
          and not unknown and not wrong_action and cold == 0
          and run.events["client-fallback"] == 0)  # fmt: skip
    return ok, results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument(
        "--reload-every",
        type=float,
        default=None,
        metavar="S",
        help="touch the handler module every S seconds: the server reloads",
    )
    parser.add_argument("--python", default=sys.executable, help="the interpreter with hookbus")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="warm-stress-") as tmp:
        setup: Setup | None = None
        try:
            setup = Setup(os.path.abspath(opts.python), Path(tmp))
            run = measure(setup, opts.clients, opts.requests, opts.reload_every)
        except (StressError, OSError, subprocess.SubprocessError) as exc:
            print(f"warm_stress: {exc}", file=sys.stderr)
            return 1
        finally:
            if setup is not None:
                setup.stop()
                shutil.rmtree(setup.state, ignore_errors=True)
    ok, results = tally(run)
    out = HERE / "results" / "warm_stress.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=1))
    print(json.dumps({k: v for k, v in results.items() if k != "times_ms"}, indent=1))
    print(f"\n{'OK' if ok else 'FAILED'}: {len(run.times)}/{results['calls']} answered right, "
          f"{results['rows']} rows, {results['answered_cold']} cold; results in {out}")  # fmt: skip
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
