"""Kiro's hook file ``.kiro/hooks/hookbus.json``: generate, verify, install, uninstall.

Kiro has two places for hooks. The CLI's agent configuration embeds them per agent
(``.kiro/agents/<agent>.json``, ``hooks: {preToolUse: [{command, matcher, timeout_ms}]}``;
kiro.dev/docs/cli/hooks), and which of the user's agent files is "theirs" is their
choice, one per agent, so hookbus does not edit them (``docs/hosts/kiro.md`` gives the
entry to paste; the driver reads those payloads). The hook files are workspace-wide:
every ``*.json`` in the project's ``.kiro/hooks/`` or the user's ``~/.kiro/hooks/``,
``{"version": "v1", "hooks": [{name, trigger, matcher, action: {type: "command",
command}, timeout, enabled}]}``, read by the IDE 1.x and by the CLI's V3 sessions "across
all agents" (kiro.dev/docs/cli/v3/hooks; the user's folder since CLI 2.13). So hookbus
writes a file of its own there and owns it whole (:mod:`hookbus.hosts.shared.owned`), like
Cline's hook scripts: each hook's ``name`` carries
:data:`~hookbus.hosts.shared.manifest.OWNED_MARK`, a user's ``hookbus.json`` is never replaced.

Triggers are PascalCase; ``timeout`` is whole seconds; the matcher is a regex over the
tool name, ours anchored and of exact built-in ids (``^(?:fs_read|read)$``, never a bare
``read`` that would catch ``@notes/read_page``), MCP servers as ``^@server/``.
"""

from __future__ import annotations

import json
import os
from typing import Any

from hookbus.hosts.kiro.driver import FILE_EVENTS, driver
from hookbus.hosts.kiro.facts import FACTS
from hookbus.hosts.shared import grouped
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import OWNED_MARK, CommandForm, Scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData
    from hookbus.hosts.shared.manifest import Plan

HOST = "kiro"
FILE = "hookbus.json"
#: The project's folder is committed with it; the user's is theirs alone.
SCOPES: dict[Scope, bool] = {"project": True, "user": False}


def hooks_path(scope: str, project_dir: str | None = None) -> str:
    """Kiro's hook file of hookbus for ``scope``."""
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".kiro", "hooks", FILE)
    return os.path.join(project_dir or project_root(), ".kiro", "hooks", FILE)


def hook_file(hooks: grouped.Hooks) -> str:
    """The hook file for a generated hooks block: one command hook per event."""
    entries: list[dict[str, Any]] = []
    for native, groups in hooks.items():
        for group in groups:
            entry = group["hooks"][0]
            mine: dict[str, Any] = {"name": f"hookbus {native} ({OWNED_MARK})",
                                    "trigger": native}  # fmt: skip
            if "matcher" in group:
                mine["matcher"] = group["matcher"]
            mine["action"] = {"type": "command", "command": entry["command"]}
            if "timeout" in entry:
                mine["timeout"] = entry["timeout"]
            mine["enabled"] = True
            entries.append(mine)
    return json.dumps({"version": "v1", "hooks": entries}, indent=2) + "\n"


class KiroManifest(grouped.GroupedManifest):
    """hookbus's own ``hookbus.json`` in ``.kiro/hooks/`` (project) or ``~/.kiro/hooks/``
    (user)."""

    facts = FACTS
    scopes = SCOPES
    events = FILE_EVENTS
    driver = driver

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
        from hookbus.hosts.shared.manifest import OwnedFile, Plan

        hooks = self.generate(index, python, form)
        if not hooks:
            return Plan()
        owned = OwnedFile(path=self.path(scope, project_dir), text=hook_file(hooks))
        return Plan(owned=(owned,))

    def owned_paths(self, scope: Scope, project_dir: str | None = None) -> tuple[str, ...]:
        return (self.path(scope, project_dir),)


manifest = KiroManifest()
