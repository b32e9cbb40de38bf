"""The real Kilo CLI 7.7.7 (an OpenCode descendant), headless and offline, with hookbus
installed by ``hookbus install --host kilo`` into a ``.kilo/plugin/`` that already holds
a plugin of the user's own. Kilo takes 20-40 s a run, so four runs: a deny the model
reads, an allow with the exact events, hookbus gone after install, and the guard.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from . import hosts
from .conftest import GOLDEN, host_program, skip_loudly
from .harness import Workspace, capturing_goldens
from .opencode_host import (
    KILO,
    PROOF,
    OpenCode,
    assert_ok,
    check_deny,
    check_guard_cap,
    check_hookbus_missing,
    decoded,
    save_goldens,
    tool_script,
)

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="session")
def kilo_executable(pytestconfig: pytest.Config) -> Path:
    found = host_program(pytestconfig, "kilo", hosts.HOSTS["kilo"].version)
    if isinstance(found, hosts.HostUnavailable):
        skip_loudly(pytestconfig, f"Kilo CLI cannot be installed or run: {found}")
    return found


@pytest.fixture
def kilo(kilo_executable: Path, workspace: Workspace, golden_seen: set[str]) -> Iterator[OpenCode]:
    host = OpenCode(kilo_executable, workspace, KILO)
    host.prepare()
    yield host
    if capturing_goldens():
        save_goldens(workspace, GOLDEN / "kilo" / "real", golden_seen, prefix="kilo:")


def test_deny_blocks_bash_and_the_model_reads_the_reason(kilo: OpenCode) -> None:
    check_deny(kilo, "E2E-KDENY")


def test_allow_runs_the_command_with_the_exact_events(kilo: OpenCode, workspace: Workspace) -> None:
    """The command runs, and hookbus decodes a headless session's events as Kilo's."""
    kilo.install({})
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
    kilo: OpenCode, tmp_path: Path
) -> None:
    check_hookbus_missing(kilo, "E2E-KMISSING", tmp_path / "gone")


def test_the_guard_runs_a_premium_task_on_the_parents_model(kilo: OpenCode) -> None:
    check_guard_cap(kilo, "E2E-KGUARD")
