"""The in-process runtime: real forks, real handler modules, the host's process untouched."""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
import textwrap
import threading
import time
import warnings
from pathlib import Path

import anyio
import pytest

from hookbus import hosts
from hookbus.bus.events import BeforeTool
from hookbus.runtime import inproc

GOLDEN = Path(__file__).parent / "golden" / "claude"
NO_OPINION = hosts.driver("claude").no_opinion("PreToolUse")

HOOKS = """
import re, time
import hookbus

@hookbus.handler("before-tool", tools="shell")
def no_force_push(event):
    if "--force" in (event.tool.command or ""):
        return hookbus.Reply.deny("Force-pushing is not allowed here.")
    return None

@hookbus.handler("before-tool", tools="shell", timeout=1)
def sleepy(event):
    time.sleep(30)

@hookbus.handler("before-tool", tools="shell", timeout=1, fail_closed=True)
def stuck_in_c(event):
    # Catastrophic backtracking: _sre holds the GIL, no Python-level timeout can fire.
    re.match(r"(a+)+$", "a" * 64 + "b")
"""

LATE = """
import hookbus

@hookbus.handler({kind!r})
def late(event):
    return hookbus.Reply.deny("changed its mind")
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "inproc_guards").mkdir(parents=True)
    (root / "inproc_guards" / "__init__.py").write_text("")
    (root / "inproc_guards" / "hooks.py").write_text(HOOKS)
    return root


def configure(project: Path, body: str) -> None:
    (project / ".hookbus.toml").write_text(textwrap.dedent(body))


def pre_tool(command: str, project: Path) -> dict[str, object]:
    payload = json.loads((GOLDEN / "PreToolUse.Bash.json").read_text())
    payload["tool_input"]["command"] = command
    payload["cwd"] = str(project)
    return payload  # type: ignore[no-any-return]


def decision(result: inproc.Result) -> dict[str, object]:
    return json.loads(result.output.stdout)["hookSpecificOutput"]  # type: ignore[no-any-return]


def logged(state: Path) -> list[dict[str, object]]:
    path = state / "diagnostics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_deny_comes_back_encoded_with_the_event_and_the_dispatch(project: Path) -> None:
    """A handler's deny comes back in Claude's encoding, with the decoded event and dispatch."""
    configure(project, 'enable = ["inproc_guards.hooks:no_force_push"]')
    payload = json.dumps(pre_tool("git push --force origin main", project)).encode()
    result = inproc.dispatch("claude", payload)  # bytes; the project is the payload's cwd
    assert (result.output.exit_code, result.output.stderr) == (0, b"")
    assert json.loads(result.output.stdout) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "Force-pushing is not allowed here.",
        }
    }
    assert isinstance(result.event, BeforeTool)
    assert result.event.tool.command == "git push --force origin main"
    assert result.dispatch is not None
    assert result.dispatch.reply.decision == "deny"
    assert [o.handler for o in result.dispatch.outcomes] == ["inproc_guards.hooks:no_force_push"]


def test_no_opinion_when_the_handler_or_the_configuration_has_none(project: Path) -> None:
    """An allowed command, or a project without configuration, gets Claude's no-opinion."""
    configure(project, 'enable = ["inproc_guards.hooks:no_force_push"]')
    result = inproc.dispatch("claude", pre_tool("npm test", project), project=str(project))
    assert result.output == NO_OPINION
    assert result.dispatch is not None
    assert result.dispatch.reply.empty
    (project / ".hookbus.toml").unlink()
    bare = inproc.dispatch("claude", pre_tool("git push --force", project), project=str(project))
    assert (bare.output, bare.dispatch) == (NO_OPINION, None)


def test_a_sleeping_handler_costs_its_timeout_not_its_sleep(
    project: Path, isolated_environment: Path
) -> None:
    """A handler sleeping 30 s fails open at its 1 s timeout, inside the 3 s budget (the
    2 s between keep the watchdog out of it on a loaded machine), its diagnostic recorded
    here."""
    configure(project, 'budget = 3\nenable = ["inproc_guards.hooks:sleepy"]')
    started = time.monotonic()
    result = inproc.dispatch("claude", pre_tool("npm test", project), project=str(project))
    assert time.monotonic() - started < 10
    assert result.output == NO_OPINION
    timeouts = [d for d in logged(isolated_environment) if d["event"] == "handler-timeout"]
    assert [d["handler"] for d in timeouts] == ["inproc_guards.hooks:sleepy"]
    assert timeouts[0]["pid"] != os.getpid()  # emitted in the worker, written by this process


def test_a_handler_holding_the_gil_is_bounded_and_refused_when_fail_closed(
    project: Path, isolated_environment: Path
) -> None:
    """A fail-closed handler spinning in C under the GIL is killed at the budget: a refusal."""
    configure(project, 'budget = 1\nenable = ["inproc_guards.hooks:stuck_in_c"]')
    started = time.monotonic()
    result = inproc.dispatch("claude", pre_tool("npm test", project), project=str(project))
    assert time.monotonic() - started < 10
    answer = decision(result)
    assert answer["permissionDecision"] == "deny"
    assert "fail-closed inproc_guards.hooks:stuck_in_c" in str(answer["permissionDecisionReason"])
    assert "watchdog-fired" in [d["event"] for d in logged(isolated_environment)]


@pytest.mark.anyio
async def test_dispatch_works_inside_a_running_event_loop(project: Path) -> None:
    """Called from a coroutine, dispatch answers and leaves the running loop as it was."""
    import asyncio

    configure(project, 'enable = ["inproc_guards.hooks:no_force_push"]')
    loop = asyncio.get_running_loop()
    result = inproc.dispatch("claude", pre_tool("git push --force", project), project=str(project))
    assert decision(result)["permissionDecision"] == "deny"
    assert asyncio.get_running_loop() is loop
    assert not loop.is_closed()


@pytest.mark.anyio
async def test_dispatch_async_lets_the_event_loop_run_meanwhile(project: Path) -> None:
    """dispatch_async waits on a worker thread: other tasks run during a 1 s dispatch."""
    configure(project, 'budget = 1\nenable = ["inproc_guards.hooks:sleepy"]')
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await anyio.sleep(0.05)
            ticks += 1

    async with anyio.create_task_group() as group:
        group.start_soon(tick)
        result = await inproc.dispatch_async(
            "claude", pre_tool("npm test", project), project=str(project)
        )
        group.cancel_scope.cancel()
    assert result.output == NO_OPINION
    assert ticks >= 5


def test_the_host_keeps_its_path_modules_signals_and_warning_filters(project: Path) -> None:
    """With other threads running, a dispatch imports no handler here and changes no global."""
    configure(project, 'enable = ["inproc_guards.hooks:no_force_push"]')
    payload = pre_tool("git push --force", project)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            path, filters, frozen = list(sys.path), list(warnings.filters), gc.get_freeze_count()
            handlers = {s: signal.getsignal(s) for s in signal.valid_signals()}
            result = inproc.dispatch("claude", payload, project=str(project))
            assert (sys.path, warnings.filters) == (path, filters)
            assert gc.get_freeze_count() <= frozen  # run_child's gc.freeze() undone
            assert {s: signal.getsignal(s) for s in signal.valid_signals()} == handlers
    finally:
        stop.set()
        other.join()
    assert decision(result)["permissionDecision"] == "deny"
    assert not [name for name in sys.modules if name.startswith("inproc_guards")]
    assert not [w for w in seen if "fork" in str(w.message)]  # Python 3.12's fork warning


def test_the_snapshot_is_cached_and_rebuilt_when_a_handler_module_changes(project: Path) -> None:
    """The compiled configuration is reused while fresh and recompiled after a module edit."""
    module = project / "inproc_guards" / "late.py"
    module.write_text(LATE.format(kind="session-start"))
    configure(project, 'enable = ["inproc_guards.late:late"]')
    payload = pre_tool("npm test", project)
    assert inproc.dispatch("claude", payload, project=str(project)).output == NO_OPINION
    first = inproc.snapshot(str(project))
    assert first is not None
    assert inproc.snapshot(str(project)) is first
    module.write_text(LATE.format(kind="before-tool"))
    later = module.stat().st_mtime + 10
    os.utime(module, (later, later))  # a new mtime even within the same second
    result = inproc.dispatch("claude", payload, project=str(project))
    assert decision(result)["permissionDecisionReason"] == "changed its mind"
    assert inproc.snapshot(str(project)) is not first


def test_a_guard_whose_import_hangs_is_refused_in_time_then_skipped(
    project: Path, isolated_environment: Path
) -> None:
    """A fail-closed guard whose module hangs at import costs one budget, then is stood in
    for at once (3 s budget: the second call must not be cut too on a loaded machine)."""
    (project / "inproc_guards" / "hangs.py").write_text("import time\ntime.sleep(30)\n")
    configure(
        project,
        """
        budget = 3
        enable = ["inproc_guards.hangs:guard"]
        [handlers."inproc_guards.hangs:guard"]
        fail_closed = true
        """,
    )
    payload = pre_tool("npm test", project)
    for _ in range(2):
        started = time.monotonic()
        result = inproc.dispatch("claude", payload, project=str(project))
        assert time.monotonic() - started < 10
        assert decision(result)["permissionDecision"] == "deny"
    assert "inproc_guards.hangs:guard did not load" in str(
        decision(result)["permissionDecisionReason"]
    )
    fired = [d for d in logged(isolated_environment) if d["event"] == "watchdog-fired"]
    assert [d["handler"] for d in fired] == [
        "inproc_guards.hangs:guard"
    ]  # the second call skips it


def test_an_unreadable_payload_is_refused_for_a_fail_closed_guard(
    project: Path, isolated_environment: Path
) -> None:
    """A payload cut short is not let through when a fail-closed guard wants its event."""
    configure(project, 'enable = ["inproc_guards.hooks:stuck_in_c"]')
    cut = json.dumps(pre_tool("rm -rf /", project)).encode()[:-40]
    result = inproc.dispatch("claude", cut, project=str(project))
    assert result.event is None
    assert decision(result)["permissionDecision"] == "deny"
    assert "input-invalid" in [d["event"] for d in logged(isolated_environment)]


def test_an_unknown_host_is_answered_not_raised() -> None:
    """An unknown host name gets exit code 1 and a message, never an exception."""
    result = inproc.dispatch("no-such-host", {"hook_event_name": "PreToolUse"})
    assert result.output.exit_code == 1
    assert b"no-such-host" in result.output.stderr


LAZY = """
import hookbus

@hookbus.handler("before-tool", tools="shell", fail_closed=True, timeout=5)
def lazy(event):
    import colorsys  # first imported here, in the worker

    return hookbus.Reply.deny(f"colorsys from {colorsys.__file__}")
"""


def test_a_worker_imports_nothing_from_a_relative_entry_of_the_hosts_path(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host started with an empty entry on its import path (``PYTHONPATH=:/opt/x``), in
    the agent's folder: a module its handler imports first in the worker comes from the
    standard library, not from a file the agent planted there."""
    (project / "inproc_guards" / "lazy.py").write_text(LAZY)
    configure(project, 'enable = ["inproc_guards.lazy:lazy"]')
    agent = tmp_path / "agent"
    agent.mkdir()
    marker = tmp_path / "marker"
    (agent / "colorsys.py").write_text(f"open({str(marker)!r}, 'w').write('planted')\n")
    monkeypatch.chdir(agent)
    monkeypatch.setattr(sys, "path", ["", *sys.path])
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    result = inproc.dispatch("claude", pre_tool("ls", project), project=str(project))
    reason = str(decision(result)["permissionDecisionReason"])
    assert reason.startswith("colorsys from /") and str(agent) not in reason
    assert not marker.exists()
