"""Which configuration files are in effect (standard library only: every hook's cold
path asks).

Lowest precedence first: the user's ``$XDG_CONFIG_HOME/hookbus/config.toml``, then the
nearest ``.hookbus.toml`` at or above the project folder, looking no higher than the
repository root (a folder with ``.git``) or the home folder. ``HOOKBUS_CONFIG`` names
the one file to read instead of both.

A configuration names code to run, so a file another user could have written is
ignored, with a ``config-ignored`` diagnostic (the rule is :mod:`hookbus.trust`'s).
"""

from __future__ import annotations

import os

from hookbus import diagnostics
from hookbus.trust import file_problem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

PROJECT_FILE = ".hookbus.toml"


def is_project_file(path: str) -> bool:
    """Whether ``path`` (a file in effect) is a project's: a ``.hookbus.toml`` found by
    discovery, not the one file ``HOOKBUS_CONFIG`` names (that one is the user's choice)."""
    return os.path.basename(path) == PROJECT_FILE and not os.environ.get("HOOKBUS_CONFIG")


def user_config_path() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "hookbus", "config.toml")


def _trusted(path: str) -> bool:
    problem = file_problem(path)
    if problem is None:
        return True
    diagnostics.emit(
        "config-ignored",
        f"{path} {problem}: its handlers would run as this user, so it is not read",
        file=path,
    )
    return False


def project_candidates(start: str) -> Iterator[str]:
    """Where a ``.hookbus.toml`` is looked for, nearest first: ``start`` and its parents,
    up to the repository root (a folder with ``.git``) or the home folder."""
    here = os.path.abspath(start)
    home = os.path.expanduser("~")
    while True:
        yield os.path.join(here, PROJECT_FILE)
        parent = os.path.dirname(here)
        if here in (parent, home) or os.path.exists(os.path.join(here, ".git")):
            return
        here = parent


def find_project_config(start: str) -> str | None:
    """The nearest trusted ``.hookbus.toml`` at or above ``start`` (see the module doc)."""
    for candidate in project_candidates(start):
        if os.path.isfile(candidate) and _trusted(candidate):
            return candidate
    return None


def working_folder() -> str:
    """The working folder, or where it was (``$PWD``) when it has been deleted under us:
    the user's configuration must still be found, and a project's above it."""
    try:
        return os.getcwd()
    except OSError:
        return os.environ.get("PWD") or "/"


def config_paths(
    project: str | None = None, *, user_only: bool = False, project_only: bool = False
) -> list[str]:
    """The trusted configuration files in effect for ``project`` (default: the working
    directory), lowest precedence first; with ``user_only``, the user's alone (what
    applies in every project), with ``project_only`` the project's alone."""
    explicit = os.environ.get("HOOKBUS_CONFIG")
    if explicit:
        path = os.path.abspath(os.path.expanduser(explicit))
        if not os.path.exists(path):
            diagnostics.emit("config-invalid", f"HOOKBUS_CONFIG names {path}, which does not "
                             "exist; no handler is enabled", file=path)  # fmt: skip
            return []
        return [path] if _trusted(path) else []
    paths = []
    user = user_config_path()
    if not project_only and os.path.isfile(user) and _trusted(user):
        paths.append(user)
    if user_only:
        return paths
    found = find_project_config(project or working_folder())
    if found and found not in paths:
        paths.append(found)
    return paths
