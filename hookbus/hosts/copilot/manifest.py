"""Copilot CLI's ``.github/hooks/hookbus.json``: generate, verify, install, uninstall.

Copilot loads every ``*.json`` in the project's ``.github/hooks/`` (only in a trusted
folder: ``--trust-folder``, else repo hooks are skipped silently) and in the user's
``$COPILOT_HOME/hooks/`` (``~/.copilot``). hookbus writes a file of its own there,
``hookbus.json``, and nothing else: the user's hook files are never opened, and
uninstall removes ours. The shape is Copilot's native one (hooks reference, 1.0.102):
``{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": ..., "timeoutSec":
..., "matcher": ...}]}}``, camelCase events, each command given ``--event`` (the
payloads do not name their event). Matchers are full-match regexes over ``toolName``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, ClassVar

from hookbus.hosts.copilot.driver import ALL_EVENTS, driver
from hookbus.hosts.copilot.facts import FACTS
from hookbus.hosts.shared import flat
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import Scope
from hookbus.hosts.shared.native_install import COPILOT_FILE, copilot_home

HOST = "copilot"
Hooks = flat.Hooks
Entry = flat.Entry
SCOPES: dict[Scope, bool] = {"project": True, "user": False}
FILE = COPILOT_FILE
TRUST_NOTE = (
    "Copilot runs a project's hooks only in a trusted folder: start it with "
    "--trust-folder (or trust the folder when asked)."
)


def hooks_path(scope: str, project_dir: str | None = None) -> str:
    # The same places a Claude command run by Copilot looks for this file to stand aside.
    if scope == "user":
        return os.path.join(copilot_home(os.environ), "hooks", FILE)
    return os.path.join(project_dir or project_root(), ".github", "hooks", FILE)


class CopilotManifest(flat.FlatManifest):
    """Copilot's ``hookbus.json``, a file hookbus owns whole (flat entries, no groups)."""

    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver
    command_key = "bash"
    header: ClassVar[Mapping[str, Any]] = {"version": 1}
    owns_file = True

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return hooks_path(scope, project_dir)

    def notes(self, hooks: Hooks) -> tuple[str, ...]:
        return (TRUST_NOTE,) if hooks else ()

    def flat_entry(self, native: str, group: Entry, entry: Entry) -> Entry:
        """``bash`` and ``timeoutSec`` (whole seconds) in place of Claude's ``command`` and
        ``timeout``, and the group's matcher in the entry."""
        mine: dict[str, Any] = {"type": "command", "bash": entry["command"]}
        if "timeout" in entry:
            mine["timeoutSec"] = entry["timeout"]
        if "matcher" in group:
            mine["matcher"] = group["matcher"]
        return mine


manifest = CopilotManifest()
