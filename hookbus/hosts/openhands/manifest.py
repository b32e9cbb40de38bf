"""OpenHands' ``.openhands/hooks.json``: generate, verify, install, uninstall.

OpenHands reads one file: the working directory's ``.openhands/hooks.json``, else
``~/.openhands/hooks.json``; the first that exists wins outright, they are never merged
(``OpenHands/software-agent-sdk@611629e`` ``openhands-sdk/openhands/sdk/hooks/config.py``
``HookConfig.load``). So the user's own file is shared with hookbus: our entries are
merged into it, every other entry kept, and uninstall restores it.

Its native shape is Claude's grouped one without the wrapper, keyed by snake_case
events: ``{"pre_tool_use": [{"matcher": "terminal", "hooks": [{"type": "command",
"command": ..., "timeout": 10}]}]}``. Claude's ``{"hooks": {"PreToolUse": [...]}}`` is
read too, and hookbus writes in whichever form the file already has (a wrapper beside
flat keys would hide them: OpenHands then reads the wrapper alone). A PascalCase key and
its snake_case twin in one file make OpenHands reject the whole file, as does one
unknown event, so our entries go under the key the file already uses for the event, else
its snake_case name, and hookbus writes no other key. ``timeout`` is whole seconds
(default 60). A matcher with a regex character is a full-match regex, else an exact
name (``HookMatcher.matches``).
"""

from __future__ import annotations

import os
import re
from typing import Any

from hookbus.hosts.openhands.driver import ALL_EVENTS, driver
from hookbus.hosts.openhands.facts import FACTS
from hookbus.hosts.shared import grouped
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import CommandForm, Plan, Scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from hookbus.bus.subscriptions import IndexData, ToolsData

HOST = "openhands"
SCOPES: dict[Scope, bool] = {"project": True, "user": False}
NOTES: dict[str, str] = {
    "project": "OpenHands reads a project's .openhands/hooks.json instead of "
    "~/.openhands/hooks.json, never both: hooks of yours there no longer run in this project.",
    "user": "OpenHands ignores ~/.openhands/hooks.json in a project that has its own "
    ".openhands/hooks.json: install there too (hookbus install --host openhands).",
}


def hooks_path(scope: str, project_dir: str | None = None) -> str:
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".openhands", "hooks.json")
    return os.path.join(project_dir or project_root(), ".openhands", "hooks.json")


def snake(native: str) -> str:
    """An event's snake_case key (``config.py _pascal_to_snake``)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", native).lower()


def _block(document: dict[str, Any]) -> dict[str, Any]:
    """The hooks block: the wrapper's content, else the document itself."""
    inner = document.get("hooks")
    return inner if isinstance(inner, dict) else document


def _wrapped(document: dict[str, Any]) -> bool:
    return isinstance(document.get("hooks"), dict)


class OpenHandsManifest(grouped.GroupedManifest):
    """OpenHands' ``.openhands/hooks.json`` (project) or ``~/.openhands/hooks.json`` (user),
    in the grouped shape, flat or wrapped as the file already is."""

    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return hooks_path(scope, project_dir)

    def matcher(self, tools: ToolsData | None) -> str | None:
        return grouped.anchored_at_both_ends(tools)

    def plan(
        self,
        index: IndexData | None,
        *,
        python: str,
        scope: Scope,
        form: CommandForm = "absolute",
        project_dir: str | None = None,
    ) -> Plan:
        """The grouped plan, with the note of ``scope``: the file it writes shadows, or is
        shadowed by, the other one."""
        import msgspec

        found = super().plan(index, python=python, scope=scope, form=form,
                             project_dir=project_dir)  # fmt: skip
        wanted = any(d.entries for d in found.documents)
        return msgspec.structs.replace(found, notes=(NOTES[scope],) if wanted else ())

    def generate(
        self, index: IndexData | None, python: str | None = None, form: CommandForm = "absolute"
    ) -> grouped.Hooks:
        """The entries keyed by snake_case event (the names of ``HOOK_EVENT_FIELDS``)."""
        return {snake(k): v for k, v in super().generate(index, python, form).items()}

    def _view(self, document: dict[str, Any]) -> dict[str, Any]:
        """The document as a grouped block keyed by snake_case event, for comparing."""
        return {"hooks": {snake(k): v for k, v in _block(document).items()}}

    def _spelled(self, document: dict[str, Any], entries: Mapping[str, Any]) -> dict[str, Any]:
        """``entries`` under the key the document already uses for each event."""
        keys = {snake(k): k for k in _block(document)}
        return {keys.get(event, event): groups for event, groups in entries.items()}

    def _as_document(self, document: dict[str, Any], block: dict[str, Any]) -> dict[str, Any]:
        if _wrapped(document):
            return {**document, "hooks": block} if block else {
                k: v for k, v in document.items() if k != "hooks"}  # fmt: skip
        return block

    def merge(self, document: dict[str, Any], entries: Mapping[str, Any]) -> dict[str, Any]:
        block = grouped.merged({"hooks": _block(document)}, self._spelled(document, entries),
                               self.is_ours).get("hooks", {})  # fmt: skip
        return self._as_document(document, block)

    def without_ours(self, document: dict[str, Any]) -> dict[str, Any]:
        block = grouped.without_ours({"hooks": _block(document)}, self.is_ours).get("hooks", {})
        return self._as_document(document, block)

    def commands(self, document: dict[str, Any]) -> dict[str, list[str]]:
        return super().commands(self._view(document))

    def drift(self, document: dict[str, Any], entries: Mapping[str, Any]) -> list[str]:
        order = [snake(n) for n in self.events]
        return grouped.drift(self._view(document), dict(entries), self.is_ours, order)

    def check(self, path: str, document: dict[str, Any]) -> None:
        from hookbus.bus.errors import HostConfigError

        super().check(path, {"hooks": _block(document)})
        seen = [snake(k) for k in _block(document)]
        twins = sorted({k for k in seen if seen.count(k) > 1})
        if twins:
            raise HostConfigError(f"{path}: {', '.join(twins)} is there in two spellings, "
                                  "which OpenHands refuses; fix it, nothing changed")  # fmt: skip


manifest = OpenHandsManifest()
