"""The ``hooks`` block shape Claude Code uses, and the hosts that copied it (Gemini CLI,
Qwen Code): ``{"hooks": {EVENT: [{"matcher": ..., "hooks": [ENTRY, ...]}, ...]}}``.

Removing, adding, finding and comparing hookbus's entries in such a block, keeping every
entry, group and key of the user's. Which entries are hookbus's is the manifest's call
(``is_ours``: its command).
"""

from __future__ import annotations

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
    """The differences between installed entries and the generated ones, one short line
    each: ``missing: EVENT ...``, ``stale: EVENT ...``, ``changed: EVENT: what``."""
    have = installed(settings, is_ours)
    problems = []
    for event in sorted(
        set(have) | set(ours),
        key=lambda e: (e not in order, order.index(e) if e in order else 0, e),
    ):
        if event not in have:
            problems.append(f"missing: {event} is not registered, but an enabled handler wants it")
        elif event not in ours:
            problems.append(f"stale: {event} is registered but no enabled handler wants it")
        elif have[event] != ours[event]:
            problems.append(
                f"changed: {event}: {'; '.join(_differences(have[event], ours[event]))}"
            )
    return problems


def _differences(have: list[dict[str, Any]], want: list[dict[str, Any]]) -> list[str]:
    """What differs between two lists of one-entry groups, in a few words."""
    from hookbus.manifests.base import interpreter_of

    if len(have) != len(want):
        return [f"{len(have)} entries installed, {len(want)} expected"]
    found = []
    for old, new in zip(have, want, strict=True):
        if old.get("matcher") != new.get("matcher"):
            found.append(f"matcher {old.get('matcher')!r}, expected {new.get('matcher')!r}")
        old_entry, new_entry = old["hooks"][0], new["hooks"][0]
        if old_entry.get("timeout") != new_entry.get("timeout"):
            found.append(f"timeout {old_entry.get('timeout')}, expected {new_entry.get('timeout')}")
        old_cmd, new_cmd = str(old_entry.get("command")), str(new_entry.get("command"))
        if old_cmd != new_cmd:
            was, now = interpreter_of(old_cmd), interpreter_of(new_cmd)
            if was and now and was != now:
                found.append(f"runs {was[0]}, expected {now[0]}")
            elif old_cmd.partition("; fi;")[2] != new_cmd.partition("; fi;")[2]:
                found.append("its fallback differs (a fail-closed handler wants it now, or "
                             "no longer)")  # fmt: skip
            else:
                found.append("its command differs")
        rest = {k for k in {*old_entry, *new_entry} if k not in ("command", "timeout")}
        for key in sorted(k for k in rest if old_entry.get(k) != new_entry.get(k)):
            found.append(f"{key} {old_entry.get(key)!r}, expected {new_entry.get(key)!r}")
    return found or ["the entries differ"]
