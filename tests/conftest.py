"""Every test runs with its own state directory and no user configuration."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from servers import stop_servers

ROOT = Path(__file__).resolve().parent.parent


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
    yield state
    # The state folder the test ended with (it may have pointed it elsewhere). The client
    # makes its run/ folder before it starts a server: a state folder without one had
    # none started; one gone altogether (a pytest of the same user sharing the temporary
    # root removes older runs' folders) may have.
    final = Path(os.environ.get("HOOKBUS_STATE_DIR", state))
    if not final.exists() or (final / "run").exists():
        stop_servers(final)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
