"""Antigravity's ``hooks.json``: generate, verify, install, uninstall.

The file maps a **hook name** to that hook's events (the hooks page of
antigravity.google, as translated at gemini.meetcoding.cn/antigravity/hooks.html; the
orchestrator's installer; skillsaw's ``antigravity-hooks-valid`` rule)::

    {"hookbus": {"PreToolUse": [{"matcher": "^(?:run_command)$", "hooks": [ENTRY]}],
                 "PreInvocation": [ENTRY], "Stop": [ENTRY]}}

PreToolUse and PostToolUse take matcher groups (the matcher is a regular expression
over the tool name, ``""`` every tool); PreInvocation, PostInvocation and Stop take a
flat list of handlers (a matcher there is ignored). ``timeout`` is whole **seconds**
(an int32: a float drops the file). hookbus writes its own hook, named ``hookbus``;
every other hook of the user's, and every key, is kept. Our entries are recognised by
their command, wherever they stand.

agy parses the file with Go's strict ``encoding/json``: one bad byte silently drops
every hook in it, so the file is only ever rewritten whole, as JSON. Workspace hooks
(``.agents/hooks.json``) load only once the folder is trusted (orchestrator probe,
1.2.17); the user's are ``~/.gemini/config/hooks.json``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from hookbus.hosts.antigravity.driver import ALL_EVENTS, driver
from hookbus.hosts.antigravity.facts import FACTS
from hookbus.hosts.shared import grouped
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import CommandForm, Scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData, ToolsData

HOST = "antigravity"
#: The hook name hookbus's entries are written under.
NAME = "hookbus"
#: Events that take matcher groups; the others take a flat list of handlers.
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
SCOPES: dict[Scope, bool] = {"project": True, "user": False}
TRUST_NOTE = (
    "Antigravity loads a workspace's .agents/hooks.json only once the folder is trusted: "
    "accept the trust prompt when agy first starts there."
)


def hooks_path(scope: str, project_dir: str | None = None) -> str:
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".gemini", "config", "hooks.json")
    return os.path.join(project_dir or project_root(), ".agents", "hooks.json")


def _groups(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The named hooks of ``document`` that are objects (the rest is left alone)."""
    return {k: v for k, v in document.items() if isinstance(v, dict)}


class AntigravityManifest(grouped.GroupedManifest):
    """The ``hookbus`` hook of ``.agents/hooks.json`` (project) or
    ``~/.gemini/config/hooks.json`` (user)."""

    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return hooks_path(scope, project_dir)

    def matcher(self, tools: ToolsData | None) -> str | None:
        # Anchored, as the sidekick setup for agy writes them (^(write_to_file|...)$).
        return grouped.anchored(tools)

    def notes(self, hooks: grouped.Hooks) -> tuple[str, ...]:
        return (TRUST_NOTE,) if hooks else ()

    def generate(
        self, index: IndexData | None, python: str | None = None, form: CommandForm = "absolute"
    ) -> grouped.Hooks:
        """The ``hookbus`` hook's events: a tool event's groups always with a matcher
        (``""``: every tool), the lifecycle events as flat handler lists."""
        hooks: grouped.Hooks = {}
        for native, groups in super().generate(index, python, form).items():
            if native in TOOL_EVENTS:
                hooks[native] = [{"matcher": g.get("matcher", ""), **g} for g in groups]
            else:
                hooks[native] = [e for g in groups for e in g["hooks"]]
        return hooks

    def entries(self, hooks: grouped.Hooks) -> dict[str, Any]:
        return {NAME: hooks}

    def _grouped(self, events: Mapping[str, Any]) -> dict[str, Any]:
        """One hook's events in the shape :mod:`~hookbus.hosts.shared.grouped` reads: each
        flat handler as a group of one."""
        hooks = {}
        for native, items in events.items():
            if not isinstance(items, list):
                continue
            if native in TOOL_EVENTS:
                hooks[native] = items
            else:
                hooks[native] = [{"hooks": [e]} for e in items if isinstance(e, dict)]
        return {"hooks": hooks}

    def _installed(self, document: dict[str, Any]) -> grouped.Hooks:
        found: grouped.Hooks = {}
        for events in _groups(document).values():
            for native, groups in grouped.installed(self._grouped(events), self.is_ours).items():
                found.setdefault(native, []).extend(groups)
        return found

    def commands(self, document: dict[str, Any]) -> dict[str, list[str]]:
        return {
            native: [h["command"] for g in groups for h in g["hooks"]]
            for native, groups in self._installed(document).items()
        }

    def without_ours(self, document: dict[str, Any]) -> dict[str, Any]:
        result = dict(document)
        for name, events in _groups(document).items():
            kept: dict[str, Any] = {}
            for native, items in events.items():
                if native not in self.events or not isinstance(items, list):
                    kept[native] = items
                    continue
                if native in TOOL_EVENTS:
                    left = grouped.without_ours({"hooks": {native: items}}, self.is_ours)
                    rest = left.get("hooks", {}).get(native, [])
                else:
                    rest = [e for e in items if not self.is_ours(e)]
                if rest or not items:
                    kept[native] = rest
            if kept or not events:
                result[name] = kept
            else:
                result.pop(name)
        return result

    def merge(self, document: dict[str, Any], entries: Mapping[str, Any]) -> dict[str, Any]:
        result = self.without_ours(document)
        ours = dict(entries.get(NAME, {}))
        if not ours:
            return result
        mine = dict(result.get(NAME, {}))
        for native, items in ours.items():
            mine[native] = [*mine.get(native, []), *items]
        result[NAME] = mine
        return result

    def drift(self, document: dict[str, Any], entries: Mapping[str, Any]) -> list[str]:
        have = {"hooks": self._installed(document)}
        want = self._grouped(entries.get(NAME, {}))["hooks"]
        return grouped.drift(have, want, self.is_ours, self.events)

    def check(self, path: str, document: dict[str, Any]) -> None:
        from hookbus.bus.errors import HostConfigError

        for name, events in _groups(document).items():
            for native, items in events.items():
                if native in self.events and not isinstance(items, list):
                    raise HostConfigError(f"{path}: {name}.{native} is not a list; fix it, "
                                          "nothing changed")  # fmt: skip


manifest = AntigravityManifest()
