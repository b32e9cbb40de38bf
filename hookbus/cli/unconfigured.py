"""Why no configuration is in effect here, said once: the files hookbus looked for, in
order, what it found at each and why it did not read it, and the fix (rename a
misnamed ``hookbus.toml``, install for the scope whose configuration exists, unset a
``HOOKBUS_CONFIG`` naming nothing).

``install`` says it when it would install nothing because it found no configuration: a
mistake (exit 1), not an empty configuration of the user's (exit 0); ``try`` says where it
looked when the hook it ran found none. Never imported on a hook's path.
"""

from __future__ import annotations

import os
import shlex

from hookbus.local.discover import (
    PROJECT_FILE,
    project_candidates,
    user_config_path,
    working_folder,
)
from hookbus.local.trust import file_problem

#: What a configuration file is often named instead of ``.hookbus.toml`` (no dot, another
#: format's suffix), compared without case and without the leading dot.
MISNAMED = frozenset(f"hookbus.{suffix}" for suffix in ("toml", "tml", "yaml", "yml", "json",
                                                         "cfg", "ini", "conf", "txt"))  # fmt: skip


def explain(scope: str, scopes: tuple[str, ...], command: str) -> list[str]:
    """Lines saying why ``command`` (``hookbus install --host H``) found no configuration
    for ``scope`` (``user`` reads the user's alone, ``project`` the project's alone,
    ``local`` both), the fix last; ``scopes`` are the host's (a fix names only one it
    has)."""
    return [f"hookbus: no configuration found for --scope {scope}, so no handler is enabled "
            "and nothing is installed; looked for, in order:",
            *searched(scope, scopes, command)]  # fmt: skip


def searched(scope: str, scopes: tuple[str, ...], command: str) -> list[str]:
    """The files looked for in ``scope``, in order, one indented line each with what was
    found there, then ``fix: ...``: the part of :func:`explain` that ``try`` shows too."""
    explicit = os.environ.get("HOOKBUS_CONFIG")
    if explicit:
        path = os.path.abspath(os.path.expanduser(explicit))
        return [f"  {path} (HOOKBUS_CONFIG names it): {_seen(path) or 'found'}",
                f"fix: create {path}, or unset HOOKBUS_CONFIG"]  # fmt: skip
    looked, fixes = _looked_for(scope, scopes, command)
    if not fixes:
        fixes.append(f"write {os.path.join(working_folder(), PROJECT_FILE)} (the project's) "
                     f"or {user_config_path()} (yours), enabling a handler "
                     "(docs/configuration.md)")  # fmt: skip
    return [*looked, f"fix: {'; or '.join(fixes)}"]


def _looked_for(scope: str, scopes: tuple[str, ...], command: str) -> tuple[list[str], list[str]]:
    """The files looked for (or passed over, with why), one line each, and the fixes."""
    looked: list[str] = []
    fixes: list[str] = []
    user = user_config_path()
    if scope != "project":
        looked.append(f"  {user}: {_seen(user) or 'found'}")
    elif _seen(user) is None:  # there, but not for the project's committed file
        looked.append(
            f"  {user}: not read: the project's committed settings follow the "
            "project's configuration alone (a teammate must not get yours)"
        )
        fixes += _scope_fix("local", scopes, command, "this machine's settings of the project, "
                            "your configuration and the project's")  # fmt: skip
        fixes += _scope_fix("user", scopes, command, "your settings, for every project")
    projects = list(project_candidates(working_folder()))
    if scope == "user":
        found = next((p for p in projects if _seen(p) is None), None)
        if found is not None:
            looked.append(f"  {found}: not read: --scope user reads your user configuration "
                          "alone (it applies in every project)")  # fmt: skip
            move = f"move its handlers to {user}"
            fixes += [f"{fix}, or {move}" for fix in _scope_fix(
                "project", scopes, command, "this project's settings")] or [move]  # fmt: skip
        return looked, fixes
    for candidate in projects:
        looked.append(f"  {candidate}: {_seen(candidate) or 'found'}")
        for name in _misnamed(os.path.dirname(candidate)):
            looked.append(f"  {name}: not read: hookbus reads {PROJECT_FILE} (with the dot)")
            right = os.path.join(os.path.dirname(name), PROJECT_FILE)
            fixes.append(f"mv {shlex.quote(name)} {shlex.quote(right)}")
    if projects:
        looked.append(f"  (and no higher: {_top(os.path.dirname(projects[-1]))})")
    return looked, fixes


def _top(folder: str) -> str:
    """Why the search stopped at ``folder`` (:func:`hookbus.local.discover.project_candidates`)."""
    if os.path.exists(os.path.join(folder, ".git")):
        return f"{folder} is the repository's root"
    if folder == os.path.expanduser("~"):
        return f"{folder} is your home folder"
    return f"{folder} is the file system's root"


def _seen(path: str) -> str | None:
    """What was found at ``path``: ``missing``, why a file there is not read, or None
    for a file that would be read."""
    if not os.path.lexists(path):
        return "missing"
    problem = file_problem(path)
    if problem is not None:
        return f"not read: it {problem} (its handlers would run as you): chown/chmod it"
    return None


def _misnamed(folder: str) -> list[str]:
    """The files in ``folder`` named like a configuration file but not ``.hookbus.toml``."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names
            if n != PROJECT_FILE and n.lower().lstrip(".") in MISNAMED
            and os.path.isfile(os.path.join(folder, n))]  # fmt: skip


def _scope_fix(scope: str, scopes: tuple[str, ...], command: str, what: str) -> list[str]:
    """The command that installs into ``scope`` (``what`` it is), when the host has it."""
    if scope not in scopes:
        return []
    return [f"{command} --scope {scope} ({what})"]
