"""The ``apply_patch`` envelope (``*** Begin Patch`` ... ``*** End Patch``) that OpenAI's
models write, and the files it touches. Codex's ``apply_patch`` and Factory Droid's
``ApplyPatch`` (offered to OpenAI models "for compatibility", Droid's custom-droids docs)
take it; a driver whose host has such a tool reads its edited paths here.
"""

from __future__ import annotations

from typing import Literal

from hookbus.bus import events as ev
from hookbus.hosts.shared.driver import absolute

_PATCH_HEADS: dict[str, Literal["add", "update", "delete"]] = {
    "*** Add File: ": "add", "*** Update File: ": "update", "*** Delete File: ": "delete",
}  # fmt: skip
_MOVE = "*** Move to: "
#: How every envelope starts (Codex's parser requires it as the first line).
BEGIN = "*** Begin Patch"


def patch_changes(patch: str, cwd: str = "") -> tuple[ev.FileChange, ...]:
    """The files an ``apply_patch`` envelope adds, updates, deletes or moves (an update
    followed by ``*** Move to:`` is a move), relative paths joined to ``cwd``."""
    changes: list[ev.FileChange] = []
    for line in patch.splitlines():
        if line.startswith(_MOVE) and changes and changes[-1].action == "update":
            path = absolute(cwd, line[len(_MOVE) :].strip())
            changes.append(ev.FileChange(action="move", path=path, from_path=changes.pop().path))
            continue
        for head, action in _PATCH_HEADS.items():
            if line.startswith(head) and (path := line[len(head) :].strip()):
                changes.append(ev.FileChange(action=action, path=absolute(cwd, path)))
    return tuple(changes)
