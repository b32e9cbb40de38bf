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
import math
import os
import re
import shlex
import sys
from typing import Any

from hookbus.drivers.claude import ALL_EVENTS
from hookbus.errors import HostConfigError
from hookbus.locations import find_project_config

HOST = "claude"
MARK = "hookbus run --host claude"
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


def command(python: str, timeout: int | None) -> str:
    # -P: the hook runs in the agent's working folder, whose files (a json.py, a token.py)
    # must not shadow the standard library or hookbus itself.
    parts = [shlex.quote(python), "-P", "-m", "hookbus", "run", "--host", HOST]
    if timeout is not None:
        parts += ["--timeout", str(timeout)]
    return " ".join(parts)


def matcher(tools: dict[str, Any] | None) -> str | None:
    """Claude matcher for an index route's tools; None registers the event for every tool."""
    if tools is None or tools.get("unknown"):
        return None
    names, prefixes = list(tools["names"]), list(tools["prefixes"])
    if not prefixes:
        return "|".join(names)
    alternatives = [f"^(?:{'|'.join(map(re.escape, names))})$"] if names else []
    alternatives += [f"^{re.escape(p)}" for p in prefixes]
    return "|".join(alternatives)


def generate(index: dict[str, Any] | None, python: str | None = None) -> Hooks:
    """The hooks block for what the index subscribes to, in Claude's event order."""
    routes = (index or {}).get("routes", {}).get(HOST, {})
    budget = float((index or {}).get("settings", {}).get("budget") or 5.0)
    timeout = math.ceil(budget) + 5
    python = python or sys.executable
    hooks: Hooks = {}
    for native in (n for n in ALL_EVENTS if n in routes):
        entry: dict[str, Any] = {"type": "command"}
        if native in NO_TIMEOUT:
            entry["command"] = command(python, None)
        else:
            entry["command"] = command(python, timeout)
            entry["timeout"] = timeout
        group: dict[str, Any] = {}
        pattern = matcher(routes[native]["tools"])
        if pattern:
            group["matcher"] = pattern
        group["hooks"] = [entry]
        hooks[native] = [group]
    return hooks


def is_ours(entry: object) -> bool:
    return isinstance(entry, dict) and MARK in str(entry.get("command", ""))


def read_settings(path: str) -> dict[str, Any]:
    """The settings file as a dict ({} when absent); refuses a file it cannot parse."""
    try:
        with open(path, "rb") as f:
            text = f.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise HostConfigError(f"{path}: cannot read it ({exc}); nothing changed") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise HostConfigError(
            f"{path}: not valid JSON ({exc}); fix or move it, hookbus will not overwrite it"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("hooks", {}), dict):
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


def dump(settings: dict[str, Any]) -> str:
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def write_atomically(path: str, text: str) -> str | None:
    """Replace ``path`` with ``text`` in one rename, keeping a backup; the backup's path.
    A symlinked settings file (dotfiles) keeps its link: its target is what is replaced."""
    path = os.path.realpath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    backup = None
    if os.path.exists(path):
        backup = f"{path}.hookbus-backup"
        with open(path, "rb") as src, open(backup, "wb") as dst:
            dst.write(src.read())
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    if os.path.exists(path):
        os.chmod(tmp, os.stat(path).st_mode & 0o777)
    os.replace(tmp, path)
    return backup
