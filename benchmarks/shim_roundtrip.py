"""One event's round trip through the shims of the in-process hosts: shim → hookbus → shim.

Usage: ``python benchmarks/shim_roundtrip.py [--rounds N] [--seed S]``

OpenCode (and Kilo, whose plugin is the same file), Pi and Hermes Agent load hookbus's
shim into their own process; per wanted event the shim runs the hookbus that installed
it, by absolute path, and applies its reply. This benchmark installs each shim with the
real ``hookbus install --host H`` into a scratch project whose ``.hookbus.toml`` enables
handler (b) of ``hook_latency.py`` (deny ``rm -rf /`` on shell calls), loads the
installed file the way its host does (Node imports the JS plugin and extension, Python
imports the Hermes plugin) and calls its pre-tool hook, timing each call inside that
runtime.

Rows, each runtime's rounds shuffled together:

- ``spawn python -I -S -c pass``: a process of the interpreter's own floor, started from
  that runtime (Node's ``spawn``, Python's ``subprocess``);
- ``<shim> → stdlib hook``: the same installed shim with its command pointed at
  ``stdlib_shim_hook.py`` (the same rule with json + re): what a hand-written hook costs
  behind the same shim;
- ``<shim> → hookbus``: the shim as ``install --host H --no-server`` writes it (it
  spawns ``hookbus run``);
- ``<shim> → hookbus (warm server)``: the shim as install writes it by default (and
  ``--server``), with ``hookbus serve`` started (and warmed by the warm-up rounds) before timing:
  the shim speaks the server's wire protocol on its socket itself, no process started
  (``hookbus/hosts/shared/server.js``; the Hermes plugin through ``client.py``'s functions);
- ``hermes entry point``: the ``hermes_agent.plugins`` entry point, for a hookbus
  installed in Hermes's own environment (in-process: a forked worker, no interpreter).

An event no enabled handler wants costs nothing: the shim registers no hook for it.
Ratios are against the stdlib hook behind the same shim, measured in the same run.
Standard library only (and ``node``); exit status 1 when the run cannot be trusted (a
wrong verdict, hookbus diagnostics).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hook_latency

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "shim_roundtrip.json"
WARMUP = 5
MIN_ROUNDS = 30
STDLIB_HOOK = HERE / "stdlib_shim_hook.py"
ALLOW = "npm test -- --runInBand"
DENY = "rm -rf /"

#: Runs in the benchmark's Python: times the Hermes plugin's ``pre_tool_call`` callbacks
#: (argv: a JSON file of cases, as ``shim_driver.mjs`` takes them; kinds "hermes" (a
#: plugin file), "entry" (the entry point module) and "spawn").
_HERMES_DRIVER = r"""
import importlib, importlib.util, json, random, subprocess, sys, time
spec = json.load(open(sys.argv[1]))
ALLOW, DENY = "npm test -- --runInBand", "rm -rf /"

class Ctx:
    def __init__(self):
        self.hooks = {}
    def register_hook(self, name, fn):
        self.hooks[name] = fn

def caller(case):
    if case["kind"] == "spawn":
        def call(command=ALLOW):
            subprocess.run(case["argv"], input=b"", check=True)
            return "allow"
        return call
    if case["kind"] == "entry":
        module = importlib.import_module(case["module"])
    else:
        found = importlib.util.spec_from_file_location(case["key"], case["path"])
        module = importlib.util.module_from_spec(found)
        found.loader.exec_module(module)
    ctx = Ctx()
    module.register(ctx)
    hook = ctx.hooks["pre_tool_call"]
    count = iter(range(10**9))
    def call(command=ALLOW):
        n = next(count)
        got = hook(tool_name="terminal", args={"command": command}, task_id="t", session_id="bench-session",
                   tool_call_id=f"call_{n}", turn_id="turn", api_request_id="api", middleware_trace=[],
                   telemetry_schema_version="hermes.observer.v1")
        return "deny" if isinstance(got, dict) and got.get("action") == "block" else "allow" if got is None else repr(got)
    return call

calls = {case["key"]: caller(case) for case in spec["cases"]}
for case in spec["cases"]:
    call = calls[case["key"]]
    for _ in range(spec["warmup"]):
        call()
    allowed, denied = call(), ("deny" if case["kind"] == "spawn" else call(DENY))
    if (allowed, denied) != ("allow", "deny"):
        sys.exit(f"{case['key']}: allow payload gave {allowed}, deny payload gave {denied}")
rng = random.Random(spec["seed"])
samples = {case["key"]: [] for case in spec["cases"]}
order = list(samples)
for r in range(spec["rounds"]):
    rng.shuffle(order)
    for key in order:
        started = time.perf_counter()
        verdict = calls[key]()
        samples[key].append((time.perf_counter() - started) * 1000)
        if verdict != "allow":
            sys.exit(f"{key}: round {r} gave {verdict}")
print(json.dumps({"samples": samples}))
"""


class BenchmarkError(Exception):
    pass


def install(python: str, host: str, project: Path, env: dict[str, str], *flags: str) -> None:
    argv = [python, "-m", "hookbus", "install", "--host", host, *flags]
    done = subprocess.run(argv, capture_output=True, cwd=project, env=env, check=False)
    if done.returncode != 0:
        raise BenchmarkError(f"{' '.join(argv)} failed:\n{done.stderr.decode(errors='replace')}")


def pointed_at_stdlib(installed: Path, copy: Path) -> Path:
    """``installed`` with hookbus's ``__main__.py`` replaced by the stdlib hook."""
    text = installed.read_text()
    main = str(Path(hook_latency_main()).resolve())
    if main not in text:
        raise BenchmarkError(f"{installed} does not name {main}")
    copy.write_text(text.replace(main, str(STDLIB_HOOK)))
    return copy


def hook_latency_main() -> str:
    import hookbus

    return str(Path(hookbus.__file__).parent / "__main__.py")


@dataclass(frozen=True)
class Run:
    """Where the cases run and how many rounds: one scratch project, home and state."""

    root: Path
    project: Path
    env: dict[str, str]
    rounds: int
    seed: int

    def measure(self, argv: list[str], cases: list[dict[str, Any]]) -> dict[str, list[float]]:
        """``argv CASES.json`` (a driver) run in the project: milliseconds per case."""
        spec = self.root / f"cases-{argv[-1].rsplit('/', 1)[-1]}.json"
        spec.write_text(json.dumps({"rounds": self.rounds, "seed": self.seed,
                                    "warmup": WARMUP, "cases": cases}))  # fmt: skip
        done = subprocess.run([*argv, str(spec)], capture_output=True, cwd=self.project,
                              env=self.env, check=False)  # fmt: skip
        if done.returncode != 0:
            raise BenchmarkError(f"{argv[-1]} failed:\n{done.stderr.decode(errors='replace')}")
        samples: dict[str, list[float]] = json.loads(done.stdout)["samples"]
        return samples


#: (key, label, the key of its baseline) per row, by runtime.
NODE_ROWS = (
    ("node-spawn", "Node: spawn python -I -S -c pass", "node-spawn"),
    ("opencode-stdlib", "OpenCode plugin -> stdlib hook", "opencode-stdlib"),
    ("opencode", "OpenCode plugin -> hookbus", "opencode-stdlib"),
    ("opencode-warm", "OpenCode plugin -> hookbus (warm server)", "opencode-stdlib"),
    ("pi-stdlib", "Pi extension -> stdlib hook", "pi-stdlib"),
    ("pi", "Pi extension -> hookbus", "pi-stdlib"),
    ("pi-warm", "Pi extension -> hookbus (warm server)", "pi-stdlib"),
)
PYTHON_ROWS = (
    ("py-spawn", "Python: subprocess python -I -S -c pass", "py-spawn"),
    ("hermes-stdlib", "Hermes plugin -> stdlib hook", "hermes-stdlib"),
    ("hermes", "Hermes plugin -> hookbus (directory plugin)", "hermes-stdlib"),
    ("hermes-warm", "Hermes plugin -> hookbus (warm server)", "hermes-stdlib"),
    ("hermes-entry", "Hermes entry point (in-process)", "hermes-stdlib"),
)


def node_samples(run: Run, node: str, floor: list[str]) -> dict[str, list[float]]:
    """The OpenCode plugin and the Pi extension installed with ``--no-server`` (and as
    install's default writes them, asking the warm server), and pointed at the stdlib
    hook."""
    installed = {"opencode": run.project / ".opencode" / "plugin" / "hookbus.js",
                 "pi": run.project / ".pi" / "extensions" / "hookbus.ts"}  # fmt: skip
    # Node imports .mjs (Pi's jiti the .ts itself); each form copied before the next
    # install replaces it.
    for flags, suffix in ((("--no-server",), ""), (("--server",), "-warm")):
        for host, path in installed.items():
            install(sys.executable, host, run.project, run.env, *flags)
            shutil.copy(path, run.root / f"{host}{suffix}.mjs")
    opencode, pi = run.root / "opencode.mjs", run.root / "pi.mjs"
    cases = [
        {"key": "node-spawn", "kind": "spawn", "argv": floor},
        {"key": "opencode-stdlib", "kind": "opencode",
         "path": str(pointed_at_stdlib(opencode, run.root / "opencode-stdlib.mjs"))},
        {"key": "opencode", "kind": "opencode", "path": str(opencode)},
        {"key": "opencode-warm", "kind": "opencode", "path": str(run.root / "opencode-warm.mjs")},
        {"key": "pi-stdlib", "kind": "pi", "path": str(pointed_at_stdlib(pi, run.root / "pi-stdlib.mjs"))},
        {"key": "pi", "kind": "pi", "path": str(pi)},
        {"key": "pi-warm", "kind": "pi", "path": str(run.root / "pi-warm.mjs")},
    ]  # fmt: skip
    return run.measure([node, str(HERE / "shim_driver.mjs")], cases)


def python_samples(run: Run, floor: list[str]) -> dict[str, list[float]]:
    """Hermes's directory plugin as installed, pointed at the stdlib hook, and its entry point."""
    # Hermes has a user scope only: its configuration is named, as a user-level one would be.
    run.env["HOOKBUS_CONFIG"] = str(run.project / ".hookbus.toml")
    installed = Path(run.env["HOME"]) / ".hermes" / "plugins" / "hookbus" / "__init__.py"
    plugin, warm = run.root / "hermes_plugin.py", run.root / "hermes_warm.py"
    install(sys.executable, "hermes", run.project, run.env, "--no-server")
    shutil.copy(installed, plugin)
    install(sys.executable, "hermes", run.project, run.env, "--server")
    shutil.copy(installed, warm)
    cases = [
        {"key": "py-spawn", "kind": "spawn", "argv": floor},
        {"key": "hermes-stdlib", "kind": "hermes",
         "path": str(pointed_at_stdlib(plugin, run.root / "hermes_stdlib.py"))},
        {"key": "hermes", "kind": "hermes", "path": str(plugin)},
        {"key": "hermes-warm", "kind": "hermes", "path": str(warm)},
        {"key": "hermes-entry", "kind": "entry", "module": "hookbus.hosts.hermes.plugin"},
    ]  # fmt: skip
    driver = run.root / "hermes_driver.py"
    driver.write_text(_HERMES_DRIVER)
    return run.measure([sys.executable, str(driver)], cases)


def check_quiet(state: Path) -> None:
    """No diagnostic but the server's own notes (started, stopped: level info)."""
    log = state / "diagnostics.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    found = [line for line in lines if line.strip() and json.loads(line)["level"] != "info"]
    if found:
        raise BenchmarkError("hookbus recorded diagnostics:\n" + "\n".join(found))


def start_server(run: Run) -> None:
    """``hookbus serve --detach`` for the warm rows, in the run's own state folder."""
    argv = [sys.executable, "-m", "hookbus", "serve", "--detach"]
    done = subprocess.run(argv, capture_output=True, cwd=run.project, env=run.env, check=False)
    if done.returncode != 0:
        raise BenchmarkError(f"{' '.join(argv)} failed:\n{done.stderr.decode(errors='replace')}")


def stop_server(run: Run) -> None:
    argv = [sys.executable, "-m", "hookbus", "serve", "--stop"]
    subprocess.run(argv, capture_output=True, cwd=run.project, env=run.env, check=False)


def scratch(root: Path, rounds: int, seed: int) -> Run:
    """A project enabling handler (b), with a home and a state folder of its own."""
    env = hook_latency.base_env(root)
    # The warm rows' server and its socket in the run's own state folder, not the user's
    # $XDG_RUNTIME_DIR/hookbus (a server of theirs must neither answer nor be started).
    env.pop("XDG_RUNTIME_DIR", None)
    home, project, state = root / "home", root / "project", root / "state"
    for folder in (home, project, state):
        folder.mkdir()
    env |= {"HOME": str(home), "HOOKBUS_STATE_DIR": str(state)}
    setup = hook_latency.SETUPS["b"]
    (project / f"{setup.module}.py").write_text(setup.source)
    (project / ".hookbus.toml").write_text(f'enable = ["{setup.module}:{setup.function}"]\n')
    return Run(root, project, env, rounds, seed)


def report(rows: list[tuple[str, str, str]], samples: dict[str, list[float]]) -> list[Any]:
    medians = {key: statistics.median(values) for key, values in samples.items()}
    print(f"{'case':<46} {'median ms':>10} {'min ms':>8} {'x baseline':>11}")
    lines = []
    for key, label, base in rows:
        ratio = medians[key] / medians[base]
        print(f"{label:<46} {medians[key]:>10.1f} {min(samples[key]):>8.1f} {ratio:>10.2f}x")
        lines.append({"key": key, "label": label, "median_ms": medians[key],
                      "min_ms": min(samples[key]), "baseline": base, "ratio": ratio,
                      "samples_ms": samples[key]})  # fmt: skip
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS)
    parser.add_argument("--seed", type=int, default=None)
    opts = parser.parse_args(argv)
    if opts.rounds < MIN_ROUNDS:
        parser.error(f"--rounds must be at least {MIN_ROUNDS}")
    seed = opts.seed if opts.seed is not None else random.randrange(2**32)
    node = shutil.which("node")
    floor = [sys.executable, "-I", "-S", "-c", "pass"]
    rows: list[tuple[str, str, str]] = []
    samples: dict[str, list[float]] = {}
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="hookbus-shim-bench-") as tmp:
        run = scratch(Path(tmp), opts.rounds, seed)
        try:
            start_server(run)
            if node is not None:
                samples |= node_samples(run, node, floor)
                rows += NODE_ROWS
            else:
                print("node is not on PATH: the OpenCode and Pi rows are skipped")
            samples |= python_samples(run, floor)
            rows += PYTHON_ROWS
            check_quiet(Path(run.env["HOOKBUS_STATE_DIR"]))
        except BenchmarkError as exc:
            print(f"shim_roundtrip: error: {exc}", file=sys.stderr)
            return 1
        finally:
            stop_server(run)
    load_after = os.getloadavg()
    print(f"python: {sys.executable}; node: {node}; rounds: {opts.rounds}; seed: {seed}")
    lines = report(rows, samples)
    print(f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after")
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"seed": seed, "rounds": opts.rounds, "rows": lines,
                                   "load": [load_before, load_after]}, indent=2) + "\n")  # fmt: skip
    print(f"results: {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
