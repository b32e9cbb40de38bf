"""The folders hookbus made for the files it installs (``.claude/``, ``.cursor/``,
``.github/hooks/``): uninstall removes them once empty, and never a folder of the user's
(an empty ``.claude/`` they made before install stays), nor one outside the scope's
folder (:mod:`hookbus.hosts.shared.confine`).

Each folder install makes is recorded in the state root (:data:`RECORD`) by its path and
its identity (device and inode): a folder the user removed and made again at the same
path is theirs, not ours. A folder one host's uninstall leaves because something is in
it (another host's file, the user's own) stays recorded, so the last uninstall that
empties it removes it. A record lost with the state folder only leaves an empty folder
behind. Never imported on a hook's path.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat

from hookbus.local import state

#: The record's file in the state root: ``{path: [device, inode]}``.
RECORD = "made-folders.json"


def make(folder: str) -> None:
    """``os.makedirs(folder)``, each folder it made recorded as hookbus's."""
    missing = []
    here = os.path.abspath(folder)
    while not os.path.lexists(here):
        missing.append(here)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    os.makedirs(folder, exist_ok=True)
    if not missing:
        return
    records = _read()
    for path in missing:
        found = _identity(path)
        if found is not None:
            records[path] = found
    _write(records)


def prune(folder: str, top: str | None = None, *, within: str | None) -> list[str]:
    """Remove ``folder``, then its parents, while each is empty and one hookbus made, never
    above ``top`` when given, and never ``within`` itself nor a folder outside it (the
    scope's folder, :func:`hookbus.hosts.shared.confine.bound`; None: the record alone
    bounds it); the folders removed, deepest first. Compared as real paths, as the record
    holds them (:func:`~hookbus.hosts.shared.manifest.write_atomically` makes the real folder)."""
    records = _read()
    removed: list[str] = []
    here = os.path.realpath(folder)
    ceiling = os.path.realpath(top) if top else None
    bound = os.path.realpath(within) if within else None
    changed = False
    while here in records:
        if ceiling is not None and not _below(here, ceiling, inclusive=True):
            break
        if bound is not None and not _below(here, bound, inclusive=False):
            break
        if _identity(here) != records[here]:  # gone, or made again by someone else
            del records[here]
            changed = True
            break
        try:
            os.rmdir(here)
        except OSError:  # something is in it (the user's, or another host's): it stays
            break
        del records[here]
        removed.append(here)
        changed = True
        here = os.path.dirname(here)
    if changed:
        _write(records)
    return removed


def _below(path: str, folder: str, *, inclusive: bool) -> bool:
    """Whether ``path`` lies below ``folder`` (or, ``inclusive``, is it)."""
    return (inclusive and path == folder) or path.startswith(os.path.join(folder, ""))


def _identity(path: str) -> list[int] | None:
    """The device and inode of the folder at ``path`` (not followed); None when there is
    none."""
    try:
        found = os.lstat(path)
    except OSError:
        return None
    return [found.st_dev, found.st_ino] if stat.S_ISDIR(found.st_mode) else None


def _read() -> dict[str, list[int]]:
    """The record (empty when missing, unreadable or refused: folders then stay)."""
    try:
        data = json.loads(state.read(RECORD))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items()
            if isinstance(k, str) and isinstance(v, list) and len(v) == 2}  # fmt: skip


def _write(records: dict[str, list[int]]) -> None:
    """Write the record. A state folder that cannot be written (refused: ``hookbus
    doctor`` says why) fails no install: it only leaves empty folders behind later."""
    with contextlib.suppress(OSError):
        state.write(RECORD, data=json.dumps(records, indent=1, sort_keys=True).encode())
