"""Every test runs with its own state directory and no user configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point hookbus's state and configuration at the test's own temporary folders."""
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
    return state


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
