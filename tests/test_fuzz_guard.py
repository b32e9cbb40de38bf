"""Fuzzed payloads of six hosts through the installed hook commands, as the hosts run them,
with a fail-closed guard in the user's configuration (the payloads: tests/fuzz.py)."""

from __future__ import annotations

import collections
import importlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fuzz import HOSTS, Base, Bench, bases, case, wrong_answer
from servers import stop_servers
from support import warm_stress

from hookbus.bus.output import HookOutput
from hookbus.testing.contract import DriverContract

#: Through the warm server's client, and through ``hookbus run`` (``--no-server``).
WARM_CALLS, COLD_CALLS = (
    int(n) for n in os.environ.get("HOOKBUS_FUZZ_CALLS", "20000,5000").split(",")
)
#: Three calls in flight per core: a call's CPU is mostly its own processes' start (the
#: shell, the client or ``hookbus run``), the server's share a tenth and never a queue
#: (no ``client-fallback``), so the cores, not the server, set the pace; on 2 loaded
#: cores 12 threads were no faster than 6.
THREADS = 3 * len(os.sched_getaffinity(0))
#: A run's seed is printed; this variable replays one.
SEED_VARIABLE = "HOOKBUS_FUZZ_SEED"
#: Failures printed (each payload is saved to a file).
SHOWN = 5


def marked(commands: dict[tuple[str, str], str]) -> dict[tuple[str, str], str]:
    """``commands`` whose shell fallback also says, on stderr, that it answered and how
    the hook exited (benchmarks/warm_stress.py's mark)."""
    return {key: warm_stress().mark_fallback(command) for key, command in commands.items()}


def _contract(host: str) -> DriverContract:
    """The host's driver contract, whose ``check_output`` holds its exit codes and its
    own validator (Codex's schemas ...)."""
    module = importlib.import_module(f"test_{host}_driver")
    (cls,) = [c for c in vars(module).values()
              if isinstance(c, type) and issubclass(c, DriverContract) and c is not DriverContract]  # fmt: skip
    return cls()


def _problems(bench: Bench, commands: dict[tuple[str, str], str], *, seed: int,
              numbers: range, pool: list[Base], out: Path,
              ) -> tuple[list[str], collections.Counter[str]]:  # fmt: skip
    """Run cases ``numbers`` through their commands, each made when its turn comes (some
    are over 1 MiB); what was wrong with each wrong answer (its payload saved in ``out``),
    and how many cases of each host and mutation ran."""
    contracts = {host: _contract(host) for host in HOSTS}
    ran: collections.Counter[str] = collections.Counter()
    mark = warm_stress().WRAPPER_FALLBACK.encode()

    def one(number: int) -> str | None:
        c = case(seed, number, pool)
        host, native = c.base.host, c.base.native
        got = bench.run(commands[host, native], c.payload)
        wrong = []
        if mark in got.stderr:
            before, _, status = got.stderr.partition(mark)
            got = HookOutput(got.stdout, before, got.exit_code)
            wrong.append(f"the command's own fallback answered: the hook exited {status.decode()} "
                         "with no reply")  # fmt: skip
        if b"Traceback" in got.stdout + got.stderr:
            wrong.append("a traceback")
        try:
            contracts[host].check_output(native, got)
        except Exception as exc:  # the host's validators raise what they raise
            wrong.append(f"not a valid reply: {exc!r}"[:300])
        if (owed := wrong_answer(c, got)) is not None:
            wrong.append(owed)
        ran[f"{host}/{c.mutation}"] += 1
        if not wrong:
            return None
        saved = out / f"payload-{c.number}.json"
        saved.write_bytes(c.payload)
        return (f"payload #{c.number} {host} {native} {c.mutation} ({len(c.payload)} bytes, "
                f"{saved}): got {got}; {'; '.join(wrong)}")  # fmt: skip

    with ThreadPoolExecutor(THREADS) as threads:
        return [p for p in threads.map(one, numbers) if p is not None], ran


@pytest.fixture
def bench(tmp_path: Path) -> Iterator[Bench]:
    state = Path(tempfile.mkdtemp(prefix="hbf"))  # short: the socket's path is in it
    bench = Bench(tmp_path, state)
    try:
        yield bench
    finally:
        bench.hookbus("serve", "--stop")
        stop_servers(state)
        shutil.rmtree(state, ignore_errors=True)


@pytest.mark.stress
@pytest.mark.timeout(900)
def test_fuzzed_payloads_get_the_guards_answer_on_both_paths(bench: Bench, tmp_path: Path) -> None:
    """25 000 mutated payloads of six hosts through the installed client (a server up) and
    through ``hookbus run``: every one a valid native reply with no traceback, the guard's
    deny (or stop request) wherever a fail-closed guard wants the installed event."""
    seed = int(os.environ.get(SEED_VARIABLE) or int.from_bytes(os.urandom(4), "big"))
    print(f"fuzz seed {seed} ({SEED_VARIABLE}={seed} replays it)")
    out = tmp_path / "failures"
    out.mkdir()
    began = time.monotonic()
    warm = marked(bench.install("--server"))
    cold = marked(bench.install("--no-server"))
    assert {h for h, _ in warm} == {h for h, _ in cold} == set(HOSTS)
    pool: list[Base] = []
    for host in HOSTS:
        pool += bases(host, {n for h, n in warm if h == host}, str(bench.project))
    assert bench.hookbus("serve", "--detach").returncode == 0
    problems: list[str] = []
    ran: collections.Counter[str] = collections.Counter()
    for commands, first, count in ((warm, 0, WARM_CALLS), (cold, WARM_CALLS, COLD_CALLS)):
        numbers = range(first, first + count)
        found, counts = _problems(bench, commands, seed=seed, numbers=numbers, pool=pool,
                                  out=out)  # fmt: skip
        problems += found
        ran += counts
    logged = "".join(p.read_text() for p in sorted(bench.state.glob("diagnostics.jsonl*")))
    took = time.monotonic() - began
    print(f"{WARM_CALLS} warm + {COLD_CALLS} cold calls in {took:.0f} s; by host and "
          f"mutation: {dict(sorted(ran.items()))}")  # fmt: skip
    assert sum(ran.values()) == WARM_CALLS + COLD_CALLS
    (out / "problems.txt").write_text("\n".join(problems))
    (out / "diagnostics.jsonl").write_text(logged)
    kinds = collections.Counter(" ".join(p.split(" (")[0].split()[2:]) for p in problems)
    tracebacks = [line[:300] for line in logged.splitlines() if "Traceback" in line]
    first = "\n".join(problems[:SHOWN])
    assert (problems, tracebacks) == ([], []), (
        f"seed {seed}: {len(problems)} wrong answers, by host, event and mutation "
        f"{dict(kinds)}; {len(tracebacks)} tracebacks in the diagnostics; all in {out}; "
        f"the first:\n{first}"
    )
