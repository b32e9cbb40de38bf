"""The ``hooks`` block of Claude Code's settings: generate, verify, install, uninstall.

Only events (and, where Claude's matcher allows, tool names) that an enabled handler
subscribes to are registered, so Claude starts no hookbus process for an event nobody
wants. Our entries are recognised by their command (``... hookbus run --host claude``);
every other entry and key of the user's file is kept as it is.

Matchers (Claude hooks reference): a string of letters, digits, ``_``, ``|`` is a list of
exact tool names; anything else is an *unanchored* JavaScript regex, so regexes we write
are anchored (``Edit`` must not catch ``NotebookEdit`` by accident).
"""

from __future__ import annotations

import os

from hookbus.hosts.claude.driver import ALL_EVENTS, driver
from hookbus.hosts.claude.facts import FACTS
from hookbus.hosts.shared import grouped
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import CommandForm, Scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData, ToolsData

HOST = "claude"
#: Claude gives SessionEnd hooks 1.5 s in all; a timeout here would raise that budget for
#: every SessionEnd hook of the user's, so we register none and answer within it.
NO_TIMEOUT = {"SessionEnd"}
Hooks = grouped.Hooks


#: Claude's settings files (Claude Code settings docs): the project's, committed and
#: shared with the team; the project's local one, which Claude adds to .gitignore; the
#: user's, for every project.
SCOPES: dict[Scope, bool] = {"project": True, "local": False, "user": False}
FILES = {"project": "settings.json", "local": "settings.local.json"}


def settings_path(scope: str, project_dir: str | None = None) -> str:
    """Claude's settings file for ``scope``."""
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".claude", "settings.json")
    return os.path.join(project_dir or project_root(), ".claude", FILES[scope])


class ClaudeManifest(grouped.GroupedManifest):
    """Claude Code's ``hooks`` block in ``.claude/settings.json`` (project),
    ``.claude/settings.local.json`` (local) or ``~/.claude/settings.json`` (user)."""

    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return settings_path(scope, project_dir)

    def matcher(self, tools: ToolsData | None) -> str | None:
        return grouped.name_list_or_anchored(tools)

    def timeouts(self, native: str, budget: float) -> tuple[float | None, float | None]:
        if native in NO_TIMEOUT:
            return None, None
        return super().timeouts(native, budget)


manifest = ClaudeManifest()


def command(
    python: str, native: str, timeout: float | None, *, guarded: bool = False,
    form: CommandForm = "absolute",
) -> str:  # fmt: skip
    """The hook command for ``native`` (see :meth:`GroupedManifest.command`)."""
    return manifest.command(python, native, timeout, guarded=guarded, form=form)


def generate(
    index: IndexData | None, python: str | None = None, form: CommandForm = "absolute"
) -> Hooks:
    """The hooks block for what the index subscribes to, in Claude's event order."""
    return manifest.generate(index, python, form)
