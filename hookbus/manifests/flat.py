"""A hooks file hookbus owns whole, whose entries are flat (no matcher groups):
``{"hooks": {EVENT: [{"type": "command", COMMAND: ..., TIMEOUT: ...}, ...]}}``. Copilot
CLI (``bash``, ``timeoutSec``, a ``matcher`` per entry, ``"version": 1``) and VS Code's
agent hooks (``command``, ``timeout``, matchers ignored) read such files from the same
``.github/hooks/`` folder, each from a file of its own.

The file is hookbus's: the user's hook files are never opened, and uninstall removes
ours (an entry a person added to it is kept, and with it the file).
"""

from __future__ import annotations

from typing import Any, ClassVar

from hookbus.manifests import grouped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from hookbus.manifests.base import CommandForm
    from hookbus.runtime.index import IndexData

Hooks = grouped.Hooks


class FlatManifest(grouped.GroupedManifest):
    """The manifest of a flat hooks file (see the module docstring): a host's manifest
    subclasses it with its facts, scopes, events and path, and the keys its entries use."""

    #: The entry's key for the shell command, and for its timeout (in the host's unit).
    command_key: ClassVar[str]
    timeout_key: ClassVar[str]
    #: The host reads a ``matcher`` in each entry (False: it runs every entry for every
    #: tool, and the driver filters).
    matchers: ClassVar[bool] = True
    #: The file's ``version``, written first; None: the host has none.
    version: ClassVar[int | None] = None

    def is_ours(self, entry: object) -> bool:
        from hookbus.manifests.base import is_hookbus_command

        command = entry.get(self.command_key) if isinstance(entry, dict) else None
        return is_hookbus_command(command, self.facts.name)

    def generate(
        self, index: IndexData | None, python: str | None = None, form: CommandForm = "absolute"
    ) -> Hooks:
        """The flat entries for what ``index`` subscribes to."""
        flat: Hooks = {}
        for native, groups in super().generate(index, python, form).items():
            for group in groups:
                for entry in group["hooks"]:
                    mine: dict[str, Any] = {"type": "command", self.command_key: entry["command"]}
                    if "timeout" in entry:
                        mine[self.timeout_key] = entry["timeout"]
                    if "matcher" in group and self.matchers:
                        mine["matcher"] = group["matcher"]
                    flat.setdefault(native, []).append(mine)
        return flat

    def commands(self, document: dict[str, Any]) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for event, entries in hooks_of(document).items():
            for entry in entries if isinstance(entries, list) else []:
                if self.is_ours(entry):
                    found.setdefault(event, []).append(entry[self.command_key])
        return found

    def without_ours(self, document: dict[str, Any]) -> dict[str, Any]:
        hooks = {}
        for event, entries in hooks_of(document).items():
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
        hooks = dict(hooks_of(self.without_ours(document)))
        for event, mine in entries.items():
            hooks[event] = [*hooks.get(event, []), *mine]
        head = {"version": self.version} if self.version is not None else {}
        return {**head, **document, "hooks": hooks}

    def drift(self, document: dict[str, Any], entries: Mapping[str, Any]) -> list[str]:
        have = {e: [x for x in v if self.is_ours(x)] for e, v in hooks_of(document).items()
                if isinstance(v, list)}  # fmt: skip
        return drift(self.events, have, entries)

    def check(self, path: str, document: dict[str, Any]) -> None:
        from hookbus.errors import HostConfigError

        hooks = document.get("hooks", {})
        if not isinstance(hooks, dict) or not all(isinstance(v, list) for v in hooks.values()):
            raise HostConfigError(f"{path}: expected an object with a 'hooks' object of "
                                  "lists; fix it, nothing changed")  # fmt: skip


def drift(
    events: Sequence[str], have: Mapping[str, list[Any]], entries: Mapping[str, Any]
) -> list[str]:
    """One line per event whose installed entries (``have``) are not the generated ones."""
    problems = []
    for event in events:
        want, got = list(entries.get(event, [])), have.get(event, [])
        if want != got:
            problems.append(f"{event}: " + ("missing" if not got else
                            "not registered" if not want else "differs"))  # fmt: skip
    return problems


def hooks_of(document: dict[str, Any]) -> dict[str, Any]:
    """The ``hooks`` object of a flat hooks file (empty when it is not one)."""
    hooks = document.get("hooks", {})
    return hooks if isinstance(hooks, dict) else {}
