"""The ``hooks`` block of Qwen Code's settings: generate, verify, install, uninstall.

Qwen copied Claude Code's shape (``{"hooks": {EVENT: [{"matcher", "hooks": [...]}]}}``,
handled by :mod:`hookbus.hosts.shared.grouped`), with what Gemini CLI, its ancestor, left
(Qwen Code 0.24.4, ``hooks/hookRunner.ts`` and ``hooks/hook-matcher.ts``):

- ``timeout`` is in **milliseconds** (default 60000);
- a matcher is an exact name, a ``|`` list of names, or else an *unanchored* regex; one
  that starts with ``^`` is compiled as written, so ours are anchored
  (``^(?:run_shell_command)$``, ``^mcp__github__``);
- there is no local scope: the project's ``.qwen/settings.json`` and the user's
  ``~/.qwen/settings.json``.

Only events (and tools) an enabled handler subscribes to are registered. Our entries are
recognised by their command; every other entry and key of the user's file is kept.
"""

from __future__ import annotations

import os

from hookbus.hosts.qwen.driver import ALL_EVENTS, driver
from hookbus.hosts.qwen.facts import FACTS
from hookbus.hosts.shared import grouped
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import Scope

HOST = "qwen"
Hooks = grouped.Hooks
#: Qwen's settings files: the project's, committed and shared; the user's, for every
#: project.
SCOPES: dict[Scope, bool] = {"project": True, "user": False}


def settings_path(scope: str, project_dir: str | None = None) -> str:
    """Qwen's settings file for ``scope``."""
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".qwen", "settings.json")
    return os.path.join(project_dir or project_root(), ".qwen", "settings.json")


class QwenManifest(grouped.GroupedManifest):
    """Qwen Code's ``hooks`` block in ``.qwen/settings.json`` (project) or
    ``~/.qwen/settings.json`` (user)."""

    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return settings_path(scope, project_dir)


manifest = QwenManifest()
