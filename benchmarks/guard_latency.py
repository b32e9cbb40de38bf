"""Whole-process wall time of the subagent cost guard, as Claude Code runs it.

Usage: ``python benchmarks/guard_latency.py [--rounds N] [--python PATH]``

Every case is a command string run through ``/bin/sh -c`` with a Claude Code PreToolUse
payload on stdin, in a project whose ``.hookbus.toml`` says ``enable = ["guard"]`` and
nothing else; the command is the one ``hookbus manifest --host claude`` installs:

  (g) PreToolUse on ``Agent``: the guard decides (the parent's model from the session
      cache that SessionStart filled, prices from the snapshot) and writes its dispatch
      row to the SQLite store, every call;
  (h) PreToolUse on ``Bash`` with only the guard enabled. The manifest registers the
      spawn tools alone, so Claude never starts this hook for Bash; it is timed with the
      same command anyway: what hookbus costs for an event nobody wants.

Baselines from the same run: ``python -I -S -c pass`` and ``stdlib_hook.py`` (a stdlib
hook on the same Bash payload), and hook_latency's cases (a), nobody subscribed, and (b),
one trivial sync handler: what the guard costs over any handler is (g) - (b). Each
round runs every case once in a fresh random order. Ratios are against the stdlib hook.

Standard library only. Exit status 1 when the measurement cannot be trusted (a wrong
reply, a diagnostic, a dispatch row missing or extra).
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

import hook_latency as hl

AGENT_ALLOW = {"description": "Find tests", "prompt": "List the test files.",
               "subagent_type": "general-purpose", "model": "haiku"}  # fmt: skip
AGENT_CAP = {**AGENT_ALLOW, "model": "opus"}
PARENT = "claude-sonnet-4-5-20250929"


def guard_cases(python: str, root: Path, env: dict[str, str]) -> list[hl.Case]:
    project, state = root / "case-guard", root / "state-guard"
    project.mkdir()
    (project / ".hookbus.toml").write_text('enable = ["guard"]\n')
    case_env = {**env, "HOOKBUS_STATE_DIR": str(state), "CLAUDE_PROJECT_DIR": str(project)}
    hooks = hl.manifest(python, project, case_env)
    (group,) = hooks["PreToolUse"]
    if hl.matches(group.get("matcher"), "Bash") or not hl.matches(group.get("matcher"), "Agent"):
        raise hl.BenchmarkError(f"the guard's PreToolUse matcher is {group.get('matcher')!r}")
    (entry,) = group["hooks"]
    command = entry["command"]
    start = {**hl.PAYLOAD, "hook_event_name": "SessionStart", "source": "startup",
             "model": PARENT}  # fmt: skip
    for key in ("tool_name", "tool_input", "tool_use_id", "effort", "prompt_id"):
        start.pop(key, None)
    (start_group,) = hooks["SessionStart"]
    seeded = hl.Case("seed", "SessionStart", start_group["hooks"][0]["command"], project,
                     case_env, False, hl._compact(start), b"")  # fmt: skip
    done = seeded.run(seeded.allow)
    if done.returncode != 0:
        raise hl.BenchmarkError(f"SessionStart failed: {done.stderr!r}")
    agent = {**hl.PAYLOAD, "tool_name": "Agent", "tool_input": AGENT_ALLOW}
    cap = {**agent, "tool_input": AGENT_CAP}
    bash, _ = hl.payloads()
    return [
        hl.Case("g", "(g) guard, PreToolUse Agent + store row", command, project, case_env,
                  True, hl._compact(agent), hl._compact(cap), state),
        hl.Case("h", "(h) guard only, PreToolUse Bash", command, project, case_env, False,
                  bash, bash, state),
    ]  # fmt: skip


def check(case: hl.Case, payload: bytes, capped: bool) -> None:
    done = case.run(payload)
    if done.returncode != 0 or done.stderr:
        raise hl.BenchmarkError(f"{case.label}: exit {done.returncode}, {done.stderr!r}")
    if not capped:
        if done.stdout.strip():
            raise hl.BenchmarkError(f"{case.label}: expected no output, got {done.stdout!r}")
        return
    reply = json.loads(done.stdout)["hookSpecificOutput"]
    if reply["updatedInput"].get("model") != "sonnet":
        raise hl.BenchmarkError(f"{case.label}: expected a cap to sonnet, got {reply}")


def rows(state: Path) -> int:
    with sqlite3.connect(state / "store.sqlite3") as db:
        return int(db.execute("select count(*) from dispatches").fetchone()[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=hl.MIN_ROUNDS)
    parser.add_argument("--python", default=sys.executable)
    opts = parser.parse_args()
    rng = random.Random(11)
    with tempfile.TemporaryDirectory(prefix="hookbus-guard-bench-") as tmp:
        root = Path(tmp)
        env = hl.base_env(root)
        baselines = [c for c in hl.baseline_cases(opts.python, root, env)
                     if c.key in ("isolated", "stdlib")]  # fmt: skip
        hookbus, _ = hl.hookbus_cases(opts.python, root, env)
        idle = [c for c in hookbus if c.key in ("a", "b")]
        guard = guard_cases(opts.python, root, env)
        for case in baselines + idle:
            hl.prepare(case)
        for case in guard:
            for _ in range(hl.WARMUP):
                check(case, case.allow, capped=False)
            check(case, case.deny, capped=case.key == "g")
        before = rows(guard[0].state_dir)  # type: ignore[arg-type]
        cases = baselines + idle + guard
        # A guard case's timed payload passes: no output, exit 0, hook_latency's allow.
        samples = hl.time_rounds(cases, opts.rounds, rng)
        after = rows(guard[0].state_dir)  # type: ignore[arg-type]
        if after - before != opts.rounds:
            raise hl.BenchmarkError(f"{after - before} dispatch rows for {opts.rounds} calls")
        diagnostics = guard[0].state_dir / "diagnostics.jsonl"  # type: ignore[operator]
        if diagnostics.exists() and diagnostics.read_text().strip():
            raise hl.BenchmarkError(f"diagnostics recorded:\n{diagnostics.read_text()}")
    stdlib = statistics.median(samples["stdlib"])
    print(f"{platform.python_implementation()} {platform.python_version()}, "
          f"{opts.rounds} rounds, medians (ms) and ratio to the stdlib hook:")  # fmt: skip
    for case in cases:
        stats = hl.Stats.of(samples[case.key])
        print(f"  {case.label:45} {stats.median:7.1f}  p90 {stats.p90:7.1f}  "
              f"{stats.median / stdlib:5.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except hl.BenchmarkError as exc:
        print(f"guard_latency: {exc}", file=sys.stderr)
        sys.exit(1)
