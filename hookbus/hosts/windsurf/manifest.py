"""Windsurf's ``hooks.json``: generate, verify, install, uninstall.

The vendor page (https://docs.windsurf.com/windsurf/cascade/hooks) gives the shape,
``{"hooks": {"pre_run_command": [{"command": ..., "show_output": true}]}}``: one flat
list of entries per event, with no matcher, no ``type`` and no timeout field, and the
files it merges, in order: the system's, the user's ``~/.codeium/windsurf/hooks.json``
and the workspace's ``.windsurf/hooks.json``. hookbus writes its entries into the user's
or the workspace's file, keeping every entry and key of theirs.

- No matcher: an entry runs on every call of its event, so only the events whose
  operation a handler wants are registered (``pre_run_command`` for a shell guard; the
  driver's ``event_tools``), and the bus filters MCP tools after decoding.
- No timeout: the page names no limit, so none is written; the command's ``--timeout``
  (the budget plus a margin) is hookbus's own bound.
- ``show_output`` is set where it applies, so that a handler's message reaches the
  Cascade panel; the page says the option "does not apply" to ``pre_user_prompt`` and
  the two response hooks, which get none.
- The JetBrains plugin's ``~/.codeium/hooks.json`` and the system file are left alone.
"""

from __future__ import annotations

import os
from typing import Any

from hookbus.hosts.shared import flat
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import Scope
from hookbus.hosts.windsurf.driver import ALL_EVENTS, SHOWN, driver
from hookbus.hosts.windsurf.facts import FACTS

HOST = "windsurf"
Entry = flat.Entry
#: The workspace's file is committed with it; the user's applies to every workspace.
SCOPES: dict[Scope, bool] = {"project": True, "user": False}


def hooks_path(scope: str, project_dir: str | None = None) -> str:
    """Windsurf's ``hooks.json`` for ``scope``."""
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".codeium", "windsurf", "hooks.json")
    return os.path.join(project_dir or project_root(), ".windsurf", "hooks.json")


class WindsurfManifest(flat.FlatManifest):
    """Windsurf's ``hooks.json`` (workspace or user), shared with the user's entries."""

    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return hooks_path(scope, project_dir)

    def timeouts(self, native: str, budget: float) -> tuple[float | None, float | None]:
        """The command's ``--timeout`` only: hooks.json has no timeout field."""
        return budget + 5, None

    def flat_entry(self, native: str, group: Entry, entry: Entry) -> Entry:
        mine: dict[str, Any] = {"command": entry["command"]}
        if native in SHOWN:
            mine["show_output"] = True
        return mine


manifest = WindsurfManifest()
