"""Cursor's ``hooks.json``: generate, verify, install, uninstall.

Cursor reads ``<project>/.cursor/hooks.json`` (in a trusted workspace; hooks run with
the project root as their folder) and the user's ``~/.cursor/hooks.json``
(cursor.com/docs/hooks). The file is the user's as well as ours: hookbus merges its
entries into it and keeps every entry and key of theirs. The shape is Cursor's own:
``{"version": 1, "hooks": {"preToolUse": [{"type": "command", "command": ...,
"timeout": ...}]}}``, camelCase events, ``timeout`` in whole seconds.

Cursor is strict about the file: one event name it does not know disables *every* hook
in it, silently (receptron/mulmoterminal#2064, cursor-agent 2026.09.10). So hookbus writes
only keys Cursor documents, and events from the driver's list of the documented ones.
It writes no ``matcher``: the docs do not say how one is compared (a regex? anchored?),
and on some events it is compared with the command or the subagent type, not a tool;
the subscription index filters tools itself, at the cost of a hook process per call.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from hookbus.hosts.cursor.driver import ALL_EVENTS, driver
from hookbus.hosts.cursor.facts import FACTS
from hookbus.hosts.shared import flat
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import Scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from hookbus.bus.subscriptions import IndexData
    from hookbus.hosts.shared.manifest import CommandForm, Plan

HOST = "cursor"
Hooks = flat.Hooks
SCOPES: dict[Scope, bool] = {"project": True, "user": False}
#: The keys of a hooks file and of an entry that Cursor documents (cursor.com/docs/hooks).
FILE_KEYS = frozenset(("version", "hooks"))
ENTRY_KEYS = frozenset(("command", "type", "timeout", "matcher", "failClosed", "loop_limit",
                        "prompt", "model"))  # fmt: skip
NOTE = "Cursor runs a project's hooks only in a trusted workspace."
#: Said only where hookbus is installed for Claude too (:func:`claude_installed`).
CLAUDE_NOTE = (
    "Cursor also runs the hooks of Claude's settings ({path}): hookbus's Claude command "
    "there leaves each event Cursor's own entry handles to it."
)


def hooks_path(scope: str, project_dir: str | None = None) -> str:
    # The same places a Claude command run by Cursor looks for this file to stand aside
    # (hookbus.hosts.shared.native_install.cursor_files).
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".cursor", "hooks.json")
    return os.path.join(project_dir or project_root(), ".cursor", "hooks.json")


def claude_installed(project_dir: str | None) -> str | None:
    """The first of Claude's settings files Cursor also runs the hooks of (cursor.com/docs/
    hooks: the project's, its local one, the user's) that holds hookbus's entries; None
    when hookbus is not installed for Claude (a note about it would only puzzle)."""
    import sys

    from hookbus import hosts
    from hookbus.bus.errors import HostConfigError
    from hookbus.hosts.shared import documents

    # Claude's manifest, asked of the registry (a host's folder imports no other host's):
    # its settings file in each of its scopes is the document its plan writes there.
    claude = hosts.manifest("claude")
    for scope in claude.scopes:
        plan = claude.plan(None, python=sys.executable, scope=scope, project_dir=project_dir)
        for document in plan.documents:
            try:
                _, settings = documents.read(document.path, document.format)
            except HostConfigError:
                continue
            if claude.commands(settings):
                return document.path
    return None


class CursorManifest(flat.FlatManifest):
    """Cursor's ``hooks.json``, shared with the user's own entries."""

    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver
    command_key = "command"
    header: ClassVar[Mapping[str, Any]] = {"version": 1}

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return hooks_path(scope, project_dir)

    def plan(
        self,
        index: IndexData | None,
        *,
        python: str,
        scope: Scope,
        form: CommandForm = "absolute",
        project_dir: str | None = None,
    ) -> Plan:
        import msgspec

        plan = super().plan(index, python=python, scope=scope, form=form, project_dir=project_dir)
        if not plan.notes:
            return plan
        claude = claude_installed(project_dir)
        if claude is None:
            return plan
        return msgspec.structs.replace(plan, notes=(*plan.notes, CLAUDE_NOTE.format(path=claude)))

    def notes(self, hooks: Hooks) -> tuple[str, ...]:
        return (NOTE,) if hooks else ()

    def flat_entry(self, native: str, group: flat.Entry, entry: flat.Entry) -> flat.Entry:
        # No matcher (see the module docstring): the command runs for every tool.
        mine: flat.Entry = {"type": "command", "command": entry["command"]}
        if "timeout" in entry:
            mine["timeout"] = entry["timeout"]
        return mine


manifest = CursorManifest()
