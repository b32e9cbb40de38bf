"""Goose's hooks: a plugin of hookbus's own, generated, verified, installed, uninstalled.

goose reads hooks only from plugins (block/goose ``crates/goose/src/hooks/mod.rs``,
``crates/goose/src/plugins/discovery.rs``; the hooks guide, @0825b570): every folder
under ``<project>/.agents/plugins/`` and ``~/.agents/plugins/`` with a
``hooks/hooks.json`` in Claude's grouped shape. So hookbus writes a plugin of its own,
``hookbus/`` (``plugin.json`` and ``hooks/hooks.json``), both files marked as hookbus's,
and uninstall removes it; no file of the user's is opened. goose enables a plugin it
finds for the first time; one the user disabled stays off.

- matchers are Rust regexes tested *unanchored* (``is_match``), so ours are anchored;
  an invalid one (a bare ``*``) makes goose skip the rule, and hookbus never writes one;
- ``timeout`` is whole seconds (30 by default);
- a fail-closed handler's ``PreToolUse`` entry says ``"on_failure": "block"``: goose
  then blocks the call itself when hookbus gives no decision (a crash, goose's own
  timeout), where it would otherwise let it run. ``on_failure`` means nothing on
  other events, and a value goose does not know rejects the whole file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from hookbus.hosts.goose.driver import ALL_EVENTS, driver
from hookbus.hosts.goose.facts import FACTS
from hookbus.hosts.shared import grouped
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import OWNED_MARK, CommandForm, Scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData
    from hookbus.hosts.shared.manifest import Plan

HOST = "goose"
PLUGIN = "hookbus"
#: The project's plugins are committed with it; the user's are theirs alone.
SCOPES: dict[Scope, bool] = {"project": True, "user": False}
NOTE = f"{OWNED_MARK}: written by 'hookbus install --host goose', removed by its uninstall"


def plugin_dir(scope: str, project_dir: str | None = None) -> str:
    """hookbus's plugin folder for ``scope``."""
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".agents", "plugins", PLUGIN)
    return os.path.join(project_dir or project_root(), ".agents", "plugins", PLUGIN)


def _json(data: Mapping[str, Any]) -> str:
    return json.dumps(data, indent=2) + "\n"


class GooseManifest(grouped.GroupedManifest):
    """hookbus's plugin in ``.agents/plugins/hookbus/`` (project) or
    ``~/.agents/plugins/hookbus/`` (user)."""

    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return plugin_dir(scope, project_dir)

    def guard_fields(self, native: str) -> Mapping[str, Any]:
        return {"on_failure": "block"} if native == "PreToolUse" else {}

    def plan(
        self,
        index: IndexData | None,
        *,
        python: str,
        scope: Scope,
        form: CommandForm = "absolute",
        project_dir: str | None = None,
    ) -> Plan:
        from hookbus import __version__
        from hookbus.hosts.shared.manifest import OwnedFile, Plan

        hooks = self.generate(index, python, form)
        if not hooks:
            return Plan()
        manifest_path, hooks_path = self.owned_paths(scope, project_dir)
        # goose ignores keys it does not know at the top of hooks.json (serde's default).
        owned = (
            OwnedFile(path=manifest_path, text=_json({"name": PLUGIN, "version": __version__,
                                                      "description": NOTE})),
            OwnedFile(path=hooks_path, text=_json({"$comment": NOTE, "hooks": hooks})),
        )  # fmt: skip
        return Plan(owned=owned)

    def owned_top(self, scope: Scope, project_dir: str | None = None) -> str | None:
        # .agents/plugins/hookbus/hooks/: install makes every level; .agents is shared
        # with Antigravity, so it goes only when nothing of anyone's is left in it.
        return os.path.dirname(os.path.dirname(self.path(scope, project_dir)))

    def owned_paths(self, scope: Scope, project_dir: str | None = None) -> tuple[str, ...]:
        folder = self.path(scope, project_dir)
        return os.path.join(folder, "plugin.json"), os.path.join(folder, "hooks", "hooks.json")


manifest = GooseManifest()
