"""Copilot CLI's ``.github/hooks/hookbus.json``: generate, verify, install, uninstall.

Copilot loads every ``*.json`` in the project's ``.github/hooks/`` (only in a trusted
folder: ``--trust-folder``, else repo hooks are skipped silently) and in the user's
``$COPILOT_HOME/hooks/`` (``~/.copilot``). hookbus writes a file of its own there,
``hookbus.json``, and nothing else: the user's hook files are never opened, and
uninstall removes ours. The shape is Copilot's native one (hooks reference, 1.0.102):
``{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": ..., "timeoutSec":
..., "matcher": ...}]}}``, camelCase events, each command given ``--event`` (the
payloads do not name their event). Matchers are full-match regexes over ``toolName``.
"""

from __future__ import annotations

import os
from typing import Any

from hookbus.drivers.copilot import ALL_EVENTS, driver
from hookbus.hosts import HOSTS
from hookbus.manifests import grouped
from hookbus.manifests.base import CommandForm, Scope
from hookbus.manifests.grouped import project_root
from hookbus.runtime.native_install import COPILOT_FILE, copilot_home

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from hookbus.runtime.index import IndexData

HOST = "copilot"
Hooks = grouped.Hooks
SCOPES: dict[Scope, bool] = {"project": True, "user": False}
FILE = COPILOT_FILE
TRUST_NOTE = (
    "Copilot runs a project's hooks only in a trusted folder: start it with "
    "--trust-folder (or trust the folder when asked)."
)


def hooks_path(scope: str, project_dir: str | None = None) -> str:
    # The same places a Claude command run by Copilot looks for this file to stand aside.
    if scope == "user":
        return os.path.join(copilot_home(os.environ), "hooks", FILE)
    return os.path.join(project_dir or project_root(), ".github", "hooks", FILE)


class CopilotManifest(grouped.GroupedManifest):
    """Copilot's ``hookbus.json``, a file hookbus owns whole (flat entries, no groups)."""

    facts = HOSTS[HOST]
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return hooks_path(scope, project_dir)

    def notes(self, hooks: Hooks) -> tuple[str, ...]:
        return (TRUST_NOTE,) if hooks else ()

    def is_ours(self, entry: object) -> bool:
        from hookbus.manifests.base import is_hookbus_command

        return isinstance(entry, dict) and is_hookbus_command(entry.get("bash"), HOST)

    def generate(
        self, index: IndexData | None, python: str | None = None, form: CommandForm = "absolute"
    ) -> Hooks:
        """Copilot's flat entries for what ``index`` subscribes to: ``bash`` and
        ``timeoutSec`` (whole seconds) in place of Claude's ``command`` and ``timeout``."""
        flat: Hooks = {}
        for native, groups in super().generate(index, python, form).items():
            for group in groups:
                for entry in group["hooks"]:
                    mine: dict[str, Any] = {"type": "command", "bash": entry["command"]}
                    if "timeout" in entry:
                        mine["timeoutSec"] = entry["timeout"]
                    if "matcher" in group:
                        mine["matcher"] = group["matcher"]
                    flat.setdefault(native, []).append(mine)
        return flat

    def commands(self, document: dict[str, Any]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for event, entries in _hooks(document).items():
            for entry in entries if isinstance(entries, list) else []:
                if self.is_ours(entry):
                    found.setdefault(event, []).append(entry["bash"])
        return found

    def without_ours(self, document: dict[str, Any]) -> dict[str, Any]:
        hooks = {}
        for event, entries in _hooks(document).items():
            kept = (
                [e for e in entries if not self.is_ours(e)]
                if isinstance(entries, list)
                else entries
            )
            if kept:
                hooks[event] = kept
        # The file is ours: with no entry left in it, nothing of it is kept.
        return {**document, "hooks": hooks} if hooks else {}

    def merge(self, document: dict[str, Any], entries: Mapping[str, Any]) -> dict[str, Any]:
        hooks = dict(_hooks(self.without_ours(document)))
        for event, mine in entries.items():
            hooks[event] = [*hooks.get(event, []), *mine]
        return {"version": 1, **document, "hooks": hooks}

    def drift(self, document: dict[str, Any], entries: Mapping[str, Any]) -> list[str]:
        have = {e: [x for x in v if self.is_ours(x)] for e, v in _hooks(document).items()
                if isinstance(v, list)}  # fmt: skip
        problems = []
        for event in self.events:
            want, got = list(entries.get(event, [])), have.get(event, [])
            if want != got:
                problems.append(f"{event}: " + ("missing" if not got else
                                "not registered" if not want else "differs"))  # fmt: skip
        return problems

    def check(self, path: str, document: dict[str, Any]) -> None:
        from hookbus.errors import HostConfigError

        hooks = document.get("hooks", {})
        if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
            raise HostConfigError(f"{path}: expected an object with a 'hooks' object of "
                                  "lists; fix it, nothing changed")  # fmt: skip


def _hooks(document: dict[str, Any]) -> dict[str, Any]:
    hooks = document.get("hooks", {})
    return hooks if isinstance(hooks, dict) else {}


manifest = CopilotManifest()
