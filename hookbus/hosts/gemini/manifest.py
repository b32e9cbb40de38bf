"""The ``hooks`` block of Gemini CLI's settings: generate, verify, install, uninstall.

Gemini copied Claude Code's shape (``{"hooks": {EVENT: [{"matcher", "hooks": [...]}]}}``,
handled by :mod:`hookbus.hosts.shared.grouped`), with three differences that matter here
(Gemini CLI 0.61.0, ``hooks/hookPlanner.ts`` and ``docs/hooks/reference.md``):

- ``timeout`` is in **milliseconds** (default 60000);
- a tool event's matcher is always compiled as a JavaScript regex and tested
  *unanchored* (an invalid one falls back to equality), so ours are anchored:
  ``^(?:run_shell_command)$``, ``^mcp_github_``. A lifecycle event's matcher is an exact
  value (SessionStart's ``source``, SessionEnd's ``reason``, PreCompress's ``trigger``),
  never a pattern; hookbus registers those without one;
- there is no local scope: the project's ``.gemini/settings.json`` and the user's
  ``~/.gemini/settings.json`` (and a system file hookbus does not touch).

Only events (and tools) an enabled handler subscribes to are registered. Our entries are
recognised by their command; every other entry and key of the user's file is kept.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import ClassVar

from hookbus.hosts.gemini.driver import ALL_EVENTS, driver
from hookbus.hosts.gemini.facts import FACTS
from hookbus.hosts.shared import grouped
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import Scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import ToolsData

HOST = "gemini"
Hooks = grouped.Hooks
#: Gemini's settings files (docs/cli/settings.md): the project's, committed and shared;
#: the user's, for every project.
SCOPES: dict[Scope, bool] = {"project": True, "user": False}


def settings_path(scope: str, project_dir: str | None = None) -> str:
    """Gemini's settings file for ``scope``."""
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".gemini", "settings.json")
    return os.path.join(project_dir or project_root(), ".gemini", "settings.json")


def matcher(tools: ToolsData | None) -> str | None:
    """An anchored regex for an index route's tools; None matches every tool."""
    return grouped.anchored(tools)


class GeminiManifest(grouped.GroupedManifest):
    """Gemini CLI's ``hooks`` block in ``.gemini/settings.json`` (project) or
    ``~/.gemini/settings.json`` (user)."""

    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver
    #: Gemini names each hook (its /hooks panel and logs show the name).
    entry_fields: ClassVar[Mapping[str, str]] = {"name": "hookbus"}

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return settings_path(scope, project_dir)


manifest = GeminiManifest()
