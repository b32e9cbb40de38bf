"""The real Kilo CLI 7.7.7 (an OpenCode descendant), headless and offline, with hookbus
installed by ``hookbus install --host kilo`` into a ``.kilo/plugin/`` that already holds
a plugin of the user's own. Kilo takes 20-40 s a run, so three runs: a deny the model
reads, an allow with the exact events, and hookbus gone after install.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import hosts
from .conftest import GOLDEN, host_program, skip_loudly
from .harness import Workspace, capturing_goldens
from .opencode_host import (
    KILO,
    PROOF,
    OpenCode,
    OpenCodeRun,
    config_dirs,
    decoded,
    kinds,
    save_goldens,
    tool_script,
    users_calls,
    users_log,
    users_plugin,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="session")
def kilo_executable(pytestconfig: pytest.Config) -> Path:
    found = host_program(pytestconfig, "kilo", hosts.HOSTS["kilo"].version)
    if isinstance(found, hosts.HostUnavailable):
        skip_loudly(pytestconfig, f"Kilo CLI cannot be installed or run: {found}")
    return found


def plugin_dir(ws: Workspace) -> Path:
    return config_dirs(KILO, ws)[0] / "plugin"


@pytest.fixture
def kilo(kilo_executable: Path, workspace: Workspace, golden_seen: set[str]) -> Iterator[OpenCode]:
    host = OpenCode(kilo_executable, workspace, KILO)
    host.seed()
    mine = plugin_dir(workspace) / "mine.js"
    mine.parent.mkdir(parents=True)
    mine.write_text(users_plugin(users_log(workspace)))
    yield host
    if capturing_goldens():
        save_goldens(workspace, GOLDEN / "kilo" / "real", golden_seen, prefix="kilo:")


def install(ws: Workspace, handlers: dict[str, Any], *, record: bool = True) -> None:
    ws.install_hookbus(handlers, host="kilo", record=record)
    assert (plugin_dir(ws) / "mine.js").read_text() == users_plugin(users_log(ws))
    assert "hookbus-owned-file" in (plugin_dir(ws) / "hookbus.js").read_text()


def assert_ok(run: OpenCodeRun) -> None:
    assert run.returncode == 0, run.describe()
    assert run.process.leftovers == (), run.describe()


def test_deny_blocks_bash_and_the_model_reads_the_reason(
    kilo: OpenCode, workspace: Workspace
) -> None:
    reason = "E2E-KDENY: echo is not allowed in this repo"
    install(workspace, {"deny_shell": {"reason": reason}})
    run = kilo.run("E2E-KDENY: please run echo hi", tool_script("E2E-KDENY"))

    assert_ok(run)
    assert not (workspace.project / PROOF).exists()
    _, second = run.model.conversation("E2E-KDENY")
    [told] = run.model.tool_outputs(second)
    assert reason in told
    assert kinds(workspace) == ["session-start", "prompt-submit", "before-tool", "stop"]
    [mine] = users_calls(workspace)
    assert mine["args"]["command"] == f"echo hi | tee {PROOF}"
    assert workspace.diagnostics() == []


def test_allow_runs_the_command_with_the_exact_events(kilo: OpenCode, workspace: Workspace) -> None:
    install(workspace, {})
    run = kilo.run("E2E-KALLOW: please run echo hi", tool_script("E2E-KALLOW"))

    assert_ok(run)
    assert (workspace.project / PROOF).read_text() == "hi\n"
    events = decoded(workspace, "kilo")
    assert [e["kind"] for e in events] == [
        "session-start", "prompt-submit", "before-tool", "after-tool", "stop"]  # fmt: skip
    assert {e["host"] for e in events} == {"kilo"}
    [session] = {e["session_id"] for e in events}
    assert re.fullmatch(r"ses_\w+", session)
    assert {e["cwd"] for e in events} == {str(workspace.project)}
    assert events[3]["output"] == "hi\n"
    assert workspace.diagnostics() == []


def test_hookbus_missing_after_install_blocks_nothing_and_says_so_once(
    kilo: OpenCode, workspace: Workspace, tmp_path: Path
) -> None:
    install(workspace, {"deny_shell": {"reason": "E2E-KMISSING"}}, record=False)
    shim = plugin_dir(workspace) / "hookbus.js"
    gone = json.dumps(str(tmp_path / "gone" / "python3"))
    shim.write_text(re.sub(r'"argv": \["[^"]+"', f'"argv": [{gone}', shim.read_text()))
    run = kilo.run("E2E-KMISSING: please run echo hi", tool_script("E2E-KMISSING"))

    assert_ok(run)
    assert (workspace.project / PROOF).read_text() == "hi\n"
    [line] = workspace.diagnostics()
    assert (line["event"], line["host"], line["native"]) == (
        "shim-fallback", "kilo", "tool.execute.before")  # fmt: skip
    assert run.process.stderr.count("hookbus: tool.execute.before:") == 1
