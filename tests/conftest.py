"""Every test runs with its own state directory and no user configuration."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import support
from hypothesis import settings
from servers import last_pid, stop_servers

ROOT = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    """A run that leaves the ``stress`` tests out (the unit run) checks each property on a
    fifth of its examples (:func:`support.examples`, and a profile for the properties that
    keep hypothesis's default count); a run with them, as CI's, on all of them."""
    support.PROPERTIES_IN_FULL = support.in_full(config.getoption("markexpr"))
    if not support.PROPERTIES_IN_FULL:
        default = settings.get_profile("default").max_examples
        settings.register_profile("unit", max_examples=support.examples(default))
        settings.load_profile("unit")


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Point hookbus's state and configuration at the test's own temporary folders; stop
    the warm servers the test's hooks started there (install's default command starts
    one when none answers)."""
    state = tmp_path / "hookbus-state"
    monkeypatch.setenv("HOOKBUS_STATE_DIR", str(state))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.delenv("HOOKBUS_CONFIG", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    # The warm server's socket folder would be the user's real $XDG_RUNTIME_DIR/hookbus.
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    # No test installs from a registry: OpenCode's and Kilo's npm step is left to the
    # host, unless a test points HOOKBUS_NPM at a fake npm.
    monkeypatch.setenv("HOOKBUS_NPM", "")
    # Every server the test's hooks start is a process started from here on.
    started = last_pid()
    yield state
    # The state folder the test ended with (it may have pointed it elsewhere). The client
    # makes its run/ folder before it starts a server: a state folder without one had
    # none started; one gone altogether (a pytest of the same user sharing the temporary
    # root removes older runs' folders) may have.
    final = Path(os.environ.get("HOOKBUS_STATE_DIR", state))
    if not final.exists() or (final / "run").exists():
        stop_servers(final, since=started)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


#: Folders never searched for a test's projects (large, and never a project).
_NOT_PROJECTS = frozenset({"hookbus-state", "node_modules", "site-packages", "__pycache__"})


def trust_projects(root: Path, config_home: str | None = None) -> None:
    """Trust every project under ``root`` as it is now, as its user would have with
    ``hookbus trust`` (in the trust store of ``config_home``, default this process's
    ``$XDG_CONFIG_HOME``): a record is written only when it differs."""
    from hookbus.local import project_trust
    from hookbus.runtime.config import project_code

    before = os.environ.get("XDG_CONFIG_HOME")
    if config_home is not None:
        os.environ["XDG_CONFIG_HOME"] = config_home
    try:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in _NOT_PROJECTS and "venv" not in d]
            if ".hookbus.toml" not in files:
                continue
            path = os.path.join(folder, ".hookbus.toml")
            try:
                code, named = project_code(path)
            except Exception:
                continue
            found = project_trust.read_store().record(path)
            if not named or code.refused or (found is not None and found.files == code.files
                                              and found.config == code.config_digest):  # fmt: skip
                continue
            try:
                project_trust.record(path, code)
            except PermissionError:  # a test's store nobody may trust: it stays untrusted
                continue
    finally:
        if before is None:
            os.environ.pop("XDG_CONFIG_HOME", None)
        else:
            os.environ["XDG_CONFIG_HOME"] = before


@pytest.fixture(autouse=True)
def trusted_projects(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test's projects are its user's own: each process a test starts finds every
    project under the test's folder trusted as it is then (as if its user had run
    ``hookbus trust`` after each edit). A test of trust itself opts out
    (``@pytest.mark.untrusted_projects``)."""
    if request.node.get_closest_marker("untrusted_projects"):
        return
    from hookbus.local import project_trust
    from hookbus.runtime import compile as compiler

    original, check, stats = subprocess.Popen.__init__, project_trust.check, compiler.trust_stats

    def starting(env: dict[str, str] | None, cwd: Any) -> None:
        roots = [tmp_path]
        # The repository's examples only for a process started in them: trusted into
        # every store, they would change the store (and stale its indexes) at each start.
        if cwd is not None and Path(cwd).resolve().is_relative_to(ROOT / "examples"):
            roots.append(ROOT / "examples")
        # The store of the process's own configuration folder, as hookbus finds it.
        home = None
        if env is not None:
            home = env.get("XDG_CONFIG_HOME") or (
                os.path.join(env["HOME"], ".config") if env.get("HOME") else None)  # fmt: skip
        for root in roots:
            trust_projects(root, home)

    def trusting(self: subprocess.Popen[Any], *args: Any, **kwargs: Any) -> None:
        starting(kwargs.get("env"), kwargs.get("cwd"))
        original(self, *args, **kwargs)

    # A configuration loaded, or an index compiled, in the test's own process: trusted
    # before the index takes its stat of the trust store.
    def trusted_check(*args: Any, **kwargs: Any) -> project_trust.Verdict:
        trust_projects(tmp_path)
        return check(*args, **kwargs)

    def trusted_stats(files: list[str]) -> list[Any]:
        trust_projects(tmp_path)
        return stats(files)

    monkeypatch.setattr(subprocess.Popen, "__init__", trusting)
    monkeypatch.setattr(project_trust, "check", trusted_check)
    monkeypatch.setattr(compiler, "trust_stats", trusted_stats)
    # A command run in this process (support.hookbus_inproc) is trusted for as a process
    # started would be, then runs without these patches, as that process would.
    monkeypatch.setattr(support, "process_start", starting)
    monkeypatch.setattr(support, "test_patches", [
        (subprocess.Popen, "__init__", original), (project_trust, "check", check),
        (compiler, "trust_stats", stats)])  # fmt: skip
