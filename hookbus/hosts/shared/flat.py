"""The flat hooks block (Copilot CLI's and VS Code's hook files, Cursor's and Windsurf's
``hooks.json``): ``{"hooks": {EVENT: [ENTRY, ...]}}``, one list of entries per event, no
matcher groups.

The entries are generated as :class:`~hookbus.hosts.shared.grouped.GroupedManifest` does
and flattened by the host's :meth:`FlatManifest.flat_entry`; removing, merging and
comparing ours keep every entry and key of the user's. Which entries are ours is their
command (under :attr:`FlatManifest.command_key`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from hookbus.hosts.shared import grouped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from hookbus.bus.subscriptions import IndexData
    from hookbus.hosts.shared.manifest import CommandForm

Hooks = grouped.Hooks
#: One entry of a hooks list (and one generated group).
Entry = dict[str, Any]


def hooks_of(document: dict[str, Any]) -> dict[str, Any]:
    """The ``hooks`` object of ``document`` (empty when it has none, or not an object)."""
    hooks = document.get("hooks", {})
    return hooks if isinstance(hooks, dict) else {}


class FlatManifest(grouped.GroupedManifest):
    """A host whose events hold flat lists of entries. A subclass says under which key an
    entry holds its command, what else the file carries, whether hookbus owns the file,
    and how a grouped entry becomes one of the host's (:meth:`flat_entry`)."""

    #: The entry's key holding the shell command.
    command_key: ClassVar[str] = "command"
    #: Keys the file carries before ``hooks`` when hookbus writes it (Copilot's version).
    header: ClassVar[Mapping[str, Any]] = {}
    #: The file is hookbus's own: with none of our entries left, nothing of it is kept.
    owns_file: ClassVar[bool] = False

    def flat_entry(self, native: str, group: Entry, entry: Entry) -> Entry:
        """The host's entry for one generated group and its entry."""
        raise NotImplementedError

    def is_ours(self, entry: object) -> bool:
        from hookbus.hosts.shared.manifest import is_hookbus_command

        return isinstance(entry, dict) and is_hookbus_command(entry.get(self.command_key),
                                                              self.facts.name)  # fmt: skip

    def generate(
        self, index: IndexData | None, python: str | None = None, form: CommandForm = "absolute"
    ) -> Hooks:
        flat: Hooks = {}
        for native, groups in super().generate(index, python, form).items():
            for group in groups:
                for entry in group["hooks"]:
                    flat.setdefault(native, []).append(self.flat_entry(native, group, entry))
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
            kept = entries
            if isinstance(entries, list):
                kept = [e for e in entries if not self.is_ours(e)]
            if kept:
                hooks[event] = kept
        if hooks:
            return {**document, "hooks": hooks}
        # No entry left: what remains is the user's, but a header alone (the version
        # install writes) said nothing.
        rest = {k: v for k, v in document.items() if k != "hooks"}
        return {} if self.owns_file or set(rest) <= set(self.header) else rest

    def merge(self, document: dict[str, Any], entries: Mapping[str, Any]) -> dict[str, Any]:
        hooks = dict(hooks_of(self.without_ours(document)))
        for event, mine in entries.items():
            hooks[event] = [*hooks.get(event, []), *mine]
        return {**self.header, **document, "hooks": hooks}

    def drift(self, document: dict[str, Any], entries: Mapping[str, Any]) -> list[str]:
        have = {e: [x for x in v if self.is_ours(x)] for e, v in hooks_of(document).items()
                if isinstance(v, list)}  # fmt: skip
        return drift(self.events, have, entries)

    def check(self, path: str, document: dict[str, Any]) -> None:
        from hookbus.bus.errors import HostConfigError

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
