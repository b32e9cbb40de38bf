"""The ``hooks`` block of Claude Code's settings: generate, verify, install, uninstall.

Only events (and, where Claude's matcher allows, tool names) that an enabled handler
subscribes to are registered, so Claude starts no hookbus process for an event nobody
wants. Our entries are recognised by their command (``... hookbus run --host claude``);
every other entry and key of the user's file is kept as it is.

Matchers (Claude hooks reference): a string of letters, digits, ``_``, ``|`` is a list of
exact tool names; anything else is an *unanchored* JavaScript regex, so regexes we write
are anchored (``Edit`` must not catch ``NotebookEdit`` by accident).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from typing import Any

from hookbus.discover import find_project_config
from hookbus.drivers.claude import ALL_EVENTS, driver
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

HOST = "claude"
#: Claude gives SessionEnd hooks 1.5 s in all; a timeout here would raise that budget for
#: every SessionEnd hook of the user's, so we register none and answer within it.
NO_TIMEOUT = {"SessionEnd"}
Hooks = grouped.Hooks


#: Claude's settings files (Claude Code settings docs): the project's, committed and
#: shared with the team; the project's local one, which Claude adds to .gitignore; the
#: user's, for every project.
SCOPES: dict[Scope, bool] = {"project": True, "local": False, "user": False}
FILES = {"project": "settings.json", "local": "settings.local.json"}


def project_root(start: str | None = None) -> str:
    """The project's root: the folder of its ``.hookbus.toml`` when one is found (install
    may run in a subfolder), else the working folder."""
    start = start or os.getcwd()
    config = find_project_config(start)
    return os.path.dirname(config) if config else start


def settings_path(scope: str, project_dir: str | None = None) -> str:
    """Claude's settings file for ``scope``."""
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".claude", "settings.json")
    return os.path.join(project_dir or project_root(), ".claude", FILES[scope])


def command(
    python: str,
    native: str,
    timeout: float | None,
    *,
    guarded: bool = False,
    form: CommandForm = "absolute",
) -> str:
    """The hook command for ``native``: its fallback, should Python or hookbus be gone,
    refuses when ``guarded`` (a fail-closed handler wants the event), else it is Claude's
    no-opinion."""
    if guarded:
        fallback = driver.refusal(native, "hookbus could not run, and a fail-closed handler "
                                  "wants this event")  # fmt: skip
    else:
        fallback = driver.no_opinion(native)
    return hook_command(form, python, HOST, native, timeout, fallback)


def matcher(tools: ToolsData | None) -> str | None:
    """Claude matcher for an index route's tools; None registers the event for every tool."""
    if tools is None or tools.get("unknown"):
        return None
    names, prefixes = list(tools["names"]), list(tools["prefixes"])
    if not prefixes:
        return "|".join(names)
    alternatives = [f"^(?:{'|'.join(map(re.escape, names))})$"] if names else []
    alternatives += [f"^{re.escape(p)}" for p in prefixes]
    return "|".join(alternatives)


def generate(
    index: IndexData | None, python: str | None = None, form: CommandForm = "absolute"
) -> Hooks:
    """The hooks block for what the index subscribes to, in Claude's event order.

    A handler whose declaration is unknown (its module never loaded) counts as a guard
    until it loads: when one is configured (``install --force``), every event whose
    refusal is not a no-opinion is registered too, so that its refusal is in place.
    """
    routes = dict(index["routes"].get(HOST, {})) if index else {}
    if index and any(h["subscription"] is None for h in index["handlers"]):
        for native in index["refusals"].get(HOST, {}):
            routes.setdefault(native, {"handlers": [], "tools": None})
    budget = float(index["settings"].get("budget") or 5.0) if index else 5.0  # type: ignore[arg-type]
    timeout = HOSTS[HOST].timeout_value(budget + 5)
    python = python or sys.executable
    hooks: Hooks = {}
    for native in (n for n in ALL_EVENTS if n in routes):
        route = routes[native]
        unknown = [h for h in index["handlers"] if h["subscription"] is None] if index else []
        wanting = [index["handlers"][i] for i in route["handlers"]] if index else []
        guarded = bool(fail_closed(wanting + unknown))
        entry: dict[str, Any] = {"type": "command"}
        if native in NO_TIMEOUT:
            entry["command"] = command(python, native, None, guarded=guarded, form=form)
        else:
            entry["command"] = command(python, native, timeout, guarded=guarded, form=form)
            entry["timeout"] = timeout
        group: dict[str, Any] = {}
        pattern = matcher(route["tools"])
        if pattern:
            group["matcher"] = pattern
        group["hooks"] = [entry]
        hooks[native] = [group]
    return hooks


def is_ours(entry: object) -> bool:
    return isinstance(entry, dict) and is_hookbus_command(entry.get("command"), HOST)


class ClaudeManifest:
    """Claude Code's ``hooks`` block in ``.claude/settings.json`` (project) or
    ``~/.claude/settings.json`` (user)."""

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
        hooks = generate(index, python, form)
        path = settings_path(scope, project_dir)
        return Plan(documents=(Document(path=path, entries=hooks),))

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
            # Claude reads a list of matcher groups per event; anything else is a file
            # hookbus does not understand, and must not rearrange.
            if not isinstance(groups, list):
                raise HostConfigError(f"{path}: hooks.{event} is not a list of matcher "
                                      "groups; fix it, nothing changed")  # fmt: skip


manifest = ClaudeManifest()
