"""Fixtures of the end-to-end suite: the pinned host, a scratch workspace, a host runner.

When the host cannot be installed, its tests are skipped *loudly*: the reason is printed
to the terminal and shown in the skip summary. With ``HOOKBUS_E2E_REQUIRED=1`` they fail
instead. With ``HOOKBUS_E2E_GOLDEN=1`` the first real payload of each native event seen
is saved under ``tests/golden/<host>/real/`` (scratch paths replaced by placeholders).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest
from servers import stop_servers

from . import hosts
from .harness import Claude, Codex, Workspace, capturing_goldens

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
UNAVAILABLE = pytest.StashKey[list[str]]()
PROGRAMS = pytest.StashKey[dict[str, Path | hosts.HostUnavailable]]()


def skip_loudly(config: pytest.Config, reason: str) -> NoReturn:
    """Skip (or, with HOOKBUS_E2E_REQUIRED=1, fail) saying why, now and in the summary."""
    message = f"END-TO-END TESTS NOT RUN: {reason}"
    config.stash.setdefault(UNAVAILABLE, []).append(message)
    capture = config.pluginmanager.get_plugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        print(f"\n{message}", file=sys.stderr, flush=True)
    if os.environ.get("HOOKBUS_E2E_REQUIRED") == "1":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for message in terminalreporter.config.stash.get(UNAVAILABLE, []):
        terminalreporter.write_sep("!", message, red=True, bold=True)


def host_program(config: pytest.Config, host: str, version: str) -> Path | hosts.HostUnavailable:
    """The pinned program of ``host`` at ``version``, or why it is unavailable (looked up,
    and installed when missing, once a run)."""
    found = config.stash.setdefault(PROGRAMS, {})
    key = f"{host}@{version}"
    if key not in found:
        try:
            found[key] = hosts.ensure(host, version)
        except hosts.HostUnavailable as exc:
            found[key] = exc
    return found[key]


#: The pinned programs (:data:`hosts.HOSTS`) each fixture runs or seeds a workspace with,
#: installed before the first test that uses it; .ci/run installs every one of them
#: ahead (``tests/e2e/test_hosts.py`` holds both lists to this one).
FIXTURE_PROGRAMS: dict[str, tuple[str, ...]] = {
    "claude_executable": ("claude",),  # at the test's claude_version
    "codex_executable": ("codex",),
    "gemini_executable": ("gemini",),
    "copilot_executable": ("copilot",),
    "qwen_executable": ("qwen",),
    "cline_executable": ("cline",),
    "hermes_argv": ("hermes",),
    # OpenCode's workspaces are seeded with its plugin package (opencode_host.seed).
    "opencode_executable": ("opencode", "opencode-plugin"),
    "kilo_executable": ("kilo",),
    "pi_executable": ("pi",),
}


def programs_wanted(items: list[pytest.Item]) -> list[tuple[str, str]]:
    """The (host, version) pairs the fixtures of ``items`` run, each once, in order."""
    wanted: dict[tuple[str, str], None] = {}
    for item in items:
        callspec = getattr(item, "callspec", None)
        params = callspec.params if callspec else {}
        for fixture in getattr(item, "fixturenames", ()):
            for host in FIXTURE_PROGRAMS.get(fixture, ()):
                version = params.get("claude_version") if host == "claude" else None
                wanted[host, version or hosts.HOSTS[host].version] = None
    return list(wanted)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Install the hosts before the first test: an install must not eat into its timeout.
    (What is still missing then, :func:`hosts.ensure` installs when a test asks.)"""
    for host, version in programs_wanted(session.items):
        host_program(session.config, host, version)


@pytest.fixture
def claude_version() -> str:
    """The Claude Code version a test runs: the main pin, unless the test parametrises it
    (``@pytest.mark.parametrize("claude_version", ...)``, one of ``hosts.HOSTS``' pins)."""
    return hosts.HOSTS["claude"].version


@pytest.fixture
def claude_executable(pytestconfig: pytest.Config, claude_version: str) -> Path:
    found = host_program(pytestconfig, "claude", claude_version)
    if isinstance(found, hosts.HostUnavailable):
        skip_loudly(
            pytestconfig, f"Claude Code {claude_version} cannot be installed or run: {found}"
        )
    return found


@pytest.fixture(scope="session")
def golden_seen() -> set[str]:
    """Native events whose golden payload this session already saved."""
    return set()


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Workspace]:
    """A test's workspace; the warm servers its hooks started (install's default command
    starts one in the workspace's state folder) are stopped when it ends."""
    made = Workspace(tmp_path).create()
    yield made
    stop_servers(made.state)


@pytest.fixture
def claude(
    claude_executable: Path, claude_version: str, workspace: Workspace, golden_seen: set[str]
) -> Iterator[Claude]:
    yield Claude(claude_executable, workspace)
    if capturing_goldens() and claude_version == hosts.HOSTS["claude"].version:
        workspace.save_goldens(GOLDEN / "claude" / "real", golden_seen)


@pytest.fixture(scope="session")
def codex_executable(pytestconfig: pytest.Config) -> Path:
    found = host_program(pytestconfig, "codex", hosts.HOSTS["codex"].version)
    if isinstance(found, hosts.HostUnavailable):
        skip_loudly(pytestconfig, f"Codex CLI cannot be installed or run: {found}")
    return found


@pytest.fixture
def codex(codex_executable: Path, workspace: Workspace) -> Codex:
    return Codex(codex_executable, workspace)
