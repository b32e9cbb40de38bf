"""The ``hooks`` block shape Claude Code uses, and the hosts that copied it (Gemini CLI,
Qwen Code): ``{"hooks": {EVENT: [{"matcher": ..., "hooks": [ENTRY, ...]}, ...]}}``.

Removing, adding, finding and comparing hookbus's entries in such a block, keeping every
entry, group and key of the user's. Which entries are hookbus's is the manifest's call
(``is_ours``: its command).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

Hooks = dict[str, list[dict[str, Any]]]
IsOurs = Callable[[object], bool]


def without_ours(settings: dict[str, Any], is_ours: IsOurs) -> dict[str, Any]:
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


def merged(settings: dict[str, Any], ours: Hooks, is_ours: IsOurs) -> dict[str, Any]:
    """``settings`` with our current entries in place of any earlier ones of ours."""
    result = without_ours(settings, is_ours)
    hooks = dict(result.get("hooks", {}))
    for event, groups in ours.items():
        hooks[event] = [*hooks.get(event, []), *groups]
    if hooks:
        result["hooks"] = hooks
    return result


def installed(settings: dict[str, Any], is_ours: IsOurs) -> Hooks:
    """Our entries as they stand in ``settings``, one group per entry (as manifests
    generate them)."""
    found: Hooks = {}
    for event, groups in settings.get("hooks", {}).items():
        for group in groups if isinstance(groups, list) else []:
            for entry in group.get("hooks", []) if isinstance(group, dict) else []:
                if is_ours(entry):
                    mine = {k: v for k, v in group.items() if k != "hooks"}
                    found.setdefault(event, []).append({**mine, "hooks": [entry]})
    return found


def drift(
    settings: dict[str, Any], ours: Hooks, is_ours: IsOurs, order: Sequence[str]
) -> list[str]:
    """Human-readable differences between installed entries and the generated ones."""
    have = installed(settings, is_ours)
    problems = []
    for event in sorted(
        set(have) | set(ours),
        key=lambda e: (e not in order, order.index(e) if e in order else 0, e),
    ):
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
