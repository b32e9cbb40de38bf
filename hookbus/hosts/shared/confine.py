"""Where install and uninstall may write and remove: inside the folder of the scope they
are run for.

A project's files are the agent's to edit, links included. An agent working in a
project can replace its ``.claude/`` with a link to the user's own ``~/.claude``:
followed, a project install would write the project's hooks into the user's settings,
and a project uninstall would delete the user's ``settings.json`` (the user-scope hooks
with it: the user's fail-closed guard would stop running in every project), then the
folder. So for the project and local scopes, every file hookbus writes, restores or
removes must resolve inside the project's real folder: no component of its path below
the project may be a link leading out of it (a link from one of the project's folders
to another is the project's own business). Install and uninstall ask :func:`link_out`
of every path of the scope before changing anything, and refuse.

The user scope is the user's own: their ``~/.claude`` may well be a link (dotfiles
managed with stow), and it is followed, as it always was. An agent that can plant links
in the user's home can edit the user's settings itself; nothing is gained by refusing.

Removing the folders install made (:func:`hookbus.hosts.shared.folders.prune`) is bounded
too (:func:`bound`): never the scope's folder itself nor a folder outside it, that is
the project folder for the project and local scopes, the user's home folder for the user
scope. A host folder the user moved out of the home with the host's environment variable
(``CODEX_HOME``, ``HERMES_HOME``) is the user's naming, bounded by the record of what
install made there (and the manifest's ``owned_top``) alone.

Never imported on a hook's path.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

from hookbus.hosts.shared.manifest import Manifest, Scope


def project_folder() -> str:
    """The project folder the project and local scopes' paths are made from, as the
    manifests find it (:func:`hookbus.hosts.shared.grouped.project_root`)."""
    from hookbus.hosts.shared.grouped import project_root

    return os.path.abspath(project_root())


def paths(manifest: Manifest, scope: Scope) -> list[str]:
    """Every file ``manifest`` writes, restores or removes in ``scope``: its settings
    files (their backups lie beside them) and every file it may own. The folders install
    makes, and OpenCode's npm folder, are on these paths: checked with them."""
    plan = manifest.plan(None, python=sys.executable, scope=scope)
    return [*(d.path for d in plan.documents), *manifest.owned_paths(scope)]


def within(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or lies below it (both as named)."""
    return os.path.commonpath([path, folder]) == folder


def link_out(paths: Iterable[str], project: str) -> tuple[str, str] | None:
    """The first component of one of ``paths`` below ``project`` that is a link leading
    out of the project's real folder, and the real path it leads to; None when every
    path resolves inside it. A path not below ``project`` is not the project's, and not
    looked at (OpenCode's npm step also serves the user's own folder)."""
    real_project = os.path.realpath(project)
    for named in paths:
        path = os.path.abspath(named)
        if not within(path, project):
            continue
        here = project
        for part in os.path.relpath(path, project).split(os.sep):
            here = os.path.join(here, part)
            # Resolved one more component at a time: the first to land outside is the
            # link (a dangling one too: realpath follows it as far as it goes).
            leads = os.path.realpath(here)
            if not within(leads, real_project):
                return here, leads
    return None


def bound(scope: Scope, folder: str) -> str | None:
    """The folder that removing empty folders from ``folder`` up may not reach nor
    leave (see the module docstring); None for a user-scope folder outside the home."""
    if scope != "user":
        return os.path.realpath(project_folder())
    home = os.path.realpath(os.path.expanduser("~"))
    return home if within(os.path.realpath(folder), home) else None
