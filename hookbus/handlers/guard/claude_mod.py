"""Which side decides a Claude dispatch: the ``agent.spawn`` module or the PreToolUse guard.

hookbus's Claude plugin (``hookbus install --host claude --plugin``) ships a hooks module
whose ``session.start`` sets ``HOOKBUS_CLAUDE_SPAWN_MOD`` to the plugin's root in the
Claude Code process; from then on the module decides every spawn at ``agent.spawn``.
Claude Code starts the same plugin's command hooks with ``CLAUDE_PLUGIN_ROOT`` set to that
root, so the PreToolUse guard passes a dispatch through exactly when the two agree.
Processes the Bash tool starts (a test, a manual ``hookbus run``) inherit the variable but
not ``CLAUDE_PLUGIN_ROOT``, and a settings-file install has no plugin root at all: those
still decide. When the module fails it clears the variable, and the command guard takes
over the session's later dispatches.

Standard library only: this runs on the guard's before-tool path.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # collections.abc costs a cold hook ~3 ms
    from collections.abc import Mapping

#: Set by the module's ``session.start`` to the plugin root (``docs/hosts/claude.md``).
VARIABLE = "HOOKBUS_CLAUDE_SPAWN_MOD"
#: Set by Claude Code for a plugin's command hooks: that plugin's folder.
PLUGIN_ROOT = "CLAUDE_PLUGIN_ROOT"


def spawn_mod_decides(environ: Mapping[str, str]) -> bool:
    """True when the agent.spawn module decides this session's dispatches, so that the
    PreToolUse guard must pass them through: ``HOOKBUS_CLAUDE_SPAWN_MOD`` and
    ``CLAUDE_PLUGIN_ROOT`` are both set to absolute paths and name the same folder (compared as
    normalised real paths: a symlinked plugin folder is the same plugin)."""
    mod = environ.get(VARIABLE, "")
    root = environ.get(PLUGIN_ROOT, "")
    if not (mod and root and os.path.isabs(mod) and os.path.isabs(root)):
        return False
    return _real(mod) == _real(root)


def _real(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))
