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

from hookbus.drivers.copilot import ALL_EVENTS, driver
from hookbus.hosts import HOSTS
from hookbus.manifests import flat
from hookbus.manifests.base import Scope
from hookbus.manifests.grouped import project_root
from hookbus.runtime.native_install import COPILOT_FILE, copilot_home

HOST = "copilot"
Hooks = flat.Hooks
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
    """Copilot's ``hookbus.json``, a file hookbus owns whole (flat entries, no groups):
    ``bash`` and ``timeoutSec`` (whole seconds) in place of Claude's ``command`` and
    ``timeout``, a full-match ``matcher`` per entry, ``"version": 1``."""

    command_key = "bash"
    timeout_key = "timeoutSec"
    version = 1
    facts = HOSTS[HOST]
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return hooks_path(scope, project_dir)

    def notes(self, hooks: Hooks) -> tuple[str, ...]:
        return (TRUST_NOTE,) if hooks else ()


manifest = CopilotManifest()
