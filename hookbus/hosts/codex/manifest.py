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

from hookbus.hosts.codex.driver import ALL_EVENTS, driver
from hookbus.hosts.codex.facts import FACTS
from hookbus.hosts.shared import grouped
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import CommandForm, Scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import ToolsData

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


def codex_home() -> str:
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def hooks_path(scope: str, project_dir: str | None = None) -> str:
    """Codex's ``hooks.json`` for ``scope``."""
    if scope == "user":
        return os.path.join(codex_home(), "hooks.json")
    return os.path.join(project_dir or project_root(), ".codex", "hooks.json")


class CodexManifest(grouped.GroupedManifest):
    """Codex's ``.codex/hooks.json`` (project) or ``$CODEX_HOME/hooks.json`` (user)."""

    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return hooks_path(scope, project_dir)

    def matcher(self, tools: ToolsData | None) -> str | None:
        return grouped.anchored_at_both_ends(tools)

    def timeouts(self, native: str, budget: float) -> tuple[float | None, float | None]:
        # Whole seconds; SessionEnd and Interrupt are clamped by Codex to 3 s anyway.
        facts = self.facts
        seconds = min(
            facts.timeout_value(budget + 5), facts.timeout_value(facts.timeout_for(native))
        )
        return seconds, seconds

    def notes(self, hooks: Hooks) -> tuple[str, ...]:
        return (TRUST_NOTE,) if hooks else ()


manifest = CodexManifest()


def command(
    python: str, native: str, timeout: float | None, *, guarded: bool = False,
    form: CommandForm = "absolute",
) -> str:  # fmt: skip
    """The hook command for ``native`` (see :meth:`GroupedManifest.command`)."""
    return manifest.command(python, native, timeout, guarded=guarded, form=form)
