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
    """The nearest ``.hookbus.toml`` at or above ``start``, looking no higher than the
    repository root (a folder with ``.git``) or the home folder.

    A configuration names code to run, so one that another user could have written (not
    ours, or writable by anyone) is skipped, with a diagnostic.
    """
    here = os.path.abspath(start)
    home = os.path.expanduser("~")
    while True:
        candidate = os.path.join(here, PROJECT_FILE)
        if os.path.isfile(candidate):
            if _trusted(candidate):
                return candidate
            from hookbus import diagnostics

            diagnostics.emit("config-ignored", f"{candidate} is not the user's own or is "
                             "writable by anyone; its handlers would run as this user")  # fmt: skip
        parent = os.path.dirname(here)
        if here in (parent, home) or os.path.exists(os.path.join(here, ".git")):
            return None
        here = parent


def _trusted(path: str) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    return st.st_uid == os.geteuid() and not st.st_mode & 0o002


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
