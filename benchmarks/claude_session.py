"""Wall time of a whole real Claude Code session, without hooks, with hookbus (cold, and
through its warm server), and with a hand-written Python hook on the same events.

Usage (with the interpreter hookbus is installed for; it is also the hooks' interpreter)::

    .venv/bin/python benchmarks/claude_session.py [--rounds N] [--seed S]

Each session is ``claude -p PROMPT --output-format json --allowedTools Bash`` of the
pinned Claude Code (``tests/e2e/hosts.py`` installs it into the host cache, outside the
clone, when it is missing), headless and offline, against the e2e suite's scripted fake
Anthropic server: the model runs ``echo hi | tee ran_proof.txt`` with Bash, then answers
with a final text. The variants, each in a workspace of its own (``tests/e2e/harness.py``:
its own HOME, project and ``HOOKBUS_STATE_DIR``, and no ``XDG_RUNTIME_DIR``, so a
variant's server listens in ``run/`` of its own state folder):

  (0) no hooks at all: the project has no ``.claude/settings.json``;
  (1) ``hookbus install --host claude`` with an empty ``.hookbus.toml``: no handler is
      enabled, so its manifest registers no hook at all (checked) and no hook process
      starts;
  (2) hookbus installed (``--no-server``: ``hookbus run``) with one no-op handler (it
      appends a line to a log and returns None) on every portable kind but ``other``;
  (3) the events (2) registered, each running a stdlib-only Python script instead that
      reads stdin, appends the same kind of line and exits 0: what any Python hook costs;
  (4) (2)'s project installed with ``--server`` (every command runs the client), with
      its server started by ``hookbus serve --detach`` before the check run, which is
      also its warm-up, and running through every round;
  (5) the same with no server when each session starts: the first hook call runs the
      cold path in the client and starts a server, which answers the calls after it is
      up; it is stopped after the session.

Every variant first runs once and is checked (exit 0, a JSON result that is no error, the
proof file, no process left behind, no hookbus diagnostic but the server's own start and
stop, and for (2)-(5) the hook log's events; for (4) the server's ``served`` count, from
``hookbus serve --status --json``, rose by the hook calls and the handler ran under the
server, for (5) the first call ran the cold path and the server answered the calls it
logged); then every round runs each variant once, in a freshly shuffled order, and checks
each run the same way. Reported: median, min and max session wall time, the overhead of
the median over (0)'s in ms and as a ratio, the overhead per hook process, and the
overhead of (2), (4) and (5) divided by (3)'s (the issue's target: (4) <= 1.2). Every
server is stopped at the end, whatever happened, and a process still running with a
workspace's environment fails the run. Results, raw samples included, go to
``benchmarks/results/claude_session.json`` (git-ignored). Method: README.md.

Standard library only, plus the e2e harness. Exit status 0 when the measurement succeeded;
1 when it cannot be trusted (a failed check); 2 when Claude Code cannot be installed or run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))  # the e2e harness is the package tests.e2e

from tests.e2e import hosts  # noqa: E402
from tests.e2e.harness import Claude, Run, Workspace  # noqa: E402

RESULTS = HERE / "results" / "claude_session.json"
DEFAULT_ROUNDS = 7
MIN_ROUNDS = 5
SETUP_TIMEOUT = 60.0
SESSION_TIMEOUT = 60.0
#: How long a stopped server's workers get to exit once the server itself is gone.
EXIT_TIMEOUT = 10.0
#: Load average per CPU, before timing, above which the run is flagged as disturbed.
BUSY = 0.25

PROOF = "ran_proof.txt"
COMMAND = f"echo hi | tee {PROOF}"
MARKER = "BENCH-SESSION"
PROMPT = f"{MARKER}: please run echo hi"
FINAL_TEXT = "All done."
SCENARIO: dict[str, Any] = {
    "conversations": [
        {
            "match": MARKER,
            "turns": [
                {
                    "text": "I will run it.",
                    "tool_use": {
                        "name": "Bash",
                        "input": {"command": COMMAND, "description": "Run it"},
                    },
                },
                {"text": FINAL_TEXT},
            ],
        }
    ]
}

#: Every portable kind but ``other`` (as ``tests/e2e/e2e_handlers.py`` lists them).
PORTABLE_KINDS = (
    "session-start", "prompt-submit", "before-tool", "after-tool", "after-edit", "stop",
    "subagent-start", "subagent-stop", "pre-compact", "session-end", "model-switch",
)  # fmt: skip
#: The hooks this session fires, in order: native event and the kind hookbus decodes it to.
SESSION_HOOKS = (
    ("SessionStart", "session-start"),
    ("UserPromptSubmit", "prompt-submit"),
    ("PreToolUse", "before-tool"),
    ("PostToolUse", "after-tool"),
    ("Stop", "stop"),
    ("SessionEnd", "session-end"),
)

HANDLER_MODULE = "bench_noop"
#: The handler of variants (2), (4) and (5). One log line per call: kind, native event,
#: and the parent of the process it runs in: in (2) the ``hookbus run`` process (its
#: watchdog forks the worker that runs the handler), one per call; in (4) and (5) the
#: warm server (a worker or a one-shot child of it answers), or, for a call the client
#: answered with the cold path, that client process.
_HANDLER_SOURCE = '''\
"""Variants (2), (4), (5): one handler on every portable kind but ``other``; it logs and returns None."""

import os

from hookbus import handler

LOG = {log!r}


@handler(*{kinds!r})
def noop(event):
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(f"{{event.kind}} {{event.native}} {{os.getppid()}}\\n")
    return None
'''

#: Variant (3)'s hook: standard library only, the same log line (native event and pid).
_STDLIB_HOOK_SOURCE = '''\
"""Variant (3): a hand-written Python hook. Reads the payload, logs its event, exits 0."""

import json
import os
import sys

LOG = {log!r}

payload = json.load(sys.stdin)
with open(LOG, "a", encoding="utf-8") as f:
    f.write(f"{{payload.get('hook_event_name')}} {{os.getpid()}}\\n")
sys.exit(0)
'''


#: ``Variant.server``: a warm server runs from before the variant's check run on...
WARM = "warm"
#: ...or none runs when a session starts (its first hook call starts one), and the one
#: it started is stopped after the session.
COLD = "cold"
#: What a server leaves in its folder (``hookbus.runtime.warm.wire``'s names); none of them
#: may be there when a session of a ``COLD`` variant starts.
SERVER_FILES = ("server.sock", "server.pid", "server.lock")
#: The only diagnostics a session of a server variant may record: the server's own
#: start and stop (level ``info``). A ``client-fallback`` (a server that did not answer)
#: or anything else fails the run.
SERVER_DIAGNOSTICS = frozenset({"server-started", "server-stopped"})


class BenchmarkError(Exception):
    """The measurement cannot be trusted (a failed check or a failed setup step)."""


@dataclass(frozen=True)
class Variant:
    """One way of running the session, in a workspace of its own."""

    key: str
    label: str
    claude: Claude
    #: The hooks block of the project's ``.claude/settings.json`` (empty: none).
    hooks: Mapping[str, Any]
    #: The text of the project's ``.claude/settings.json`` (None: there is none).
    settings: str | None
    #: The hook log and the events one session must append to it (as ``parse_log`` reads
    #: them), or None for variants that run no hook.
    log: Path | None = None
    expected: tuple[str, ...] = ()
    #: hookbus's warm server: None (the hooks do not use it), :data:`WARM` or :data:`COLD`.
    server: str | None = None

    @property
    def workspace(self) -> Workspace:
        return self.claude.workspace

    @property
    def number(self) -> str:
        return f"({self.key})"


@dataclass(frozen=True)
class Stats:
    median: float
    min: float
    max: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> Stats:
        return cls(median=statistics.median(samples), min=min(samples), max=max(samples))


# -- setup ------------------------------------------------------------------------------


def run_checked(argv: Sequence[str], ws: Workspace) -> str:
    """Run ``argv`` in ``ws``'s project with its clean environment; its stdout."""
    try:
        done = subprocess.run(
            list(argv),
            cwd=ws.project,
            env=ws.base_env(),
            capture_output=True,
            text=True,
            timeout=SETUP_TIMEOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BenchmarkError(f"{shlex.join(argv)} took over {SETUP_TIMEOUT:.0f}s") from None
    if done.returncode != 0:
        raise BenchmarkError(f"{shlex.join(argv)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def settings_text(ws: Workspace) -> str | None:
    """The text of the project's ``.claude/settings.json``, None when there is none."""
    path = ws.project / ".claude" / "settings.json"
    return path.read_text() if path.exists() else None


def settings_hooks(ws: Workspace) -> dict[str, Any]:
    """The hooks block of the project's ``.claude/settings.json`` ({} when it has none)."""
    text = settings_text(ws)
    hooks: dict[str, Any] = json.loads(text).get("hooks", {}) if text else {}
    return hooks


def install_hookbus(ws: Workspace, config: str, args: Sequence[str] = ()) -> dict[str, Any]:
    """Write ``config`` as the project's ``.hookbus.toml``, run ``hookbus install --host
    claude ARGS`` and check that what it installed is what ``hookbus manifest ARGS``
    generates; the installed hooks block."""
    (ws.project / ".hookbus.toml").write_text(config)
    hookbus = [sys.executable, "-m", "hookbus"]
    run_checked([*hookbus, "install", "--host", "claude", *args], ws)
    manifest = run_checked([*hookbus, "manifest", "--host", "claude", *args], ws)
    generated = json.loads(manifest)["hooks"]
    installed = settings_hooks(ws)
    if installed != generated:
        raise BenchmarkError(f"installed hooks {installed} differ from the manifest {generated}")
    return installed


def make_workspace(root: Path, key: str) -> Workspace:
    return Workspace(root / f"variant-{key}").create()


def no_hooks(executable: Path, root: Path) -> Variant:
    ws = make_workspace(root, "0")
    return Variant("0", "(0) no hooks", Claude(executable, ws), {}, settings_text(ws))


def hookbus_nothing_enabled(executable: Path, root: Path) -> Variant:
    ws = make_workspace(root, "1")
    hooks = install_hookbus(ws, "")
    if hooks:
        raise BenchmarkError(f"(1): an empty .hookbus.toml registered hooks: {sorted(hooks)}")
    label = "(1) hookbus, no handler enabled"
    return Variant("1", label, Claude(executable, ws), hooks, settings_text(ws))


def hookbus_noop(executable: Path, root: Path) -> Variant:
    ws = make_workspace(root, "2")
    log = ws.root / "hooks.log"
    source = _HANDLER_SOURCE.format(log=str(log), kinds=PORTABLE_KINDS)
    (ws.project / f"{HANDLER_MODULE}.py").write_text(source)
    # --no-server: this variant is hookbus run, whatever the install default.
    hooks = install_hookbus(ws, f'enable = ["{HANDLER_MODULE}:noop"]\n', ("--no-server",))
    missing = [native for native, _ in SESSION_HOOKS if native not in hooks]
    if missing:
        raise BenchmarkError(f"(2): the manifest does not register {missing}: {sorted(hooks)}")
    expected = tuple(kind for _, kind in SESSION_HOOKS)
    label = "(2) hookbus, 1 no-op handler"
    return Variant("2", label, Claude(executable, ws), hooks, settings_text(ws), log, expected)


def stdlib_hook(executable: Path, root: Path, registered: Mapping[str, Any]) -> Variant:
    """Variant (3): ``registered`` (variant (2)'s hooks block), every command replaced."""
    ws = make_workspace(root, "3")
    log = ws.root / "hooks.log"
    script = ws.root / "stdlib_noop_hook.py"
    script.write_text(_STDLIB_HOOK_SOURCE.format(log=str(log)))
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"
    hooks = {
        event: [
            {**group, "hooks": [{**entry, "command": command} for entry in group["hooks"]]}
            for group in groups
        ]
        for event, groups in registered.items()
    }
    settings = ws.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"hooks": hooks}, indent=2) + "\n")
    expected = tuple(native for native, _ in SESSION_HOOKS)
    label = "(3) stdlib python hook, same events"
    return Variant("3", label, Claude(executable, ws), hooks, settings_text(ws), log, expected)


def hookbus_served(
    executable: Path, root: Path, key: str, registered: Mapping[str, Any], server: str
) -> Variant:
    """Variant (4) (``server`` :data:`WARM`) or (5) (:data:`COLD`): (2)'s project
    installed with ``hookbus install --host claude --server``, which must register the
    same events as (2) (``registered``), every command running the client."""
    ws = make_workspace(root, key)
    log = ws.root / "hooks.log"
    source = _HANDLER_SOURCE.format(log=str(log), kinds=PORTABLE_KINDS)
    (ws.project / f"{HANDLER_MODULE}.py").write_text(source)
    hooks = install_hookbus(ws, f'enable = ["{HANDLER_MODULE}:noop"]\n', ("--server",))
    if sorted(hooks) != sorted(registered):
        raise BenchmarkError(
            f"({key}): --server registered {sorted(hooks)}, (2) {sorted(registered)}"
        )
    commands = [e["command"] for groups in hooks.values() for g in groups for e in g["hooks"]]
    if not all("client.run()" in command for command in commands):
        raise BenchmarkError(f"({key}): not every installed command runs the client: {commands}")
    expected = tuple(kind for _, kind in SESSION_HOOKS)
    label = (
        "(4) hookbus --server, warm server"
        if server == WARM
        else "(5) hookbus --server, none at start"
    )
    claude = Claude(executable, ws)
    return Variant(key, label, claude, hooks, settings_text(ws), log, expected, server)


# -- the warm server --------------------------------------------------------------------


def server_folder(ws: Workspace) -> Path:
    """Where ``ws``'s server listens. The workspace's environment (``base_env``, also the
    hooks') has no ``XDG_RUNTIME_DIR``, so it is ``run/`` in its own state folder: each
    variant has a server of its own, and none is the user's (docs/server.md)."""
    return ws.state / "run"


def server_status(ws: Workspace) -> dict[str, Any] | None:
    """``hookbus serve --status --json`` in ``ws``'s environment; None when no server runs."""
    argv = [sys.executable, "-m", "hookbus", "serve", "--status", "--json"]
    try:
        done = subprocess.run(argv, cwd=ws.project, env=ws.base_env(), capture_output=True,
                              text=True, timeout=SETUP_TIMEOUT, stdin=subprocess.DEVNULL,
                              check=False)  # fmt: skip
    except subprocess.TimeoutExpired:
        raise BenchmarkError(f"{shlex.join(argv)} took over {SETUP_TIMEOUT:.0f}s") from None
    if done.returncode == 1 and "no server is running" in done.stderr:
        return None
    if done.returncode != 0:
        raise BenchmarkError(f"{shlex.join(argv)} failed:\n{done.stdout}{done.stderr}")
    status: dict[str, Any] = json.loads(done.stdout)
    socket = server_folder(ws) / SERVER_FILES[0]
    if status.get("socket") != str(socket):
        raise BenchmarkError(f"the server answering in {ws.root} listens on "
                             f"{status.get('socket')}, not on {socket}")  # fmt: skip
    return status


def start_server(ws: Workspace) -> dict[str, Any]:
    """``hookbus serve --detach`` in ``ws``'s environment; the running server's status."""
    run_checked([sys.executable, "-m", "hookbus", "serve", "--detach"], ws)
    status = server_status(ws)
    if status is None:
        raise BenchmarkError(f"hookbus serve --detach returned but no server answers in {ws.root}")
    return status


def alive(pid: int) -> bool:
    """``pid`` runs (a zombie has exited: only its parent's wait is missing)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def of_workspace(pid: int, root: Path) -> bool:
    """``pid`` runs with the environment of a workspace under ``root`` (a HOME or state
    folder there): the benchmark started it, itself or through Claude, a hook or a
    server. Only such a process is ever waited for or killed (a pid file's number may
    have been reused by someone else's process)."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False  # gone, or not ours
    return f"={root}/".encode() in environ and alive(pid)


def stop_server(ws: Workspace) -> None:
    """Stop the server of ``ws``, if one runs, with ``hookbus serve --stop``, and wait
    until it and its workers are gone; a server or worker still there is killed, and
    that is an error."""
    try:
        pid = int((server_folder(ws) / "server.pid").read_text())
    except (OSError, ValueError):
        return  # no pid file: no server (it removes the file as it exits)
    if not of_workspace(pid, ws.root):
        return  # it exited without removing the file (killed): nothing runs
    # Its workers, to wait for: they exit when their socket pair to the server closes.
    children = Path(f"/proc/{pid}/task/{pid}/children")
    workers: list[int] = []
    with contextlib.suppress(OSError):
        workers = [int(child) for child in children.read_text().split()]
    argv = [sys.executable, "-m", "hookbus", "serve", "--stop"]
    try:
        done = subprocess.run(argv, cwd=ws.project, env=ws.base_env(), capture_output=True,
                              text=True, timeout=SETUP_TIMEOUT, stdin=subprocess.DEVNULL,
                              check=False)  # fmt: skip
        said = f"{done.stdout}{done.stderr}".strip()
    except subprocess.TimeoutExpired:
        said = f"took over {SETUP_TIMEOUT:.0f}s"
    until = time.monotonic() + EXIT_TIMEOUT
    while (left := [p for p in (pid, *workers) if of_workspace(p, ws.root)]) and (
        time.monotonic() < until
    ):
        time.sleep(0.05)
    if left:
        for p in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(p, signal.SIGKILL)
        raise BenchmarkError(f"hookbus serve --stop ({said}) left server {pid}'s processes "
                             f"{left} running in {ws.root} (killed)")  # fmt: skip


def end_cold_session(ws: Workspace) -> bool:
    """After a :data:`COLD` session: stop the server its first call started, wait until
    no process of the workspace runs (a start still under way binds, then is stopped
    too), and remove a start lock left behind; whether there was one.

    Why a lock can be left: a call that found no socket yet (the server still starting)
    runs the cold path and, after its reply, tries a start too; once the first start
    is bound and has removed its lock, this one takes the lock, its ``serve --detach``
    finds the server running and exits 1, and its lock stays. That is harmless while the
    server runs, but for ``LOCK_STALE`` (10 s) it keeps the next session's first call
    from starting a server, and every session of (5) must start as the first one did.
    """
    until = time.monotonic() + EXIT_TIMEOUT
    while True:
        stop_server(ws)
        left = strays(ws.root)
        if not left:
            break
        if time.monotonic() > until:
            for stray in left:
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(stray.partition(":")[0]), signal.SIGKILL)
            raise BenchmarkError(f"processes of {ws.root} still run after its server "
                                 f"stopped (killed): {left}")  # fmt: skip
        time.sleep(0.05)
    lock = server_folder(ws) / SERVER_FILES[2]
    if not lock.exists():
        return False
    lock.unlink()
    return True


def strays(root: Path) -> list[str]:
    """Processes still running with an environment of a workspace under ``root`` (its
    HOME, its state folder): a server, its workers, a hook or a host left behind."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        if int(proc.name) == os.getpid() or not of_workspace(int(proc.name), root):
            continue
        try:
            command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # exited meanwhile
        found.append(f"{proc.name}: {command.strip()}")
    return found


def shut_down(root: Path) -> list[str]:
    """Stop every server a workspace under ``root`` has, kill any process left behind;
    what went wrong (nothing: an empty list)."""
    problems = []
    for folder in sorted(root.glob("variant-*/state/run")):
        try:
            stop_server(Workspace(folder.parent.parent))
        except BenchmarkError as exc:
            problems.append(str(exc))
    for stray in strays(root):
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(stray.partition(":")[0]), signal.SIGKILL)
        problems.append(f"process left behind (killed): {stray}")
    return problems


# -- checks ----------------------------------------------------------------------------


def parse_log(log: Path) -> tuple[list[str], list[str]]:
    """The events a hook log names (first field) and the pids it names (last field: the
    process that wrote it, or for hookbus that process's parent), in order."""
    if not log.exists():
        return [], []
    lines = [line.split() for line in log.read_text().splitlines() if line.strip()]
    return [fields[0] for fields in lines], [fields[-1] for fields in lines]


def check_run(
    variant: Variant, run: Run, before: Mapping[str, Any] | None
) -> tuple[int, int | None]:
    """Check one finished session of ``variant`` (``before``: the status of a
    :data:`WARM` variant's server before it); the hook calls it made, and how many of
    them the warm server answered (None: the variant has no server)."""
    ws = variant.workspace
    problems = []
    if run.returncode != 0:
        problems.append(f"exit status {run.returncode}")
    try:
        output = run.output
    except ValueError:
        problems.append("stdout is not the JSON result")
    else:
        if output.get("is_error") is not False:
            problems.append(f"is_error is {output.get('is_error')!r}")
        if output.get("result") != FINAL_TEXT:
            problems.append(f"result {output.get('result')!r}, expected {FINAL_TEXT!r}")
    proof = ws.project / PROOF
    if not proof.exists() or proof.read_text() != "hi\n":
        problems.append(f"{PROOF} was not written: the Bash call did not run")
    if run.process.leftovers:
        problems.append(f"processes left behind: {list(run.process.leftovers)}")
    diagnostics = ws.diagnostics()
    if variant.server is not None:
        diagnostics = [d for d in diagnostics if (d.get("event"), d.get("level")) not in
                       {(code, "info") for code in SERVER_DIAGNOSTICS}]  # fmt: skip
    if diagnostics:
        problems.append(f"hookbus diagnostics: {diagnostics}")
    calls, served = 0, None
    if variant.log is not None:
        events, pids = parse_log(variant.log)
        calls = len(events)
        if tuple(events) != variant.expected:
            problems.append(f"hook log has {events}, expected {list(variant.expected)}")
        if variant.server is None and len(set(pids)) != calls:
            problems.append(f"{calls} hook calls from {len(set(pids))} processes")
        if variant.server is not None:
            served = check_served(variant, before, pids, problems)
    if problems:
        raise BenchmarkError(f"{variant.label}: {'; '.join(problems)}\n{run.describe()}")
    return calls, served


def check_served(
    variant: Variant, before: Mapping[str, Any] | None, pids: Sequence[str], problems: list[str]
) -> int:
    """Check who answered the hook calls of a server variant's session, whose handler
    logged the parent pids ``pids`` (adding to ``problems``); how many the server did.

    (4): its server, still the same process, answered every call (its ``served`` count
    rose by the calls). (5): the first call found no server and ran the cold path (in a
    client process of its own) and started a server, which answered the calls it logged;
    each call was answered by exactly one of the two."""
    after = server_status(variant.workspace)
    if after is None:
        problems.append("no server runs after the session" if variant.server == WARM else
                        "no server runs after the session: the first call started none")  # fmt: skip
        return 0
    server = str(after["pid"])
    answered = [pid for pid in pids if pid == server]
    if variant.server == WARM:
        if before is None or before["pid"] != after["pid"]:
            problems.append(f"the server changed: {before} before the session, {after} after")
            return 0
        if len(answered) != len(pids):
            problems.append(f"the handler ran under {pids}, not all under the server {server}")
        served = int(after["served"] - before["served"])
        if served != len(pids):
            problems.append(f"the server's served count rose from {before['served']} to "
                            f"{after['served']} over {len(pids)} hook calls")  # fmt: skip
        return served
    cold = [pid for pid in pids if pid != server]
    if not pids or pids[0] == server:
        problems.append(f"the first call was not answered by the cold path: {pids}, "
                        f"server {server}")  # fmt: skip
    if len(set(cold)) != len(cold):
        problems.append(f"cold-path calls {cold} share a process")
    if after["served"] != len(answered) or not answered:
        problems.append(f"the server {server} answered {after['served']} calls, its handler "
                        f"logged {len(answered)} (of {pids})")  # fmt: skip
    return len(answered)


def reset(variant: Variant) -> None:
    """Remove what a session left that the next one's checks read."""
    ws = variant.workspace
    paths = [ws.project / PROOF, ws.root / "requests.jsonl", ws.state / "diagnostics.jsonl"]
    for path in [*paths, *([variant.log] if variant.log else [])]:
        path.unlink(missing_ok=True)


@dataclass(frozen=True)
class Outcome:
    """One checked session."""

    #: Wall time, from just before Claude starts to just after it exited.
    ms: float
    #: Hook calls (each a process Claude starts).
    calls: int
    #: How many of them the warm server answered (None: not a server variant).
    served: int | None
    #: A :data:`COLD` session left a start lock (see :func:`end_cold_session`).
    lock_left: bool = False


def session(variant: Variant) -> Outcome:
    """Run one checked session of ``variant``. A :data:`COLD` variant's server is stopped
    afterwards, even when the session failed, so that the next one starts without."""
    reset(variant)
    ws = variant.workspace
    before = None
    if variant.server == WARM and (before := server_status(ws)) is None:
        raise BenchmarkError(f"{variant.label}: its server no longer runs")
    if variant.server == COLD and (
        left := [name for name in SERVER_FILES if (server_folder(ws) / name).exists()]
    ):
        raise BenchmarkError(f"{variant.label}: {left} in {server_folder(ws)} before a "
                             "session that must start with no server")  # fmt: skip
    lock_left = False
    try:
        try:
            run = variant.claude.run(PROMPT, SCENARIO, tools=("Bash",), timeout=SESSION_TIMEOUT)
        except AssertionError as exc:  # the harness's way of saying the host hung
            raise BenchmarkError(f"{variant.label}: {exc}") from None
        calls, served = check_run(variant, run, before)
    finally:
        if variant.server == COLD:
            lock_left = end_cold_session(ws)
    return Outcome(run.seconds * 1000, calls, served, lock_left)


# -- timing ----------------------------------------------------------------------------


@dataclass
class Samples:
    ms: dict[str, list[float]]
    processes: dict[str, list[int]]
    #: Per session of a server variant, the hook calls its server answered.
    served: dict[str, list[int]]
    orders: list[list[str]]
    #: Timed sessions of (5) that left a start lock.
    locks_left: int = 0
    #: Per variant of :data:`HOOK_ALONE`, its PreToolUse hook alone (ms), once a round.
    alone: dict[str, list[float]] = field(default_factory=dict)


def time_rounds(variants: Sequence[Variant], rounds: int, rng: random.Random) -> Samples:
    """Each round runs every variant once, in a fresh shuffled order, then times the
    hooks of :data:`HOOK_ALONE` alone, once each, in another."""
    samples = Samples({v.key: [] for v in variants}, {v.key: [] for v in variants},
                      {v.key: [] for v in variants if v.server}, [])  # fmt: skip
    order = list(variants)
    chosen = [v for v in variants if v.key in HOOK_ALONE]
    samples.alone = {v.key: [] for v in chosen}
    for v in chosen:
        hook_alone(v)  # a warm-up, not a sample: the first call outside Claude
    for i in range(rounds):
        rng.shuffle(order)
        samples.orders.append([v.key for v in order])
        for variant in order:
            outcome = session(variant)
            samples.ms[variant.key].append(outcome.ms)
            samples.processes[variant.key].append(outcome.calls)
            if outcome.served is not None:
                samples.served[variant.key].append(outcome.served)
            samples.locks_left += outcome.lock_left
        hooks_alone_round(chosen, rng, samples.alone)
        done = ", ".join(f"{v.number} {samples.ms[v.key][-1]:.0f}" for v in order)
        print(f"  round {i + 1}/{rounds}: {done} ms", flush=True)
    return samples


@dataclass
class Measured:
    variants: list[Variant]
    checked: dict[str, float]
    samples: Samples
    seed: int
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]
    #: The warm variant's server, started before its check run and after the last round.
    server_started: dict[str, Any]
    server_ended: dict[str, Any]
    #: Per variant of :data:`HOOK_ALONE`, its PreToolUse hook alone (ms).
    alone: dict[str, list[float]]


def collect(executable: Path, root: Path, rounds: int, seed: int) -> Measured:
    """Set the variants up under ``root``, start (4)'s server, check every variant once,
    time the rounds."""
    variants = build_variants(executable, root)
    for v in variants:
        events = ", ".join(sorted(v.hooks)) or "none"
        print(f"{v.label}: registered hooks: {events}")
    (warm,) = [v for v in variants if v.server == WARM]
    started = start_server(warm.workspace)
    print(f"\n{warm.number}: hookbus serve --detach: server {started['pid']} on "
          f"{started['socket']}, {started['workers']['count']} workers")  # fmt: skip
    # For (4) the check run is also the server's warm-up: its first calls import the
    # handler module in a child, then in the server, whose workers are then replaced.
    print("\nchecking every variant once (also its warm-up)...", flush=True)
    checked: dict[str, float] = {}
    for v in variants:
        outcome = session(v)
        checked[v.key] = outcome.ms
        hooks = f", {outcome.calls} hook calls" if v.log else ""
        answered = "" if outcome.served is None else f", {outcome.served} answered by the server"
        print(f"  {v.label}: ok, {checked[v.key]:.0f} ms{hooks}{answered}", flush=True)
    print(f"\ntiming {rounds} rounds (seed {seed}), each also timing "
          f"{', '.join(f'({key})' for key in HOOK_ALONE)}'s PreToolUse hook alone...", flush=True)  # fmt: skip
    load_before = os.getloadavg()
    samples = time_rounds(variants, rounds, random.Random(seed))
    load_after = os.getloadavg()
    ended = server_status(warm.workspace)
    if ended is None:
        raise BenchmarkError(f"{warm.label}: its server no longer runs after the rounds")
    return Measured(
        variants, checked, samples, seed, load_before, load_after, started, ended, samples.alone
    )


# -- one hook alone ----------------------------------------------------------------------

#: The variants whose installed hook is also timed alone, outside Claude, once a round
#: (after its sessions, so under the same load).
HOOK_ALONE = ("2", "3", "4")


def pre_tool_payload(ws: Workspace) -> bytes:
    """A PreToolUse payload of this session's Bash call, as Claude sends it (field names
    from ``tests/golden/claude/PreToolUse.Bash.json``), in ``ws``'s project."""
    payload = {
        "session_id": "bench-session",
        "transcript_path": str(ws.home / ".claude" / "projects" / "bench.jsonl"),
        "cwd": str(ws.project),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": COMMAND, "description": "Run it"},
        "tool_use_id": "toolu_bench",
    }
    return json.dumps(payload).encode()


def hook_alone(variant: Variant) -> float:
    """Run ``variant``'s installed PreToolUse command once through ``/bin/sh -c``, as
    Claude runs it, in its project with the payload on stdin; its wall time (ms). It must
    exit 0 with no output (the no-op's no-opinion) and log one PreToolUse call."""
    ws = variant.workspace
    command = variant.hooks["PreToolUse"][0]["hooks"][0]["command"]
    env = {**ws.base_env(), "CLAUDE_PROJECT_DIR": str(ws.project)}
    assert variant.log is not None
    lines = len(variant.log.read_text().splitlines()) if variant.log.exists() else 0
    started = time.perf_counter()
    done = subprocess.run(["/bin/sh", "-c", command], input=pre_tool_payload(ws),
                          capture_output=True, cwd=ws.project, env=env,
                          timeout=SETUP_TIMEOUT, check=False)  # fmt: skip
    ms = (time.perf_counter() - started) * 1000
    events, _ = parse_log(variant.log)
    # What the log names for PreToolUse: the kind for hookbus, the native name for (3).
    wanted = variant.expected[[native for native, _ in SESSION_HOOKS].index("PreToolUse")]
    if done.returncode != 0 or done.stdout or done.stderr or events[lines:] != [wanted]:
        raise BenchmarkError(f"{variant.label}: its PreToolUse hook alone: exit "
                             f"{done.returncode}, stdout {done.stdout!r}, stderr "
                             f"{done.stderr!r}, logged {events[lines:]}")  # fmt: skip
    return ms


def hooks_alone_round(
    chosen: list[Variant], rng: random.Random, samples: dict[str, list[float]]
) -> None:
    """Time the installed PreToolUse hook of each of ``chosen`` once, alone, in a fresh
    shuffled order, into ``samples``; (4)'s server must have answered its call."""
    (warm,) = [v for v in chosen if v.server == WARM]
    before = server_status(warm.workspace)
    rng.shuffle(chosen)
    for v in chosen:
        samples[v.key].append(hook_alone(v))
    after = server_status(warm.workspace)
    if before is None or after is None or after["served"] - before["served"] != 1:
        raise BenchmarkError(f"{warm.label}: its hook alone, its server's status went from "
                             f"{before} to {after}")  # fmt: skip


# -- report ----------------------------------------------------------------------------


def summarize(
    variants: Sequence[Variant], samples: Samples
) -> tuple[dict[str, Stats], list[dict[str, Any]]]:
    stats = {key: Stats.of(values) for key, values in samples.ms.items()}
    base = stats["0"].median
    rows = []
    for v in variants:
        s = stats[v.key]
        counts = set(samples.processes[v.key])
        hooks_per_session = counts.pop() if len(counts) == 1 else None
        overhead = s.median - base
        paired = [a - b for a, b in zip(samples.ms[v.key], samples.ms["0"], strict=True)]
        per_hook = overhead / hooks_per_session if hooks_per_session else None
        rows.append(
            {
                "key": v.key,
                "label": v.label,
                "server": v.server,
                "median_ms": s.median,
                "min_ms": s.min,
                "max_ms": s.max,
                "overhead_ms": overhead,
                "overhead_paired_ms": statistics.median(paired),
                "ratio": s.median / base,
                "hook_processes_per_session": hooks_per_session,
                "per_hook_ms": per_hook,
                "served_per_session": samples.served.get(v.key),
                "registered_events": sorted(v.hooks),
                "hooks": v.hooks,
                "settings_json": v.settings,
                "samples_ms": samples.ms[v.key],
                "hook_processes": samples.processes[v.key],
            }
        )
    return stats, rows


def print_table(rows: Sequence[Mapping[str, Any]]) -> None:
    width = max(len(r["label"]) for r in rows)
    head = (
        f"{'variant':<{width}}  {'median':>7} {'min':>7} {'max':>7}"
        f"  {'vs (0)':>7} {'ratio':>6}  {'hooks':>5} {'ms/hook':>7}"
    )
    print(f"\n{head}\n{'-' * len(head)}")
    for r in rows:
        hooks = r["hook_processes_per_session"]
        per_hook = "" if r["per_hook_ms"] is None else f"{r['per_hook_ms']:.1f}"
        print(
            f"{r['label']:<{width}}  {r['median_ms']:>7.0f} {r['min_ms']:>7.0f} {r['max_ms']:>7.0f}"
            f"  {r['overhead_ms']:>+7.0f} {r['ratio']:>6.3f}  {hooks if hooks else '-':>5}"
            f" {per_hook:>7}"
        )


#: The issue's target: a session's hook overhead with the warm server (4) at most this
#: many times the stdlib hooks' (3) on the same events.
TARGET = 1.2


def overhead_ratios(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Each hookbus variant's overhead over (0) divided by (3)'s, from the medians and
    from the medians of same-round differences (None when (3)'s is not above zero: then
    the session's noise swallowed it and no ratio means anything)."""
    by_key = {r["key"]: r for r in rows}
    stdlib = by_key["3"]
    ratios: dict[str, dict[str, float | None]] = {}
    for key in ("2", "4", "5"):
        ratios[key] = {
            field: (by_key[key][field] / stdlib[field] if stdlib[field] > 0 else None)
            for field in ("overhead_ms", "overhead_paired_ms")
        }
    return ratios


def report(measured: Measured) -> dict[str, Any]:
    """Print the table and the figures below it; the results to save."""
    variants, samples = measured.variants, measured.samples
    stats, rows = summarize(variants, samples)
    print_table(rows)
    paired = ", ".join(f"({r['key']}) {r['overhead_paired_ms']:+.0f}" for r in rows[1:])
    print(f"\nmedian of same-round differences from (0), ms: {paired}")
    ratios = overhead_ratios(rows)

    def shown(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f}"

    print("hook overhead over (0), divided by (3)'s (stdlib hooks), from the medians "
          "[from the same-round differences]:")  # fmt: skip
    for key, ratio in ratios.items():
        figure = ratio["overhead_ms"]
        verdict = ""
        if key == "4":
            met = figure is not None and figure <= TARGET
            verdict = f"  (the issue's figure: target <= {TARGET}: {'met' if met else 'MISS'})"
        print(f"  ({key}) {shown(figure)} [{shown(ratio['overhead_paired_ms'])}]{verdict}")
    for r in rows:
        if r["served_per_session"] is not None:
            served = r["served_per_session"]
            print(f"  ({r['key']}): the server "
                  f"answered {statistics.median(served):g} of {r['hook_processes_per_session']} "
                  f"calls per session (median; {min(served)}-{max(served)})")  # fmt: skip
    if samples.locks_left:
        print(f"  (5): {samples.locks_left} of {len(samples.orders)} sessions left a start "
              "lock (a second start that lost the race), removed before the next one")  # fmt: skip
    before, after = measured.load_before, measured.load_after
    print(
        f"ms of wall time per session (claude start to exit); load average "
        f"{before[0]:.2f} before, {after[0]:.2f} after, {os.cpu_count()} CPUs"
    )
    if before[0] > BUSY * (os.cpu_count() or 1):
        print(f"warning: load average {before[0]:.2f} before timing: other work is "
              "running; expect noisier numbers")  # fmt: skip
    empty = variants[1]
    wrote = (
        "wrote no settings file"
        if empty.settings is None
        else f"left .claude/settings.json as {empty.settings.strip()!r}"
    )
    print(f"(1) registers no hook, so Claude starts no hook process; `hookbus install` {wrote}")
    per_hook = ", ".join(
        f"({r['key']}) {(r['median_ms'] - stats['1'].median) / r['hook_processes_per_session']:.1f}"
        for r in rows
        if r["hook_processes_per_session"]
    )
    print(f"ms per hook process against (1) (a settings file, no hook) instead: {per_hook}")
    alone = {key: statistics.median(values) for key, values in measured.alone.items()}
    medians = ", ".join(f"({key}) {ms:.1f}" for key, ms in alone.items())
    print(f"one PreToolUse hook alone (/bin/sh -c, outside Claude, once a round), median ms: {medians}; "
          f"(4)/(3) {alone['4'] / alone['3']:.2f}, (2)/(3) {alone['2'] / alone['3']:.2f}")  # fmt: skip
    by_key = {r["key"]: r for r in rows}
    beyond = ", ".join(
        f"({key}) {by_key[key]['per_hook_ms'] - ms:.1f}" for key, ms in alone.items()
    )
    print("ms per hook in a session beyond that hook alone (Claude starting it and reading "
          f"its reply; against (0)): {beyond}")  # fmt: skip
    end = measured.server_ended
    print(f"(4)'s server {end['pid']} after the rounds: {end['served']} calls served, "
          f"{end['rss_kb']} KiB resident, {end['workers']['count']} workers, "
          f"{end['warm']} handler modules warm")  # fmt: skip
    return {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_before": before,
            "load_after": after,
        },
        "check_runs_ms": measured.checked,
        "orders": samples.orders,
        "cold_sessions_leaving_a_start_lock": samples.locks_left,
        "overhead_ratio_to_stdlib": ratios,
        "target": TARGET,
        "warm_server": {"started": measured.server_started, "ended": measured.server_ended},
        "hook_alone": {"samples_ms": measured.alone, "median_ms": alone},
        "variants": rows,
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--rounds",
        type=int,
        default=DEFAULT_ROUNDS,
        help=f"timed rounds, each running every variant once (default {DEFAULT_ROUNDS}, "
        f"at least {MIN_ROUNDS})",
    )
    parser.add_argument("--seed", type=int, help="seed of the shuffled order (default: random)")
    opts = parser.parse_args(argv)
    if opts.rounds < MIN_ROUNDS:
        parser.error(f"--rounds must be at least {MIN_ROUNDS}")
    return opts


def build_variants(executable: Path, root: Path) -> list[Variant]:
    plain = no_hooks(executable, root)
    empty = hookbus_nothing_enabled(executable, root)
    noop = hookbus_noop(executable, root)
    return [
        plain,
        empty,
        noop,
        stdlib_hook(executable, root, noop.hooks),
        hookbus_served(executable, root, "4", noop.hooks, WARM),
        hookbus_served(executable, root, "5", noop.hooks, COLD),
    ]


def measure(executable: Path, rounds: int, seed: int) -> dict[str, Any]:
    """Set the variants up, check them, time them; the results to save. Every server a
    workspace has is stopped at the end, whatever happened, and a process still running
    with a workspace's environment fails the measurement."""
    with tempfile.TemporaryDirectory(prefix="hookbus-claude-session-") as tmp:
        root = Path(tmp)
        try:
            measured = collect(executable, root, rounds, seed)
        except BaseException:
            for problem in shut_down(root):
                print(f"claude_session: {problem}", file=sys.stderr)
            raise
        if problems := shut_down(root):
            raise BenchmarkError("; ".join(problems))
    return report(measured)


def main(argv: Sequence[str] | None = None) -> int:
    opts = parse_args(argv)
    seed = opts.seed if opts.seed is not None else random.randrange(2**32)
    started, clock = time.strftime("%Y-%m-%dT%H:%M:%S%z"), time.monotonic()
    try:
        executable = hosts.ensure("claude")
    except hosts.HostUnavailable as exc:
        print(f"claude_session: Claude Code cannot be installed or run: {exc}", file=sys.stderr)
        return 2
    spec = hosts.HOSTS["claude"]
    print(f"claude: {executable} ({spec.package} {spec.version})")
    print(f"python (hookbus and the hooks): {sys.executable} ({platform.python_version()})")
    print(f"session: claude -p {PROMPT!r} --output-format json --allowedTools Bash; "
          f"the model runs {COMMAND!r}, then says {FINAL_TEXT!r}\n")  # fmt: skip
    try:
        measured = measure(executable, opts.rounds, seed)
    except BenchmarkError as exc:
        print(f"claude_session: error: {exc}", file=sys.stderr)
        return 1
    elapsed = time.monotonic() - clock
    result = {
        "started": started,
        "elapsed_s": elapsed,
        "claude": {"executable": str(executable), "version": spec.version},
        "python": {"path": sys.executable, "version": sys.version},
        "prompt": PROMPT,
        "tool_command": COMMAND,
        "rounds": opts.rounds,
        "seed": seed,
        **measured,
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nresults: {RESULTS}\ntook {elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
