"""The ``hooks`` block shape Claude Code uses, and the hosts that copied it (Gemini CLI,
Qwen Code): ``{"hooks": {EVENT: [{"matcher": ..., "hooks": [ENTRY, ...]}, ...]}}``.

Removing, adding, finding and comparing hookbus's entries in such a block, keeping every
entry, group and key of the user's. Which entries are hookbus's is the manifest's call
(``is_ours``: its command).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData, RouteData, ToolsData
    from hookbus.hosts.shared.documents import Format
    from hookbus.hosts.shared.driver import BaseDriver
    from hookbus.hosts.shared.facts import HostFacts
    from hookbus.hosts.shared.manifest import CommandForm, Plan, Scope

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
    from hookbus.hosts.shared.manifest import interpreter_of

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


class GroupedManifest:
    """The manifest of a host whose settings hold a hooks block of this shape: generate,
    merge, remove, compare and check hookbus's entries. A host's manifest subclasses it
    with its facts, scopes, events and files, and overrides what it does differently:
    :meth:`path` (required), :meth:`matcher`, :meth:`timeouts`, :attr:`entry_fields`,
    :meth:`notes`.

    Only events (and tools, as a matcher) an enabled handler subscribes to are
    registered. A handler whose declaration is unknown (its module never loaded) counts as
    a guard until it loads: when one is configured (``install --force``), every event
    whose refusal is not a no-opinion is registered too, so that its refusal is in place.
    """

    facts: HostFacts
    scopes: Mapping[Scope, bool]
    #: The host's native events, in the order its settings are written and drift listed.
    events: Sequence[str]
    driver: BaseDriver
    #: Keys every entry carries beside ``type``, ``command`` and ``timeout``.
    entry_fields: ClassVar[Mapping[str, Any]] = {}
    #: The format of the file the hooks go in (Kimi's ``config.toml`` is TOML).
    document_format: ClassVar[Format] = "json"
    #: Its hooks are shell commands: the warm server's client is install's default.
    server_default: bool = True
    #: Its settings serve the projects of their scope only.
    every_project: bool = False

    def path(self, scope: Scope, project_dir: str | None) -> str:
        raise NotImplementedError

    def matcher(self, tools: ToolsData | None) -> str | None:
        """An anchored regex for an index route's tools; None registers every tool."""
        return anchored(tools)

    def timeouts(self, native: str, budget: float) -> tuple[float | None, float | None]:
        """(seconds for the command's ``--timeout``, the entry's ``timeout`` in the host's
        unit); None leaves one out. The host's limit is the budget plus a margin."""
        seconds = budget + 5
        return seconds, self.facts.timeout_value(seconds)

    def notes(self, hooks: Hooks) -> tuple[str, ...]:
        return ()

    def guard_fields(self, native: str) -> Mapping[str, Any]:
        """Keys an entry carries when a fail-closed handler wants ``native`` (Goose's
        ``on_failure``); none by default."""
        return {}

    def is_ours(self, entry: object) -> bool:
        from hookbus.hosts.shared.manifest import is_hookbus_command

        return isinstance(entry, dict) and is_hookbus_command(entry.get("command"), self.facts.name)

    def command(
        self,
        python: str,
        native: str,
        timeout: float | None,
        *,
        guarded: bool = False,
        form: CommandForm = "absolute",
    ) -> str:
        """The hook command for ``native``: its fallback, should Python or hookbus be gone,
        refuses when ``guarded`` (a fail-closed handler wants the event), else it is the
        host's no-opinion."""
        from hookbus.hosts.shared.manifest import fallback, hook_command

        answer = fallback(self.driver, native, guarded=guarded)
        return hook_command(form, python, self.facts.name, native, timeout, answer)

    def wanted(self, index: IndexData | None) -> list[tuple[str, RouteData, bool, float]]:
        """(native, its route, whether a fail-closed handler wants it, the budget) for each
        native event ``index`` subscribes to, in the host's event order."""
        return wanted(self.facts.name, self.events, index)

    def generate(
        self, index: IndexData | None, python: str | None = None, form: CommandForm = "absolute"
    ) -> Hooks:
        """The hooks block for what ``index`` subscribes to, in the host's event order."""
        import sys

        python = python or sys.executable
        hooks: Hooks = {}
        for native, route, guarded, budget in self.wanted(index):
            seconds, value = self.timeouts(native, budget)
            entry: dict[str, Any] = {"type": "command", **self.entry_fields}
            entry["command"] = self.command(python, native, seconds, guarded=guarded, form=form)
            if value is not None:
                entry["timeout"] = value
            if guarded:
                entry.update(self.guard_fields(native))
            pattern = self.matcher(route["tools"])
            group: dict[str, Any] = {"matcher": pattern} if pattern else {}
            group["hooks"] = [entry]
            hooks[native] = [group]
        return hooks

    def plan(
        self,
        index: IndexData | None,
        *,
        python: str,
        scope: Scope,
        form: CommandForm = "absolute",
        project_dir: str | None = None,
    ) -> Plan:
        from hookbus.hosts.shared.manifest import Document, Plan

        hooks = self.generate(index, python, form)
        document = Document(path=self.path(scope, project_dir), format=self.document_format,
                            entries=self.entries(hooks))  # fmt: skip
        return Plan(documents=(document,), notes=self.notes(hooks))

    def entries(self, hooks: Hooks) -> dict[str, Any]:
        """What the settings document's entries are: the hooks block itself (Antigravity
        nests it under a hook name of its own)."""
        return hooks

    def commands(self, document: dict[str, Any]) -> dict[str, list[str]]:
        return {
            event: [h["command"] for g in groups for h in g["hooks"]]
            for event, groups in installed(document, self.is_ours).items()
        }

    def merge(self, document: dict[str, Any], entries: Mapping[str, Any]) -> dict[str, Any]:
        return merged(document, dict(entries), self.is_ours)

    def without_ours(self, document: dict[str, Any]) -> dict[str, Any]:
        return without_ours(document, self.is_ours)

    def drift(self, document: dict[str, Any], entries: Mapping[str, Any]) -> list[str]:
        return drift(document, dict(entries), self.is_ours, self.events)

    def owned_paths(self, scope: Scope, project_dir: str | None = None) -> tuple[str, ...]:
        """None: a settings block is all these hosts need."""
        return ()

    def owned_top(self, scope: Scope, project_dir: str | None = None) -> str | None:
        """None: an owned file's folder and its parent are what install may have made."""
        return None

    def check(self, path: str, document: dict[str, Any]) -> None:
        from hookbus.bus.errors import HostConfigError

        hooks = document.get("hooks", {})
        if not isinstance(hooks, dict):
            raise HostConfigError(
                f"{path}: expected an object with a 'hooks' object; nothing changed"
            )
        for event, groups in hooks.items():
            # A list of matcher groups per event; anything else is a file hookbus does
            # not understand, and must not rearrange.
            if not isinstance(groups, list):
                raise HostConfigError(f"{path}: hooks.{event} is not a list of matcher "
                                      "groups; fix it, nothing changed")  # fmt: skip


def anchored(tools: ToolsData | None, *, to_end: bool = False) -> str | None:
    """A regex matching exactly an index route's tool names and prefixes, anchored (a
    host testing it unanchored must not catch ``NotebookEdit`` for ``Edit``); with
    ``to_end``, a prefix's alternative runs to the end too (``^mcp__.*$``). None for
    every tool."""
    import re

    if tools is None or tools.get("unknown"):
        return None
    names, prefixes = list(tools["names"]), list(tools["prefixes"])
    tail = ".*$" if to_end else ""
    alternatives = [f"^(?:{'|'.join(map(re.escape, names))})$"] if names else []
    alternatives += [f"^{re.escape(p)}{tail}" for p in prefixes]
    return "|".join(alternatives) or None


def name_list_or_anchored(tools: ToolsData | None) -> str | None:
    """A matcher in Claude Code's syntax, which Grok and Qoder copied: a string of
    letters, digits, ``_`` and ``|`` is a list of exact tool names, anything else an
    *unanchored* regex. So plain names stay a name list (``Bash|Edit``), and with
    prefixes it is an :func:`anchored` regex; None for every tool."""
    if tools is not None and not tools.get("unknown") and not tools["prefixes"]:
        return "|".join(tools["names"]) or None
    return anchored(tools)


def anchored_at_both_ends(tools: ToolsData | None) -> str | None:
    """A matcher for hosts that may match a regex in full (OpenHands) or may search it
    (Codex, which does not say): every alternative :func:`anchored` at both ends, a
    prefix running to the end, right either way; None for every tool."""
    return anchored(tools, to_end=True)


def project_root(start: str | None = None) -> str:
    """The project's root: the folder of its ``.hookbus.toml`` when one is found (install
    may run in a subfolder), else the working folder."""
    import os

    from hookbus.local.discover import find_project_config

    start = start or os.getcwd()
    config = find_project_config(start)
    return os.path.dirname(config) if config else start


def wanted(
    host: str, events: Iterable[str], index: IndexData | None
) -> list[tuple[str, RouteData, bool, float]]:
    """(native, its route, whether a fail-closed handler wants it, the budget) for each of
    ``events`` that ``index`` subscribes ``host`` to, in that order. A handler whose
    declaration is unknown (it did not load) counts as a guard on every refusable event."""
    from hookbus.bus.subscriptions import fail_closed

    routes = dict(index["routes"].get(host, {})) if index else {}
    unknown = [h for h in index["handlers"] if h["subscription"] is None] if index else []
    if index and unknown:
        for native in index["refusals"].get(host, {}):
            routes.setdefault(native, {"handlers": [], "tools": None})
    budget = float(index["settings"].get("budget") or 5.0) if index else 5.0  # type: ignore[arg-type]
    found = []
    for native in (n for n in events if n in routes):
        route = routes[native]
        wanting = [index["handlers"][i] for i in route["handlers"]] if index else []
        found.append((native, route, bool(fail_closed(wanting + unknown)), budget))
    return found
