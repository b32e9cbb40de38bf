"""32 concurrent installed clients x 200 calls through one warm server, each call one store
row, with and without the server reloading every 3 s (benchmarks/warm_stress.py runs it)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from support import warm_stress

CLIENTS, REQUESTS = 32, 200
#: The server re-executes itself this often while the clients run.
RELOAD_EVERY = 3.0


@pytest.mark.stress
@pytest.mark.timeout(300)
@pytest.mark.parametrize("reload_every", [None, RELOAD_EVERY], ids=["steady", "reloading"])
def test_every_call_is_answered_by_hookbus_with_one_row(
    tmp_path: Path, reload_every: float | None
) -> None:
    """Every one of 32 x 200 calls of the installed command answered right by hookbus
    (never by the command's shell fallback), with exactly one store row each."""
    stress = warm_stress()
    setup = stress.Setup(sys.executable, tmp_path)
    try:
        run = stress.measure(setup, CLIENTS, REQUESTS, reload_every)
    finally:
        setup.stop()
        shutil.rmtree(setup.state, ignore_errors=True)
    _, results = stress.tally(run)
    shown = ("wall_s", "call_ms", "answered_cold", "client_fallbacks", "fallback_reasons",
             "rows", "memory", "diagnostics")  # fmt: skip
    print(json.dumps({k: results[k] for k in shown}, indent=1))
    counts = {k: results[k] for k in ("failures", "rows_missing", "rows_doubled",
                                      "rows_unknown", "rows_wrong_action")}  # fmt: skip
    assert counts == dict.fromkeys(counts, 0), f"{counts}; {results['failure_samples'][:5]}"
    assert results["answered_right"] == CLIENTS * REQUESTS
    if reload_every is not None:
        # At least one reload every two periods of the run: the reloads did happen.
        wanted = int(results["wall_s"] / reload_every / 2)
        assert run.events["server-reloading"] >= wanted, run.events
