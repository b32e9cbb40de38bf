"""Wall time of a whole real Claude Code session, without hooks, with hookbus, and with a
hand-written Python hook on the same events.

Usage (with the interpreter hookbus is installed for; it is also the hooks' interpreter)::

    .venv/bin/python benchmarks/claude_session.py [--rounds N] [--seed S]

Each session is ``claude -p PROMPT --output-format json --allowedTools Bash`` of the
pinned Claude Code (``tests/e2e/hosts.py`` installs it into the host cache, outside the
clone, when it is missing), headless and offline, against the e2e suite's scripted fake Anthropic server:
the model runs ``echo hi | tee ran_proof.txt`` with Bash, then answers with a final text.
The variants, each in a workspace of its own (``tests/e2e/harness.py``):

  (0) no hooks at all: the project has no ``.claude/settings.json``;
  (1) ``hookbus install --host claude`` with an empty ``.hookbus.toml``: no handler is
      enabled, so its manifest registers no hook at all (checked) and no hook process
      starts; it differs from (0) only by the ``.claude/settings.json`` (``{}``) it writes;
  (2) hookbus installed with one no-op handler (it appends a line to a log and returns
      None) on every portable kind but ``other``;
  (3) the events (2) registered, each running a stdlib-only Python script instead that
      reads stdin, appends the same kind of line and exits 0: what any Python hook costs.

Every variant first runs once and is checked (exit 0, a JSON result that is no error, the
proof file, no process left behind, and for (2) and (3) the hook log's events); then every
round runs each variant once, in a freshly shuffled order, and checks each run the same way.
Reported: median, min and max session wall time, the overhead of the median over (0)'s in
ms and as a ratio, and for (2) and (3) the overhead per hook process. Results, raw samples
included, go to ``benchmarks/results/claude_session.json`` (git-ignored). Method: README.md.

Standard library only, plus the e2e harness. Exit status 0 when the measurement succeeded;
1 when it cannot be trusted (a failed check); 2 when Claude Code cannot be installed or run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
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
#: Variant (2)'s handler. One log line per call: kind, native event, and the pid of the
#: ``hookbus run`` process (the handler runs in a worker that process forks).
_HANDLER_SOURCE = '''\
"""Variant (2): one handler on every portable kind but ``other``; it logs and returns None."""

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


def install_hookbus(ws: Workspace, config: str) -> dict[str, Any]:
    """Write ``config`` as the project's ``.hookbus.toml``, run ``hookbus install --host
    claude`` and check that what it installed is what ``hookbus manifest`` generates; the
    installed hooks block."""
    (ws.project / ".hookbus.toml").write_text(config)
    hookbus = [sys.executable, "-m", "hookbus"]
    run_checked([*hookbus, "install", "--host", "claude"], ws)
    generated = json.loads(run_checked([*hookbus, "manifest", "--host", "claude"], ws))["hooks"]
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
    hooks = install_hookbus(ws, f'enable = ["{HANDLER_MODULE}:noop"]\n')
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


# -- checks ----------------------------------------------------------------------------


def parse_log(log: Path) -> tuple[list[str], int]:
    """The events a hook log names (first field), in order, and how many distinct hook
    processes (last field: a pid) wrote it."""
    if not log.exists():
        return [], 0
    lines = [line.split() for line in log.read_text().splitlines() if line.strip()]
    return [fields[0] for fields in lines], len({fields[-1] for fields in lines})


def check_run(variant: Variant, run: Run) -> int:
    """Check one finished session of ``variant``; the hook processes it started."""
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
    if diagnostics := ws.diagnostics():
        problems.append(f"hookbus diagnostics: {diagnostics}")
    processes = 0
    if variant.log is not None:
        events, processes = parse_log(variant.log)
        if tuple(events) != variant.expected:
            problems.append(f"hook log has {events}, expected {list(variant.expected)}")
        if processes != len(events):
            problems.append(f"{len(events)} hook calls from {processes} processes")
    if problems:
        raise BenchmarkError(f"{variant.label}: {'; '.join(problems)}\n{run.describe()}")
    return processes


def reset(variant: Variant) -> None:
    """Remove what a session left that the next one's checks read."""
    ws = variant.workspace
    paths = [ws.project / PROOF, ws.root / "requests.jsonl", ws.state / "diagnostics.jsonl"]
    for path in [*paths, *([variant.log] if variant.log else [])]:
        path.unlink(missing_ok=True)


def session(variant: Variant) -> tuple[float, int]:
    """Run one checked session of ``variant``: its wall time (ms) and hook processes."""
    reset(variant)
    try:
        run = variant.claude.run(PROMPT, SCENARIO, tools=("Bash",), timeout=SESSION_TIMEOUT)
    except AssertionError as exc:  # the harness's way of saying the host hung
        raise BenchmarkError(f"{variant.label}: {exc}") from None
    processes = check_run(variant, run)
    return run.seconds * 1000, processes


# -- timing ----------------------------------------------------------------------------


@dataclass
class Samples:
    ms: dict[str, list[float]]
    processes: dict[str, list[int]]
    orders: list[list[str]]


def time_rounds(variants: Sequence[Variant], rounds: int, rng: random.Random) -> Samples:
    """Each round runs every variant once, in a fresh shuffled order."""
    samples = Samples({v.key: [] for v in variants}, {v.key: [] for v in variants}, [])
    order = list(variants)
    for i in range(rounds):
        rng.shuffle(order)
        samples.orders.append([v.key for v in order])
        for variant in order:
            ms, processes = session(variant)
            samples.ms[variant.key].append(ms)
            samples.processes[variant.key].append(processes)
        done = ", ".join(f"{v.number} {samples.ms[v.key][-1]:.0f}" for v in order)
        print(f"  round {i + 1}/{rounds}: {done} ms", flush=True)
    return samples


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
                "median_ms": s.median,
                "min_ms": s.min,
                "max_ms": s.max,
                "overhead_ms": overhead,
                "overhead_paired_ms": statistics.median(paired),
                "ratio": s.median / base,
                "hook_processes_per_session": hooks_per_session,
                "per_hook_ms": per_hook,
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
    return [plain, empty, noop, stdlib_hook(executable, root, noop.hooks)]


def measure(executable: Path, rounds: int, seed: int) -> dict[str, Any]:
    """Set the variants up, check them, time them; the results to save."""
    with tempfile.TemporaryDirectory(prefix="hookbus-claude-session-") as tmp:
        variants = build_variants(executable, Path(tmp))
        for v in variants:
            events = ", ".join(sorted(v.hooks)) or "none"
            print(f"{v.label}: registered hooks: {events}")
        print("\nchecking every variant once (also its warm-up)...", flush=True)
        checked: dict[str, float] = {}
        for v in variants:
            checked[v.key], processes = session(v)
            hooks = f", {processes} hook processes" if v.log else ""
            print(f"  {v.label}: ok, {checked[v.key]:.0f} ms{hooks}", flush=True)
        print(f"\ntiming {rounds} rounds (seed {seed})...", flush=True)
        load_before = os.getloadavg()
        samples = time_rounds(variants, rounds, random.Random(seed))
        load_after = os.getloadavg()
    stats, rows = summarize(variants, samples)
    print_table(rows)
    paired = ", ".join(f"({r['key']}) {r['overhead_paired_ms']:+.0f}" for r in rows[1:])
    print(f"\nmedian of same-round differences from (0), ms: {paired}")
    print(
        f"ms of wall time per session (claude start to exit); load average "
        f"{load_before[0]:.2f} before, {load_after[0]:.2f} after, {os.cpu_count()} CPUs"
    )
    if load_before[0] > BUSY * (os.cpu_count() or 1):
        print(f"warning: load average {load_before[0]:.2f} before timing: other work is "
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
    return {
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_before": load_before,
            "load_after": load_after,
        },
        "check_runs_ms": checked,
        "orders": samples.orders,
        "variants": rows,
    }


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
