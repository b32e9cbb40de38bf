"""The ``hooks`` block of Factory Droid's settings: generate, verify, install, uninstall.

Droid copied Claude Code's shape (``{"hooks": {EVENT: [{"matcher", "hooks": [...]}]}}``,
handled by :mod:`hookbus.hosts.shared.grouped`; Factory's hooks reference,
Factory-AI/factory@a80aa7c5): ``timeout`` is in seconds (60 by default); a matcher is an
exact tool name or a regex (``Edit|Create``, ``Notebook.*``), so ours are anchored.

Which file: the reference (2026-07) names ``hooks.json`` at each scope, "If ``hooks.json``
is absent, Droid falls back to hooks declared under the ``hooks`` key in the matching
``settings.json``". hookbus writes that ``settings.json`` block: it is the one place every
account of a real Droid saw hooks fire (Factory-AI/factory issue #3, droid 0.186.0:
``hooks.json`` at either scope never fired, ``settings.json`` did), and the shape of a
standalone ``hooks.json`` is disputed (the reference wraps it in ``hooks``; later
published text quoted in dyoshikawa/rulesync#2680 keys it by event name). Where a
``hooks.json`` exists beside the settings, Droid may read it instead, and the install
says so.

Droid snapshots hooks at startup and applies edits made outside it only after the user
reviews them in ``/hooks``; hookbus never approves its own hooks, and the plan's notes say
so. There is no local scope: the project's ``.factory/settings.json`` and the user's
``~/.factory/settings.json``. Our entries are recognised by their command; every other
entry and key of the user's file is kept.
"""

from __future__ import annotations

import os

from hookbus.hosts.droid.driver import ALL_EVENTS, driver
from hookbus.hosts.droid.facts import FACTS
from hookbus.hosts.shared import grouped
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import CommandForm, Plan, Scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData

HOST = "droid"
Hooks = grouped.Hooks
#: The project's file is committed and shared; the user's is theirs alone.
SCOPES: dict[Scope, bool] = {"project": True, "user": False}
REVIEW_NOTE = (
    "Droid reads hooks once, at startup, and applies changes made outside it only once "
    "you review them: restart Droid or open /hooks and review the hookbus entries "
    "(hookbus never approves its own hooks)."
)
#: The hook files Droid may prefer to the settings' ``hooks`` block: the scope's own and
#: the legacy nested one ("Existing files keep working unchanged").
HOOK_FILES = ("hooks.json", os.path.join("hooks", "hooks.json"))


def settings_path(scope: str, project_dir: str | None = None) -> str:
    """Droid's settings file for ``scope``."""
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".factory", "settings.json")
    return os.path.join(project_dir or project_root(), ".factory", "settings.json")


def hook_files_beside(path: str) -> tuple[str, ...]:
    """The ``hooks.json`` files that exist beside the settings file ``path``."""
    folder = os.path.dirname(path)
    return tuple(p for name in HOOK_FILES if os.path.isfile(p := os.path.join(folder, name)))


class DroidManifest(grouped.GroupedManifest):
    """Factory Droid's ``hooks`` block in ``.factory/settings.json`` (project) or
    ``~/.factory/settings.json`` (user)."""

    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return settings_path(scope, project_dir)

    def plan(
        self,
        index: IndexData | None,
        *,
        python: str,
        scope: Scope,
        form: CommandForm = "absolute",
        project_dir: str | None = None,
    ) -> Plan:
        found = super().plan(index, python=python, scope=scope, form=form,
                             project_dir=project_dir)  # fmt: skip
        if not found.notes:
            return found
        (document,) = found.documents
        shadows = tuple(
            f"{path} exists: Droid reads its hooks instead of those in {document.path}, so "
            "the hookbus entries may not run there; move your hooks from it into the "
            "settings' hooks block (or remove it), and check in /hooks that hookbus is listed."
            for path in hook_files_beside(document.path)
        )
        return Plan(documents=found.documents, notes=(*shadows, *found.notes))

    def notes(self, hooks: Hooks) -> tuple[str, ...]:
        return (REVIEW_NOTE,) if hooks else ()


manifest = DroidManifest()
