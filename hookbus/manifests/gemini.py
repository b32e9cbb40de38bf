"""The ``hooks`` block of Gemini CLI's settings: generate, verify, install, uninstall.

Gemini copied Claude Code's shape (``{"hooks": {EVENT: [{"matcher", "hooks": [...]}]}}``,
handled by :mod:`hookbus.manifests.grouped`), with three differences that matter here
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
import re
import sys
from collections.abc import Mapping
from typing import Any

from hookbus.discover import find_project_config
from hookbus.drivers.gemini import ALL_EVENTS, driver
from hookbus.errors import HostConfigError
from hookbus.hosts import HOSTS
from hookbus.manifests import grouped
from hookbus.manifests.base import (
    CommandForm,
    Document,
    Plan,
    Scope,
    hook_command,
    is_hookbus_command,
)
from hookbus.runtime.index import fail_closed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.runtime.index import IndexData, ToolsData

HOST = "gemini"
Hooks = grouped.Hooks
#: Gemini's settings files (docs/cli/settings.md): the project's, committed and shared;
#: the user's, for every project.
SCOPES: dict[Scope, bool] = {"project": True, "user": False}


def settings_path(scope: str, project_dir: str | None = None) -> str:
    """Gemini's settings file for ``scope``: the project's is in the folder of its
    ``.hookbus.toml`` when one is found (install may run in a subfolder)."""
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".gemini", "settings.json")
    if project_dir is None:
        config = find_project_config(os.getcwd())
        project_dir = os.path.dirname(config) if config else os.getcwd()
    return os.path.join(project_dir, ".gemini", "settings.json")


def matcher(tools: ToolsData | None) -> str | None:
    """An anchored regex for an index route's tools; None matches every tool."""
    if tools is None or tools.get("unknown"):
        return None
    names, prefixes = list(tools["names"]), list(tools["prefixes"])
    alternatives = [f"^(?:{'|'.join(map(re.escape, names))})$"] if names else []
    alternatives += [f"^{re.escape(p)}" for p in prefixes]
    return "|".join(alternatives) or None


def generate(
    index: IndexData | None, python: str | None = None, form: CommandForm = "absolute"
) -> Hooks:
    """The hooks block for what the index subscribes to, in Gemini's event order (a
    handler that never loaded counts as a guard: every event it could refuse is
    registered, as for Claude)."""
    routes = dict(index["routes"].get(HOST, {})) if index else {}
    unknown = [h for h in index["handlers"] if h["subscription"] is None] if index else []
    if unknown and index:
        for native in index["refusals"].get(HOST, {}):
            routes.setdefault(native, {"handlers": [], "tools": None})
    budget = float(index["settings"].get("budget") or 5.0) if index else 5.0  # type: ignore[arg-type]
    seconds = budget + 5
    python = python or sys.executable
    hooks: Hooks = {}
    for native in (n for n in ALL_EVENTS if n in routes):
        route = routes[native]
        wanting = [index["handlers"][i] for i in route["handlers"]] if index else []
        if fail_closed(wanting + unknown):
            why = "hookbus could not run, and a fail-closed handler wants this event"
            fallback = driver.refusal(native, why)
        else:
            fallback = driver.no_opinion(native)
        command = hook_command(form, python, HOST, native, seconds, fallback)
        entry = {"type": "command", "name": "hookbus", "command": command,
                 "timeout": HOSTS[HOST].timeout_value(seconds)}  # fmt: skip
        pattern = matcher(route["tools"])
        group: dict[str, Any] = {"matcher": pattern} if pattern else {}
        group["hooks"] = [entry]
        hooks[native] = [group]
    return hooks


def is_ours(entry: object) -> bool:
    return isinstance(entry, dict) and is_hookbus_command(entry.get("command"), HOST)


class GeminiManifest:
    """Gemini CLI's ``hooks`` block in ``.gemini/settings.json`` (project) or
    ``~/.gemini/settings.json`` (user)."""

    facts = HOSTS[HOST]
    scopes = SCOPES

    def plan(
        self,
        index: IndexData | None,
        *,
        python: str,
        scope: Scope,
        form: CommandForm = "absolute",
        project_dir: str | None = None,
    ) -> Plan:
        path = settings_path(scope, project_dir)
        return Plan(documents=(Document(path=path, entries=generate(index, python, form)),))

    def commands(self, document: dict[str, Any]) -> dict[str, list[str]]:
        return {
            event: [h["command"] for g in groups for h in g["hooks"]]
            for event, groups in grouped.installed(document, is_ours).items()
        }

    def merge(self, document: dict[str, Any], entries: Mapping[str, Any]) -> dict[str, Any]:
        return grouped.merged(document, dict(entries), is_ours)

    def without_ours(self, document: dict[str, Any]) -> dict[str, Any]:
        return grouped.without_ours(document, is_ours)

    def drift(self, document: dict[str, Any], entries: Mapping[str, Any]) -> list[str]:
        return grouped.drift(document, dict(entries), is_ours, ALL_EVENTS)

    def check(self, path: str, document: dict[str, Any]) -> None:
        hooks = document.get("hooks", {})
        if not isinstance(hooks, dict):
            raise HostConfigError(
                f"{path}: expected an object with a 'hooks' object; nothing changed"
            )
        for event, groups in hooks.items():
            # Gemini reads a list of hook definitions per event; anything else is a file
            # hookbus does not understand, and must not rearrange.
            if not isinstance(groups, list):
                raise HostConfigError(f"{path}: hooks.{event} is not a list of hook "
                                      "definitions; fix it, nothing changed")  # fmt: skip


manifest = GeminiManifest()
