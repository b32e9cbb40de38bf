"""The ``hooks.json`` shape Copilot CLI and Cursor share: ``{"version": 1, "hooks":
{EVENT: [ENTRY, ...]}}``, one flat entry per command (no matcher groups), the matcher
beside the command in the entry.

The hosts spell the entry's keys differently (Copilot ``bash`` and ``timeoutSec``,
Cursor ``command`` and ``timeout``), so a manifest names them; everything else is shared:
entries generated from the grouped shape (:mod:`hookbus.manifests.grouped`), hookbus's
own found by their command, the user's entries and keys kept, ``version: 1`` written.
"""

from __future__ import annotations

from typing import Any, ClassVar

from hookbus.manifests import grouped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from hookbus.manifests.base import CommandForm
    from hookbus.runtime.index import IndexData

Hooks = grouped.Hooks


class FlatManifest(grouped.GroupedManifest):
    """A host's ``hooks.json`` of flat entries (see the module docstring)."""

    #: The entry's key holding the shell command, and the one holding its timeout.
    command_key: ClassVar[str]
    timeout_key: ClassVar[str]

    def is_ours(self, entry: object) -> bool:
        from hookbus.manifests.base import is_hookbus_command

        return isinstance(entry, dict) and is_hookbus_command(
            entry.get(self.command_key), self.facts.name
        )

    def entry(
        self, native: str, group: Mapping[str, Any], entry: Mapping[str, Any]
    ) -> dict[str, Any]:
        """One flat entry from a generated group and its one entry."""
        mine: dict[str, Any] = {"type": "command", self.command_key: entry["command"]}
        if "timeout" in entry:
            mine[self.timeout_key] = entry["timeout"]
        if "matcher" in group:
            mine["matcher"] = group["matcher"]
        return mine

    def generate(
        self, index: IndexData | None, python: str | None = None, form: CommandForm = "absolute"
    ) -> Hooks:
        """Flat entries for what ``index`` subscribes to, in the host's event order."""
        flat: Hooks = {}
        for native, groups in super().generate(index, python, form).items():
            for group in groups:
                for entry in group["hooks"]:
                    flat.setdefault(native, []).append(self.entry(native, group, entry))
        return flat

    def commands(self, document: dict[str, Any]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for event, entries in _hooks(document).items():
            for entry in entries if isinstance(entries, list) else []:
                if self.is_ours(entry):
                    found.setdefault(event, []).append(entry[self.command_key])
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
        if hooks:
            return {**document, "hooks": hooks}
        # No entry left: what remains is the user's, but a version alone said nothing.
        rest = {k: v for k, v in document.items() if k != "hooks"}
        return {} if set(rest) <= {"version"} else rest

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
