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

import json
import os
import re
import sys
from collections.abc import Mapping
from typing import Any

from hookbus.discover import find_project_config
from hookbus.drivers.claude import ALL_EVENTS, driver
from hookbus.hosts import HOSTS
from hookbus.manifests.base import (
    Document,
    Plan,
    Scope,
    hook_argv,
    is_hookbus_command,
    shell_command,
)
from hookbus.runtime.index import fail_closed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.runtime.index import IndexData, ToolsData

HOST = "claude"
#: Claude gives SessionEnd hooks 1.5 s in all; a timeout here would raise that budget for
#: every SessionEnd hook of the user's, so we register none and answer within it.
NO_TIMEOUT = {"SessionEnd"}
Hooks = dict[str, list[dict[str, Any]]]


def settings_path(scope: str, project_dir: str | None = None) -> str:
    """Claude's settings file for ``scope``: the user's, or the project's, whose root is
    the folder of its ``.hookbus.toml`` when one is found (install may run in a subfolder)."""
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".claude", "settings.json")
    if project_dir is None:
        config = find_project_config(os.getcwd())
        project_dir = os.path.dirname(config) if config else os.getcwd()
    return os.path.join(project_dir, ".claude", "settings.json")


def command(python: str, native: str, timeout: float | None, *, guarded: bool = False) -> str:
    """The hook command for ``native``: its fallback, should Python or hookbus be gone,
    refuses when ``guarded`` (a fail-closed handler wants the event), else it is Claude's
    no-opinion."""
    if guarded:
        fallback = driver.refusal(native, "hookbus could not run, and a fail-closed handler "
                                  "wants this event")  # fmt: skip
    else:
        fallback = driver.no_opinion(native)
    argv = hook_argv(python, HOST, native, timeout)
    return shell_command(argv, fallback, requires=(argv[2],))


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


def generate(index: IndexData | None, python: str | None = None) -> Hooks:
    """The hooks block for what the index subscribes to, in Claude's event order."""
    routes = index["routes"].get(HOST, {}) if index else {}
    budget = float(index["settings"].get("budget") or 5.0) if index else 5.0  # type: ignore[arg-type]
    timeout = HOSTS[HOST].timeout_value(budget + 5)
    python = python or sys.executable
    hooks: Hooks = {}
    for native in (n for n in ALL_EVENTS if n in routes):
        route = routes[native]
        guarded = bool(index and fail_closed([index["handlers"][i] for i in route["handlers"]]))
        entry: dict[str, Any] = {"type": "command"}
        if native in NO_TIMEOUT:
            entry["command"] = command(python, native, None, guarded=guarded)
        else:
            entry["command"] = command(python, native, timeout, guarded=guarded)
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


def read_settings(path: str) -> dict[str, Any]:
    """The settings file as a dict ({} when absent); refuses a file it cannot parse."""
    from hookbus.errors import HostConfigError
    from hookbus.manifests.base import read_json

    data = read_json(path)
    if not isinstance(data.get("hooks", {}), dict):
        raise HostConfigError(f"{path}: expected an object with a 'hooks' object; nothing changed")
    return data


def without_ours(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` with every hookbus entry removed (and groups/events emptied by that)."""
    result = dict(settings)
    hooks: Hooks = {}
    for event, groups in settings.get("hooks", {}).items():
        if not isinstance(groups, list):
            hooks[event] = groups
            continue
        kept_groups = []
        for group in groups:
            inner = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(inner, list):
                kept_groups.append(group)
                continue
            kept = [h for h in inner if not is_ours(h)]
            if kept:
                kept_groups.append({**group, "hooks": kept})
            elif len(kept) == len(inner):
                kept_groups.append(group)
        if kept_groups:
            hooks[event] = kept_groups
    if hooks:
        result["hooks"] = hooks
    else:
        result.pop("hooks", None)
    return result


def merged(settings: dict[str, Any], ours: Hooks) -> dict[str, Any]:
    """``settings`` with our current entries in place of any earlier ones of ours."""
    result = without_ours(settings)
    hooks = dict(result.get("hooks", {}))
    for event, groups in ours.items():
        hooks[event] = [*hooks.get(event, []), *groups]
    if hooks:
        result["hooks"] = hooks
    return result


def installed(settings: dict[str, Any]) -> Hooks:
    """Our entries as they stand in ``settings`` (one group per entry, like :func:`generate`)."""
    found: Hooks = {}
    for event, groups in settings.get("hooks", {}).items():
        for group in groups if isinstance(groups, list) else []:
            for entry in group.get("hooks", []) if isinstance(group, dict) else []:
                if is_ours(entry):
                    mine = {k: v for k, v in group.items() if k != "hooks"}
                    found.setdefault(event, []).append({**mine, "hooks": [entry]})
    return found


def drift(settings: dict[str, Any], ours: Hooks) -> list[str]:
    """Human-readable differences between installed entries and the generated ones."""
    have = installed(settings)
    problems = []
    for event in sorted(set(have) | set(ours), key=lambda e: (e not in ALL_EVENTS, e)):
        if event not in have:
            problems.append(f"missing: {event} {json.dumps(ours[event])}")
        elif event not in ours:
            problems.append(f"stale: {event} is registered but no enabled handler wants it")
        elif have[event] != ours[event]:
            problems.append(
                f"changed: {event} installed {json.dumps(have[event])}"
                f" != expected {json.dumps(ours[event])}"
            )
    return problems


class ClaudeManifest:
    """Claude Code's ``hooks`` block in ``.claude/settings.json`` (project) or
    ``~/.claude/settings.json`` (user)."""

    facts = HOSTS[HOST]

    def plan(self, index: IndexData | None, *, python: str, scope: Scope) -> Plan:
        hooks = generate(index, python)
        return Plan(documents=(Document(path=settings_path(scope), entries=hooks),))

    def merge(self, document: dict[str, Any], entries: Mapping[str, Any]) -> dict[str, Any]:
        return merged(document, dict(entries))

    def without_ours(self, document: dict[str, Any]) -> dict[str, Any]:
        return without_ours(document)

    def drift(self, document: dict[str, Any], entries: Mapping[str, Any]) -> list[str]:
        return drift(document, dict(entries))

    def read(self, path: str) -> dict[str, Any]:
        return read_settings(path)


manifest = ClaudeManifest()
