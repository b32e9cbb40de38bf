"""Carrying out a plan's owned files (Cline's hook scripts): written whole, compared
whole, removed whole, and only ever hookbus's own.

A file is hookbus's when its text holds :data:`~hookbus.hosts.shared.manifest.OWNED_MARK`.
Install refuses, before writing anything, when a planned path holds a file without it
(the user's own hook of that name); it removes hookbus's files the configuration no
longer wants. Uninstall removes exactly hookbus's files, then the folders that removal
emptied that install made (never a folder of the user's). Never imported
on a hook's path.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from hookbus.hosts.shared import confine
from hookbus.hosts.shared.folders import prune
from hookbus.hosts.shared.manifest import OwnedFile, Scope, owned_text, write_atomically


def refused(owned: Sequence[OwnedFile]) -> list[str]:
    """The planned paths that hold a file hookbus did not write."""
    return [f.path for f in owned if os.path.lexists(f.path) and owned_text(f.path) is None]


def install(
    owned: Sequence[OwnedFile], candidates: Sequence[str], *, dry_run: bool = False
) -> list[str]:
    """Write each planned file that differs, remove hookbus's unplanned ones; what was done,
    one line a file (nothing written with ``dry_run``)."""
    from hookbus.bus.errors import HostConfigError

    theirs = refused(owned)
    if theirs:
        raise HostConfigError(
            f"{', '.join(theirs)}: not written by hookbus; move it away (or rename it) and "
            "install again, nothing changed"
        )
    said: list[str] = []
    for f in owned:
        mode = 0o755 if f.executable else 0o644
        same = owned_text(f.path) == f.text and _mode(f.path) == mode
        if same:
            said.append(f"{f.path}: already up to date")
            continue
        if not dry_run:
            write_atomically(f.path, f.text, mode=mode, backup=False)
        said.append(f"{f.path}: {'would write' if dry_run else 'written'} (hookbus owns it)")
    planned = {f.path for f in owned}
    for path in candidates:
        if path not in planned and owned_text(path) is not None:
            if not dry_run:
                os.unlink(path)
            said.append(f"{path}: {'would remove' if dry_run else 'removed'} (no longer wanted)")
    return said


def drift(owned: Sequence[OwnedFile], candidates: Sequence[str]) -> list[str]:
    """How the files on disk differ from the plan."""
    problems = []
    for f in owned:
        text = owned_text(f.path)
        if text is None:
            why = "not hookbus's file" if os.path.lexists(f.path) else "missing"
            problems.append(f"{f.path}: {why}")
        elif text != f.text:
            problems.append(f"{f.path}: differs from the configuration")
        elif f.executable and _mode(f.path) & 0o100 == 0:
            problems.append(f"{f.path}: not executable")
    planned = {f.path for f in owned}
    problems += [f"{p}: installed but not wanted" for p in candidates
                 if p not in planned and owned_text(p) is not None]  # fmt: skip
    return problems


def remove(candidates: Sequence[str], scope: Scope, top: str | None = None) -> list[str]:
    """Remove hookbus's files among ``candidates`` and the folders that left empty, those
    install made (:mod:`hookbus.hosts.shared.folders`), never above ``top`` when given nor
    out of ``scope``'s folder (:func:`~hookbus.hosts.shared.confine.bound`)."""
    said = []
    folders = set()
    for path in candidates:
        if owned_text(path) is not None:
            os.unlink(path)
            folders.add(os.path.dirname(path))
            said.append(f"{path}: removed (hookbus wrote it)")
    for folder in sorted(folders, key=len, reverse=True):
        made = prune(folder, top, within=confine.bound(scope, folder))
        said += [f"{each}: removed (hookbus made it)" for each in made]
    return said


def _mode(path: str) -> int:
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        return 0
