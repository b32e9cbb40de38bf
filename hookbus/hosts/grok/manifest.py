"""Grok Build's ``.grok/hooks/hookbus.json``: generate, verify, install, uninstall.

Grok loads every ``*.json`` of the user's ``~/.grok/hooks/`` (always) and of the
project's ``<workspace>/.grok/hooks/`` (only once the folder is trusted: ``/hooks-trust``
or ``--trust``; untrusted project hooks are "silently skipped"), and merges them
(``xai-org/grok-build@19d42e3`` ``xai-grok-pager/docs/user-guide/10-hooks.md``, "Hook
Locations"). hookbus writes a file of its own there, ``hookbus.json``, and nothing
else: the user's hook files are never opened, and uninstall removes ours.

The shape is Claude Code's grouped one (:mod:`hookbus.hosts.shared.grouped`), keyed by the
snake_case event names Grok sends (``pre_tool_use``; ``event.rs`` accepts that
spelling as a key), ``timeout`` in whole seconds. A matcher of letters, digits, ``_``
and ``|`` is a list of exact tool names; anything else is an unanchored regex
(``matcher.rs``), so the names stay a plain list and prefixes (MCP's ``server__``)
become an anchored regex, as Claude's are.
"""

from __future__ import annotations

import os

from hookbus.hosts.grok.driver import ALL_EVENTS, driver
from hookbus.hosts.grok.facts import FACTS
from hookbus.hosts.shared import grouped
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import Scope
from hookbus.hosts.shared.native_install import GROK_FILE, grok_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import ToolsData

HOST = "grok"
SCOPES: dict[Scope, bool] = {"project": True, "user": False}
TRUST_NOTE = (
    "Grok runs a project's hooks only in a trusted folder: run /hooks-trust in Grok (or "
    "start it with --trust), or install with --scope user."
)


def hooks_path(scope: str, project_dir: str | None = None) -> str:
    # The same places a Claude command run by Grok looks for this file to stand aside.
    if scope == "user":
        return os.path.join(grok_home(os.environ), "hooks", GROK_FILE)
    return os.path.join(project_dir or project_root(), ".grok", "hooks", GROK_FILE)


class GrokManifest(grouped.GroupedManifest):
    """Grok's ``hookbus.json``, a file hookbus owns whole, in the grouped shape."""

    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return hooks_path(scope, project_dir)

    def matcher(self, tools: ToolsData | None) -> str | None:
        return grouped.name_list_or_anchored(tools)

    def notes(self, hooks: grouped.Hooks) -> tuple[str, ...]:
        return (TRUST_NOTE,) if hooks else ()


manifest = GrokManifest()
