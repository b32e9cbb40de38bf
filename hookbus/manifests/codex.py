"""Codex CLI's ``hooks.json``: generate, verify, install, uninstall.

Codex reads a ``hooks.json`` beside each of its configuration layers (Codex hooks docs;
``codex-rs/hooks/src/engine/discovery.rs``), in Claude's grouped shape: the project's
``<project>/.codex/hooks.json`` (loaded only once the project is trusted) and the user's
``$CODEX_HOME/hooks.json`` (``~/.codex`` by default). hookbus writes those files rather
than the ``[hooks]`` tables of ``config.toml``, which also holds the user's model
provider, keys and trust decisions. Only events an enabled handler subscribes to are
registered; our entries are recognised by their command, every other entry is kept.

Codex runs a hook only once the user trusted it: a new or changed entry is skipped,
silently, until it is reviewed in ``/hooks``. hookbus never approves its own hooks; the
plan's notes say so.

Matchers are regexes (a bare name matches exactly; whether a regex is anchored is not
documented), so the ones written here are anchored at both ends: right either way.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from typing import Any

from hookbus.discover import find_project_config
from hookbus.drivers.codex import ALL_EVENTS, driver
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

HOST = "codex"
Hooks = grouped.Hooks

#: The project's file is committed and shared; the user's is theirs alone. Codex has no
#: local (uncommitted) project file.
SCOPES: dict[Scope, bool] = {"project": True, "user": False}
TRUST_NOTE = (
    "Codex runs new or changed hooks only once you trust them: open Codex, run /hooks "
    "and trust the hookbus entries (hookbus never approves its own hooks). Project hooks "
    "load only in a trusted project."
)


def project_root(start: str | None = None) -> str:
    """The project's root: the folder of its ``.hookbus.toml`` when one is found, else the
    working folder."""
    start = start or os.getcwd()
    config = find_project_config(start)
    return os.path.dirname(config) if config else start


def codex_home() -> str:
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def hooks_path(scope: str, project_dir: str | None = None) -> str:
    """Codex's ``hooks.json`` for ``scope``."""
    if scope == "user":
        return os.path.join(codex_home(), "hooks.json")
    return os.path.join(project_dir or project_root(), ".codex", "hooks.json")


def command(
    python: str,
    native: str,
    timeout: float | None,
    *,
    guarded: bool = False,
    form: CommandForm = "absolute",
) -> str:
    """The hook command for ``native``; its fallback refuses when ``guarded``, else it is
    Codex's no-opinion (empty stdout)."""
    if guarded:
        fallback = driver.refusal(native, "hookbus could not run, and a fail-closed handler "
                                  "wants this event")  # fmt: skip
    else:
        fallback = driver.no_opinion(native)
    return hook_command(form, python, HOST, native, timeout, fallback)


def matcher(tools: ToolsData | None) -> str | None:
    """An anchored Codex matcher for an index route's tools; None: every tool."""
    if tools is None or tools.get("unknown"):
        return None
    names, prefixes = list(tools["names"]), list(tools["prefixes"])
    alternatives = [f"^(?:{'|'.join(map(re.escape, names))})$"] if names else []
    alternatives += [f"^{re.escape(p)}.*$" for p in prefixes]
    return "|".join(alternatives)


def generate(
    index: IndexData | None, python: str | None = None, form: CommandForm = "absolute"
) -> Hooks:
    """The hooks block for what the index subscribes to, in Codex's event order; a handler
    whose declaration is unknown counts as a guard (see the Claude manifest)."""
    routes = dict(index["routes"].get(HOST, {})) if index else {}
    if index and any(h["subscription"] is None for h in index["handlers"]):
        for native in index["refusals"].get(HOST, {}):
            routes.setdefault(native, {"handlers": [], "tools": None})
    budget = float(index["settings"].get("budget") or 5.0) if index else 5.0  # type: ignore[arg-type]
    facts = HOSTS[HOST]
    python = python or sys.executable
    hooks: Hooks = {}
    for native in (n for n in ALL_EVENTS if n in routes):
        route = routes[native]
        unknown = [h for h in index["handlers"] if h["subscription"] is None] if index else []
        wanting = [index["handlers"][i] for i in route["handlers"]] if index else []
        guarded = bool(fail_closed(wanting + unknown))
        # Whole seconds; SessionEnd and Interrupt are clamped by Codex to 3 s anyway.
        timeout = min(
            facts.timeout_value(budget + 5), facts.timeout_value(facts.timeout_for(native))
        )
        entry = {"type": "command",
                 "command": command(python, native, timeout, guarded=guarded, form=form),
                 "timeout": timeout}  # fmt: skip
        group: dict[str, Any] = {}
        pattern = matcher(route["tools"])
        if pattern:
            group["matcher"] = pattern
        group["hooks"] = [entry]
        hooks[native] = [group]
    return hooks


def is_ours(entry: object) -> bool:
    return isinstance(entry, dict) and is_hookbus_command(entry.get("command"), HOST)


class CodexManifest:
    """Codex's ``.codex/hooks.json`` (project) or ``$CODEX_HOME/hooks.json`` (user)."""

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
        path = hooks_path(scope, project_dir)
        notes = (TRUST_NOTE,) if hooks else ()
        return Plan(documents=(Document(path=path, entries=hooks),), notes=notes)

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
            if not isinstance(groups, list):
                raise HostConfigError(f"{path}: hooks.{event} is not a list of matcher "
                                      "groups; fix it, nothing changed")  # fmt: skip


manifest = CodexManifest()
