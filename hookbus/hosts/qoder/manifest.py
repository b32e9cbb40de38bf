"""The ``hooks`` block of Qoder CLI's settings: generate, verify, install, uninstall.

Qoder copied Claude Code's shape (``{"hooks": {EVENT: [{"matcher", "hooks": [...]}]}}``,
handled by :mod:`hookbus.hosts.shared.grouped`; https://docs.qoder.com/en/cli/hooks):
``timeout`` is in seconds; a matcher is ``*``, an exact value, a ``|`` list
(``Write|Edit``) or a regex (``mcp__.*``), Claude's syntax, so Claude's matchers serve
(:func:`~hookbus.hosts.shared.grouped.name_list_or_anchored`).
Its three files are "loaded and merged together": the project's ``.qoder/settings.json``
(committed), the project's ``.qoder/settings.local.json`` (to be git-ignored) and the
user's ``~/.qoder/settings.json``. Edits "take effect immediately".

The Qoder IDE and JetBrains plugin read the same files (an older IDE page lists only five
events there); Qoder CN (``~/.qodercn``) and QoderWork (``~/.qoderwork``) keep theirs
elsewhere and are not install targets here. Only events (and tools) an enabled handler
subscribes to are registered; our entries are recognised by their command.
"""

from __future__ import annotations

import os

from hookbus.hosts.qoder.driver import ALL_EVENTS, driver
from hookbus.hosts.qoder.facts import FACTS
from hookbus.hosts.shared import grouped
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import Scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import ToolsData

HOST = "qoder"
#: The project's file is shared; its local one and the user's are not.
SCOPES: dict[Scope, bool] = {"project": True, "local": False, "user": False}
FILES = {"project": "settings.json", "local": "settings.local.json"}


def settings_path(scope: str, project_dir: str | None = None) -> str:
    """Qoder's settings file for ``scope``."""
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".qoder", "settings.json")
    return os.path.join(project_dir or project_root(), ".qoder", FILES[scope])


class QoderManifest(grouped.GroupedManifest):
    """Qoder CLI's ``hooks`` block in ``.qoder/settings.json`` (project),
    ``.qoder/settings.local.json`` (local) or ``~/.qoder/settings.json`` (user)."""

    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return settings_path(scope, project_dir)

    def matcher(self, tools: ToolsData | None) -> str | None:
        return grouped.name_list_or_anchored(tools)


manifest = QoderManifest()
