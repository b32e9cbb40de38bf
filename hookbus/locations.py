"""Where hookbus finds its configuration and keeps its state (standard library only:
this runs on every hook's cold path)."""

from __future__ import annotations

import os

PROJECT_FILE = ".hookbus.toml"


def state_dir() -> str:
    """The state root: ``$HOOKBUS_STATE_DIR``, else ``$XDG_STATE_HOME/hookbus``."""
    explicit = os.environ.get("HOOKBUS_STATE_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(base, "hookbus")


def ensure_state_dir() -> str:
    """Create the state root with user-only permissions if it is missing, and return it."""
    path = state_dir()
    if not os.path.isdir(path):
        os.makedirs(path, mode=0o700, exist_ok=True)
        os.chmod(path, 0o700)
    return path


def user_config_path() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "hookbus", "config.toml")


def find_project_config(start: str) -> str | None:
    """The nearest ``.hookbus.toml`` at or above ``start``."""
    here = os.path.abspath(start)
    while True:
        candidate = os.path.join(here, PROJECT_FILE)
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def config_paths(cwd: str | None = None) -> list[str]:
    """The configuration files in effect for ``cwd``, lowest precedence first.

    ``HOOKBUS_CONFIG`` names the one file to read instead of the user's and the project's.
    """
    explicit = os.environ.get("HOOKBUS_CONFIG")
    if explicit:
        return [os.path.abspath(os.path.expanduser(explicit))]
    paths = []
    user = user_config_path()
    if os.path.isfile(user):
        paths.append(user)
    project = find_project_config(cwd or os.getcwd())
    if project and project not in paths:
        paths.append(project)
    return paths
