"""Whole-process wall time of hookbus's Claude Code hook, exactly as installed.

Usage: ``python benchmarks/hook_latency.py [--rounds N] [--python PATH] [--importtime]``

Every case is a command string run through ``/bin/sh -c``, as Claude Code runs command
hooks, with a PreToolUse Bash payload on stdin. hookbus's command is the one
``hookbus manifest --host claude`` generates, run in the case's own project directory
(its ``.hookbus.toml`` and handler module) with its own ``HOOKBUS_STATE_DIR``:

  (a) an index exists but nobody subscribes to PreToolUse;
  (b) one synchronous handler on before-tool/shell (deny ``rm -rf /``, allow the rest);
  (c) the same handler, async;
  (b) on each other host: handler (b) behind the command ``hookbus manifest --host H``
      prints for that host's pre-tool event, fed the driver's own sample payload.

Baselines from the same run: the shell alone, ``python -c pass``, ``python -I -S -c pass``
and ``stdlib_hook.py`` (the same rule with json + re). Each case is warmed up and its
verdict checked on an allow and a deny payload; then every round runs each case once, in
a fresh random order, on its allow payload. Method and caveats: README.md.

Standard library only. Exit status 0 when the measurement succeeded, targets met or not;
1 when it cannot be trusted (a wrong verdict, a failing hook, hookbus diagnostics).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import random
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import stdlib_hook

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "latest.json"
SHELL = "/bin/sh"
WARMUP = 5
MIN_ROUNDS = 30
IMPORTTIME_RUNS = 5
TOP_MODULES = 25
#: Load average per CPU, before timing, above which the run is flagged as disturbed
#: (the benchmark's own processes raise it during the run).
BUSY = 0.25
#: Most a case's median may be, as a multiple of the stdlib hook's (None: reported only).
TARGETS: dict[str, float | None] = {"a": 1.1, "b": 2.4, "c": None}

#: tests/golden/claude/PreToolUse.Bash.json (field names from
#: claude-agent-sdk 0.3.332, values invented) plus the optional ``scratchpad_dir`` that
#: 2.1.332 binaries send. Encoded compact, as Claude Code writes it.
PAYLOAD: dict[str, Any] = {
    "session_id": "6f1c2b9e-3d4a-4e8b-9a77-2c1f0e5d8b31",
    "transcript_path": "/home/dev/.claude/projects/-home-dev-shop-api/"
    "6f1c2b9e-3d4a-4e8b-9a77-2c1f0e5d8b31.jsonl",
    "cwd": "/home/dev/shop-api",
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "prompt_id": "1e7c52a0-8f3b-4d1e-b0a9-5c6d7e8f9a01",
    "effort": {"level": "high"},
    "scratchpad_dir": "/tmp/claude-0/-home-dev-shop-api/"
    "6f1c2b9e-3d4a-4e8b-9a77-2c1f0e5d8b31/scratchpad",
    "tool_name": "Bash",
    "tool_input": {
        "command": "npm test -- --runInBand",
        "description": "Run the test suite",
        "timeout": 120000,
        "run_in_background": False,
    },
    "tool_use_id": "toolu_01HkT4qv9Zr2mXc8bN3pL7aQ",
}

_IDLE_MODULE = '''\
"""Case (a): the only handler wants session-end, so PreToolUse is answered at once."""

from hookbus import handler


@handler("session-end")
def on_session_end(event):
    return None
'''

_GUARD_MODULE = '''\
"""Case ({key}): deny rm -rf / on shell calls ({style}), no opinion on the rest."""

import re

from hookbus import Reply, handler

RM_ROOT = re.compile({pattern!r})


@handler("before-tool", tools="shell")
{prefix}def deny_rm_root(event):
    if RM_ROOT.search(event.tool.command or ""):
        return Reply.deny({reason!r})
    return None
'''


@dataclass(frozen=True)
class Setup:
    """A hookbus case: its label and the one handler its ``.hookbus.toml`` enables."""

    label: str
    module: str
    function: str
    source: str


def _guard(key: str, label: str, *, is_async: bool) -> Setup:
    source = _GUARD_MODULE.format(
        key=key,
        style="async" if is_async else "sync",
        prefix="async " if is_async else "",
        pattern=stdlib_hook.RM_ROOT.pattern,
        reason=stdlib_hook.REASON,
    )
    module = "bench_async" if is_async else "bench_sync"
    return Setup(label, module, "deny_rm_root", source)


SETUPS: dict[str, Setup] = {
    "a": Setup("(a) hookbus, nobody subscribed", "bench_idle", "on_session_end", _IDLE_MODULE),
    "b": _guard("b", "(b) hookbus, 1 sync handler", is_async=False),
    "c": _guard("c", "(c) hookbus, 1 async handler", is_async=True),
}


@dataclass(frozen=True)
class HostRow:
    """Case (b) on another host: its pre-tool event and shell tool, and how the tool's
    input holds a command."""

    native: str
    tool: str
    input_key: str
    #: Cline's run_commands takes a list of commands.
    as_list: bool = False
    #: Diagnostic codes the deny payload is documented to record.
    expected: frozenset[str] = frozenset()
    #: The host's no-opinion, where it is not empty or ``{}``.
    quiet: bytes = b""
    #: The host blocks by exit code 2 with the reason on stderr (Kiro, Windsurf).
    exit_two: bool = False
    #: The host has a user scope only (Kimi): the case's configuration is named by
    #: ``HOOKBUS_CONFIG`` instead of being found in the project.
    user_only: bool = False


#: Every other host driven by command hooks. The payload is the driver's own sample (what
#: ``hookbus try`` sends), the command what ``hookbus manifest --host H`` prints.
HOST_ROWS: dict[str, HostRow] = {
    "codex": HostRow("PreToolUse", "Bash", "command"),
    "gemini": HostRow("BeforeTool", "run_shell_command", "command"),
    "copilot": HostRow("preToolUse", "bash", "command"),
    "qwen": HostRow("PreToolUse", "run_shell_command", "command"),
    # A deny becomes Cline's cancel, which also ends the task: docs/hosts/cline.md.
    "cursor": HostRow("preToolUse", "Shell", "command"),
    "droid": HostRow("PreToolUse", "Execute", "command"),
    "qoder": HostRow("PreToolUse", "Bash", "command"),
    "kiro": HostRow("PreToolUse", "execute_bash", "command", exit_two=True),
    "windsurf": HostRow("pre_run_command", "run_command", "command_line", exit_two=True),
    "goose": HostRow("PreToolUse", "developer__shell", "command"),
    "grok": HostRow("pre_tool_use", "run_terminal_command", "command"),
    "openhands": HostRow("PreToolUse", "terminal", "command"),
    "vscode": HostRow("PreToolUse", "run_in_terminal", "command"),
    "kimi": HostRow("PreToolUse", "Shell", "command", user_only=True),
    # agy denies on empty output: its no-opinion on PreToolUse is an explicit ask.
    "antigravity": HostRow("PreToolUse", "run_command", "CommandLine", quiet=b'{"decision":"ask"}'),
    "cline": HostRow(
        "PreToolUse",
        "run_commands",
        "commands",
        as_list=True,
        expected=frozenset({"reply-degraded"}),
    ),
}

#: Prints a driver's sample payload: argv is host, native, tool, input key, "1" for a
#: list, cwd, command.
_SAMPLE = """\
import sys
from hookbus.hosts import driver as load
host, native, tool, key, as_list, cwd, command = sys.argv[1:]
tool_input = {key: [command] if as_list == "1" else command}
sys.stdout.buffer.write(load(host).sample(native, tool=tool, tool_input=tool_input,
                                          cwd=cwd, session_id="bench-session"))
"""


class BenchmarkError(Exception):
    """The measurement cannot be trusted (wrong verdict, failing hook, bad setup)."""


@dataclass(frozen=True)
class Case:
    """One command to time, where it runs, and what it must answer."""

    key: str
    label: str
    command: str
    cwd: Path
    env: Mapping[str, str]
    denies: bool
    #: The payload timed (an allow) and the one that must be denied when ``denies``.
    allow: bytes
    deny: bytes
    state_dir: Path | None = None
    #: Diagnostic codes this case may record (a documented degradation).
    expected: frozenset[str] = frozenset()
    #: The host's no-opinion, where it is not empty or ``{}``.
    quiet: bytes = b""
    #: A deny is exit 2 with the reason on stderr.
    exit_two: bool = False

    def run(self, payload: bytes) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [SHELL, "-c", self.command],
            input=payload,
            capture_output=True,
            cwd=self.cwd,
            env=self.env,
            check=False,
        )


@dataclass(frozen=True)
class Stats:
    median: float
    min: float
    p90: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> Stats:
        p90 = statistics.quantiles(samples, n=10, method="inclusive")[-1]
        return cls(median=statistics.median(samples), min=min(samples), p90=p90)


# -- setup ------------------------------------------------------------------------------


def payloads() -> tuple[bytes, bytes]:
    """The allow payload (the one timed) and the deny payload (``rm -rf /``)."""
    deny = {**PAYLOAD, "tool_input": {**PAYLOAD["tool_input"], "command": "rm -rf /"}}
    return _compact(PAYLOAD), _compact(deny)


def _compact(value: object) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode()


def base_env(root: Path) -> dict[str, str]:
    """The user's environment without Python or hookbus overrides (a hook normally runs
    without them), no user-level hookbus config, and bytecode cached under ``root`` so
    that nothing is written into the source tree."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "HOOKBUS_"))}
    config_home = root / "config"
    config_home.mkdir()
    env["XDG_CONFIG_HOME"] = str(config_home)
    env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    return env


def cold_flags(python: str) -> tuple[str, ...]:
    """``--no-server`` where ``python``'s hookbus has it: its install writes the warm
    server's client by default, and this benchmark times ``hookbus run`` itself."""
    done = subprocess.run([python, "-m", "hookbus", "manifest", "--help"], capture_output=True,
                          check=False)  # fmt: skip
    return ("--no-server",) if b"--no-server" in done.stdout else ()


def trust(python: str, project: Path, env: Mapping[str, str]) -> None:
    """``hookbus trust`` in ``project``: its handler module runs only once trusted."""
    argv = [python, "-m", "hookbus", "trust"]
    done = subprocess.run(argv, capture_output=True, cwd=project, env=env, check=False)
    if done.returncode != 0:
        raise BenchmarkError(f"{shlex.join(argv)} failed in {project}: "
                             + done.stderr.decode(errors="replace"))  # fmt: skip


def manifest(python: str, project: Path, env: Mapping[str, str]) -> dict[str, Any]:
    """The hooks block ``hookbus manifest --host claude`` prints in ``project``."""
    argv = [python, "-m", "hookbus", "manifest", "--host", "claude", *cold_flags(python)]
    done = subprocess.run(argv, capture_output=True, cwd=project, env=env, check=False)
    if done.returncode != 0:
        raise BenchmarkError(
            f"{shlex.join(argv)} failed in {project} (is hookbus installed for {python}?):\n"
            + done.stderr.decode(errors="replace")
        )
    hooks: dict[str, Any] = json.loads(done.stdout)["hooks"]
    return hooks


def matches(matcher: str | None, tool: str) -> bool:
    """Claude's matcher rule: none matches every tool; letters, digits, ``_`` and ``|`` only
    is a list of exact names; anything else is an unanchored regex."""
    if not matcher:
        return True
    if re.fullmatch(r"[A-Za-z0-9_|]+", matcher):
        return tool in matcher.split("|")
    return re.search(matcher, tool) is not None


def bash_command(hooks: Mapping[str, Any], key: str) -> str:
    """The command of the single PreToolUse entry, which must be registered for Bash."""
    try:
        (group,) = hooks["PreToolUse"]
        (entry,) = group["hooks"]
        command: str = entry["command"]
    except (KeyError, ValueError) as exc:
        raise BenchmarkError(f"case ({key}): unexpected PreToolUse manifest {hooks}") from exc
    if not matches(group.get("matcher"), "Bash"):
        raise BenchmarkError(f"case ({key}): PreToolUse matcher {group['matcher']!r} misses Bash")
    return command


def baseline_cases(python: str, cwd: Path, env: Mapping[str, str]) -> list[Case]:
    py = shlex.quote(python)
    hook = shlex.quote(str(HERE / "stdlib_hook.py"))
    allow, deny = payloads()
    rows = [
        ("shell", f"{SHELL} -c true (shell floor)", "true", False),
        ("pass", "python -c pass", f"{py} -c pass", False),
        ("isolated", "python -I -S -c pass", f"{py} -I -S -c pass", False),
        ("stdlib", "stdlib hook (json + re)", f"{py} {hook}", True),
    ]
    return [Case(key, label, command, cwd, env, denies, allow, deny)
            for key, label, command, denies in rows]  # fmt: skip


def hookbus_cases(
    python: str, root: Path, env: Mapping[str, str]
) -> tuple[list[Case], dict[str, Any]]:
    """The hookbus cases, each in its own project and state directory, and the hooks
    blocks their manifests generated."""
    manifests: dict[str, Any] = {}
    places: dict[str, tuple[Path, dict[str, str], Path]] = {}
    for key, setup in SETUPS.items():
        project, state = root / f"case-{key}", root / f"state-{key}"
        project.mkdir()
        (project / f"{setup.module}.py").write_text(setup.source)
        (project / ".hookbus.toml").write_text(f'enable = ["{setup.module}:{setup.function}"]\n')
        case_env = {**env, "HOOKBUS_STATE_DIR": str(state), "CLAUDE_PROJECT_DIR": str(project)}
        trust(python, project, case_env)
        manifests[key] = manifest(python, project, case_env)
        places[key] = (project, case_env, state)
    if "PreToolUse" in manifests["a"] or "SessionEnd" not in manifests["a"]:
        raise BenchmarkError(f"case (a): expected SessionEnd only, got {sorted(manifests['a'])}")
    # (a) registers no PreToolUse, so Claude would not even start it; it is timed with the
    # command (b) installs: the cost when hookbus runs for an event nobody wants.
    command = bash_command(manifests["b"], "b")
    if bash_command(manifests["c"], "c") != command:
        raise BenchmarkError("cases (b) and (c) install different PreToolUse commands")
    allow, deny = payloads()
    cases = [
        Case(key, SETUPS[key].label, command, project, case_env, key != "a", allow, deny, state)
        for key, (project, case_env, state) in places.items()
    ]
    for host, row in HOST_ROWS.items():
        case, manifests[f"b-{host}"] = host_case(python, root, env, host, row)
        cases.append(case)
    return cases, manifests


def host_case(
    python: str, root: Path, env: Mapping[str, str], host: str, row: HostRow
) -> tuple[Case, Any]:
    """Case (b) on ``host``: handler (b) in its own project, the command the host's
    manifest installs for ``row.native``, the driver's sample payloads."""
    setup = SETUPS["b"]
    project, state = root / f"case-b-{host}", root / f"state-b-{host}"
    project.mkdir()
    (project / f"{setup.module}.py").write_text(setup.source)
    (project / ".hookbus.toml").write_text(f'enable = ["{setup.module}:{setup.function}"]\n')
    case_env = {**env, "HOOKBUS_STATE_DIR": str(state)}
    if row.user_only:
        case_env["HOOKBUS_CONFIG"] = str(project / ".hookbus.toml")
    else:
        trust(python, project, case_env)
    argv = [python, "-m", "hookbus", "manifest", "--host", host, *cold_flags(python)]
    done = subprocess.run(argv, capture_output=True, cwd=project, env=case_env, check=False)
    if done.returncode != 0:
        raise BenchmarkError(f"{shlex.join(argv)} failed: {done.stderr.decode(errors='replace')}")
    printed = done.stdout.decode()
    command = installed_command(printed, host, row.native)

    def sample(shell_command: str) -> bytes:
        args = [host, row.native, row.tool, row.input_key, "1" if row.as_list else "0",
                str(project), shell_command]  # fmt: skip
        made = subprocess.run([python, "-c", _SAMPLE, *args], capture_output=True,
                              env=case_env, check=False)  # fmt: skip
        if made.returncode != 0:
            raise BenchmarkError(f"{host} sample: {made.stderr.decode(errors='replace')}")
        return made.stdout

    allow, deny = sample(PAYLOAD["tool_input"]["command"]), sample("rm -rf /")
    label = f"(b) {host}: 1 sync handler"
    case = Case(f"b-{host}", label, command, project, case_env, True, allow, deny, state,
                row.expected, row.quiet, row.exit_two)  # fmt: skip
    return case, printed


def installed_command(printed: str, host: str, native: str) -> str:
    """The command of ``native`` in what ``hookbus manifest`` printed: the one JSON
    string that runs it. A host configured by whole files (Cline's hook scripts, Kiro's
    hooks file) gets each printed as ``# PATH (executable|not executable)`` and its
    text: an executable one that runs the event is the command itself, written where the
    install would put it; the strings of the others are searched."""
    wanted = f"run --host {host} --event {native} "
    if not printed.startswith("# /"):
        return _one_command(json.loads(printed), wanted, host, native)
    found = []
    for part in ("\n" + printed).split("\n# /")[1:]:
        head, _, text = part.partition("\n")
        name, _, mode = head.rpartition(" (")
        if mode == "executable)" and wanted in text:
            path = Path("/" + name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            path.chmod(0o755)
            found.append(shlex.quote(str(path)))
        elif mode == "not executable)" and wanted in text:
            found.append(_one_command(json.loads(text), wanted, host, native))
    if len(found) != 1:
        raise BenchmarkError(f"{host}: expected one hook file running {native}, got {found}")
    return found[0]


def _one_command(document: Any, wanted: str, host: str, native: str) -> str:
    commands = [text for text in strings(document) if wanted in text]
    if len(commands) != 1:
        raise BenchmarkError(f"{host}: expected one command for {native}, got {commands}")
    return commands[0]


def strings(value: Any) -> list[str]:
    """Every string inside a JSON value."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [s for item in value for s in strings(item)] if isinstance(value, list) else []


# -- checks ----------------------------------------------------------------------------


def verdict(stdout: bytes, quiet: bytes = b"") -> str:
    """``allow`` for each host's no opinion (no output, Gemini's ``{}``, ``quiet``); ``deny`` for
    its block: Claude's, Codex's and Qwen's ``hookSpecificOutput.permissionDecision``,
    Copilot's flat ``permissionDecision``, Gemini's ``decision``, Cline's ``cancel``,
    Cursor's ``permission``."""
    if stdout.strip() in (b"", b"{}", quiet or b"{}"):
        return "allow"
    try:
        reply = json.loads(stdout)
        nested = reply.get("hookSpecificOutput") or {}
        said = {reply.get("permissionDecision"), nested.get("permissionDecision"),
                reply.get("decision"), reply.get("permission")}  # fmt: skip
    except (ValueError, AttributeError, TypeError):
        return f"unparsable stdout {stdout[:200]!r}"
    if said & {"deny", "block"} or reply.get("cancel") is True:
        return "deny"
    return f"unexpected stdout {stdout[:200]!r}"


def check_run(case: Case, done: subprocess.CompletedProcess[bytes], expected: str) -> None:
    problems = []
    blocked = case.exit_two and expected == "deny"
    if done.returncode != (2 if blocked else 0):
        problems.append(f"exit status {done.returncode}")
    if bool(done.stderr) != blocked:
        problems.append(f"stderr {done.stderr[:500]!r}")
    if case.exit_two:  # the verdict is the exit code; nothing goes to stdout
        got = "deny" if done.returncode == 2 and done.stderr else "allow"
        if done.stdout.strip():
            problems.append(f"stdout {done.stdout[:200]!r}")
    else:
        got = verdict(done.stdout, case.quiet)
    if got != expected:
        problems.append(f"verdict {got!r}, expected {expected!r}")
    if problems:
        raise BenchmarkError(f"{case.label}: {'; '.join(problems)}")


def prepare(case: Case) -> None:
    """Warm ``case`` up, check its verdicts, and check hookbus's state afterwards."""
    for _ in range(WARMUP):
        check_run(case, case.run(case.allow), "allow")
    check_run(case, case.run(case.allow), "allow")
    check_run(case, case.run(case.deny), "deny" if case.denies else "allow")
    if case.state_dir is None:
        return
    diagnostics = case.state_dir / "diagnostics.jsonl"
    lines = diagnostics.read_text().splitlines() if diagnostics.exists() else []
    unexpected = [line for line in lines if json.loads(line).get("event") not in case.expected]
    if unexpected:
        raise BenchmarkError(f"{case.label}: diagnostics recorded:\n" + "\n".join(unexpected))
    cached = list((case.state_dir / "index").glob("*.json"))
    if len(cached) != 1:
        raise BenchmarkError(f"{case.label}: expected one cached index, found {cached}")


# -- timing ----------------------------------------------------------------------------


def time_rounds(cases: Sequence[Case], rounds: int, rng: random.Random) -> dict[str, list[float]]:
    """Milliseconds per case: each round runs every case once, in a fresh shuffled order."""
    samples: dict[str, list[float]] = {case.key: [] for case in cases}
    order = list(cases)
    for _ in range(rounds):
        rng.shuffle(order)
        for case in order:
            started = time.perf_counter()
            done = case.run(case.allow)
            elapsed = time.perf_counter() - started
            check_run(case, done, "allow")
            samples[case.key].append(elapsed * 1000)
    return samples


# -- import time -----------------------------------------------------------------------


#: ``python -X importtime -m hookbus ...`` with two changes, both needed to see the worker:
#: the forked worker points its stdio at the file named by argv[1] instead of /dev/null,
#: and ``importlib.import_module`` (how hookbus loads drivers and handlers) goes through
#: ``__import__``, the only entry that ``-X importtime`` times. ``-m`` uses runpy too.
def hooked(command: str) -> str:
    """The hook itself in an installed command (``if [ -x PY ] ...; then HOOK; s=$?; ...;
    fi; FALLBACK``): what the shell runs when Python and hookbus are there."""
    if " then " not in command:
        return command
    hook = command.split(" then ", 1)[1].split("; fi;", 1)[0].split("; s=$?", 1)[0]
    return hook.removeprefix("exec ")


_IMPORTTIME_PRELUDE = """\
import importlib, os, runpy, sys
os.devnull = sys.argv.pop(1)
_import_module = importlib.import_module
def import_module(name, package=None):
    if name.startswith("."):
        return _import_module(name, package)
    __import__(name)
    return sys.modules[name]
importlib.import_module = import_module
main = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(main, run_name="__main__")
"""

#: (process, module) -> (self ms, cumulative ms)
Imports = dict[tuple[str, str], tuple[float, float]]


def parse_importtime(text: str, process: str) -> Imports:
    found: Imports = {}
    for line in text.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) != 3 or not fields[0].strip().isdigit():
            continue  # the header, or another line on stderr
        found[process, fields[2].strip()] = (int(fields[0]) / 1000, int(fields[1]) / 1000)
    return found


def importtime(case: Case, python: str, payload: bytes, module: str) -> dict[str, Any]:
    """Median ``-X importtime`` figures of ``case``'s command, in the parent and in the
    forked worker."""
    argv = shlex.split(hooked(case.command))
    if argv[:3] != [python, "-E", "-P"] or not argv[3].endswith("__main__.py") or argv[4] != "run":
        raise BenchmarkError(f"unexpected hook command {case.command!r}")
    runs: list[Imports] = []
    for i in range(IMPORTTIME_RUNS):
        capture = case.cwd.parent / f"worker-stdio-{i}.txt"
        capture.touch()
        cmd = [python, "-E", "-P", "-X", "importtime", "-c", _IMPORTTIME_PRELUDE, str(capture),
               *argv[3:]]  # fmt: skip
        done = subprocess.run(
            cmd, input=payload, capture_output=True, cwd=case.cwd, env=case.env, check=False
        )
        if done.returncode != 0 or verdict(done.stdout) != "allow":
            raise BenchmarkError(f"importtime run: exit {done.returncode}, {done.stdout!r}")
        run = parse_importtime(done.stderr.decode(errors="replace"), "parent")
        run.update(parse_importtime(capture.read_text(errors="replace"), "worker"))
        if ("worker", module) not in run:
            raise BenchmarkError(
                f"the worker's imports were not captured ({module} missing): hookbus no longer "
                "points the worker's stdio at os.devnull; update _IMPORTTIME_PRELUDE"
            )
        runs.append(run)
    medians = {
        key: (
            statistics.median(r[key][0] for r in runs if key in r),
            statistics.median(r[key][1] for r in runs if key in r),
        )
        for key in {key for r in runs for key in r}
    }
    totals = {
        process: {
            "modules": sum(1 for p, _ in medians if p == process),
            "self_ms": sum(own for (p, _), (own, _) in medians.items() if p == process),
        }
        for process in ("parent", "worker")
    }
    top = sorted(medians.items(), key=lambda item: -item[1][1])[:TOP_MODULES]
    return {
        "runs": IMPORTTIME_RUNS,
        "totals": totals,
        "top": [
            {"process": p, "module": m, "cumulative_ms": cum, "self_ms": own}
            for (p, m), (own, cum) in top
        ],
        "worker": sorted(m for p, m in medians if p == "worker"),
    }


def print_importtime(report: Mapping[str, Any], label: str) -> None:
    print(f"\nimport time of {label}: -X importtime, median of {report['runs']} runs")
    for process, role in (
        ("parent", "reads stdin and the index, decodes, forks"),
        ("worker", "imports the handler, dispatches, encodes"),
    ):
        t = report["totals"][process]
        print(f"  {process} ({role}): {t['modules']} modules, {t['self_ms']:.1f} ms")
    print(f"  worker imports: {', '.join(report['worker'])}")
    print(f"\n  {'cumul.':>7} {'self':>6}  process  module (ms, top {TOP_MODULES} by cumulative)")
    for row in report["top"]:
        print(
            f"  {row['cumulative_ms']:>7.1f} {row['self_ms']:>6.1f}  "
            f"{row['process']:<7}  {row['module']}"
        )


# -- report ----------------------------------------------------------------------------


def print_table(cases: Sequence[Case], stats: Mapping[str, Stats]) -> None:
    stdlib, bare = stats["stdlib"].median, stats["pass"].median
    width = max(len(c.label) for c in cases)
    head = f"{'case':<{width}}  {'median':>7} {'min':>7} {'p90':>7}  {'/stdlib':>7} {'/pass':>7}"
    print(f"\n{head}\n{'-' * len(head)}")
    for case in cases:
        s = stats[case.key]
        print(
            f"{case.label:<{width}}  {s.median:>7.1f} {s.min:>7.1f} {s.p90:>7.1f}"
            f"  {s.median / stdlib:>7.2f} {s.median / bare:>7.2f}"
        )


def check_targets(cases: Sequence[Case], stats: Mapping[str, Stats]) -> list[dict[str, Any]]:
    stdlib = stats["stdlib"].median
    labels = {c.key: c.label for c in cases}
    wanted = {**TARGETS, **{f"b-{host}": None for host in HOST_ROWS}}
    width = max(len(labels[key]) for key in wanted)
    print("\ntargets (median / stdlib hook's median):")
    results = []
    for key, target in wanted.items():
        ratio = stats[key].median / stdlib
        if target is None:
            goal, outcome = "reported", "REPORTED"
        else:
            goal, outcome = f"<= {target:.1f}x", "PASS" if ratio <= target else "MISS"
        print(f"  {labels[key]:<{width}}  {goal:>8}  {ratio:5.2f}x  {outcome}")
        results.append({"case": key, "target": target, "ratio": ratio, "outcome": outcome})
    return results


def interpreter_version(python: str) -> str:
    argv = [python, "-c", "import sys; print(sys.version)"]
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        raise BenchmarkError(f"cannot run {python}: {exc}") from None


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--rounds", type=int, default=MIN_ROUNDS, help=f"timed rounds (at least {MIN_ROUNDS})"
    )
    parser.add_argument(
        "--python",
        default=sys.executable,
        help="interpreter with hookbus installed, for the hook and the baselines "
        "(default: the one running this script)",
    )
    parser.add_argument(
        "--importtime", action="store_true", help="also print case (b)'s import breakdown"
    )
    parser.add_argument("--seed", type=int, help="seed of the shuffled order (default: random)")
    opts = parser.parse_args(argv)
    if opts.rounds < MIN_ROUNDS:
        parser.error(f"--rounds must be at least {MIN_ROUNDS}")
    opts.python = os.path.abspath(opts.python)  # as `hookbus manifest` writes it
    return opts


def main(argv: Sequence[str] | None = None) -> int:
    opts = parse_args(argv)
    seed = opts.seed if opts.seed is not None else random.randrange(2**32)
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    allow, _ = payloads()
    with tempfile.TemporaryDirectory(prefix="hookbus-bench-") as tmp:
        root = Path(tmp)
        env = base_env(root)
        (root / "baseline").mkdir()
        try:
            version = interpreter_version(opts.python)
            hooked, manifests = hookbus_cases(opts.python, root, env)
            cases = [*baseline_cases(opts.python, root / "baseline", env), *hooked]
            print(f"python: {opts.python} ({version})")
            print(f"hook command (PreToolUse, from `hookbus manifest`): {hooked[0].command}")
            print(f"payload: PreToolUse Bash, {len(allow)} bytes; rounds: {opts.rounds}; "
                  f"seed: {seed}")  # fmt: skip
            for case in cases:
                prepare(case)
            print(f"verdicts checked on allow and deny payloads; {WARMUP} warm-up runs each")
            load_before = os.getloadavg()
            samples = time_rounds(cases, opts.rounds, random.Random(seed))
            load_after = os.getloadavg()
            stats = {key: Stats.of(values) for key, values in samples.items()}
            print_table(cases, stats)
            print(
                f"\nms of wall time per process, all through {SHELL} -c; load average "
                f"{load_before[0]:.2f} before, {load_after[0]:.2f} after"
            )
            if load_before[0] > BUSY * (os.cpu_count() or 1):
                print(f"warning: load average {load_before[0]:.2f} on {os.cpu_count()} CPUs "
                      "before timing: other work is running; expect noisier numbers")  # fmt: skip
            targets = check_targets(cases, stats)
            imports = None
            if opts.importtime:
                case_b = next(c for c in cases if c.key == "b")
                imports = importtime(case_b, opts.python, allow, SETUPS["b"].module)
                print_importtime(imports, case_b.label)
        except BenchmarkError as exc:
            print(f"hook_latency: error: {exc}", file=sys.stderr)
            return 1
    result = {
        "started": started,
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_before": load_before,
            "load_after": load_after,
        },
        "python": {"path": opts.python, "version": version},
        "shell": SHELL,
        "payload_bytes": len(allow),
        "rounds": opts.rounds,
        "warmup": WARMUP,
        "seed": seed,
        "manifests": manifests,
        "cases": [
            {
                "key": c.key,
                "label": c.label,
                "command": c.command,
                **dataclasses.asdict(stats[c.key]),
                "ratio_stdlib": stats[c.key].median / stats["stdlib"].median,
                "ratio_pass": stats[c.key].median / stats["pass"].median,
                "samples_ms": samples[c.key],
            }
            for c in cases
        ],
        "targets": targets,
        "importtime": imports,
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nresults: {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
