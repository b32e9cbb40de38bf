"""VS Code's agent hooks: ``.github/hooks/hookbus-vscode.json``, generate, verify,
install, uninstall.

VS Code reads every ``*.json`` in the workspace's ``.github/hooks/`` and in the user's
``~/.copilot/hooks/`` (its hooks docs, "Hook file locations"), in its own flat shape:
``{"hooks": {"PreToolUse": [{"type": "command", "command": ..., "timeout": ...}]}}``,
PascalCase events, ``timeout`` in seconds (30 by default). hookbus writes a file of its
own there (:mod:`hookbus.hosts.shared.flat`) and nothing else. No matcher is written: VS
Code ignores matchers and runs every hook on every tool call, so the subscription index
filters on the tool's name instead.

Copilot CLI reads the same folders: should it run this file, the command gets Copilot's
payload and answers as the Copilot driver, or stands aside when Copilot's own install
(``hookbus.json``) has the event (:mod:`hookbus.hosts.shared.native_install`). VS Code in turn
runs ``.claude/settings.json`` and Copilot's ``hookbus.json``: their commands stand
aside for this file the same way.
"""

from __future__ import annotations

import os

from hookbus.hosts.shared import flat
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import Scope
from hookbus.hosts.shared.native_install import VSCODE_FILE, vscode_home
from hookbus.hosts.vscode.driver import ALL_EVENTS, driver
from hookbus.hosts.vscode.facts import FACTS

HOST = "vscode"
Hooks = flat.Hooks
SCOPES: dict[Scope, bool] = {"project": True, "user": False}
NOTE = (
    "VS Code runs agent hooks (a preview) unless an organization policy turns them off; "
    "it reads this file in .github/hooks/, where Copilot CLI looks too."
)


def hooks_path(scope: str, project_dir: str | None = None) -> str:
    # The same places a Claude or Copilot command run by VS Code looks to stand aside.
    if scope == "user":
        return os.path.join(vscode_home(), "hooks", VSCODE_FILE)
    return os.path.join(project_dir or project_root(), ".github", "hooks", VSCODE_FILE)


class VscodeManifest(flat.FlatManifest):
    """VS Code's ``hookbus-vscode.json``, a file hookbus owns whole."""

    command_key = "command"
    owns_file = True
    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return hooks_path(scope, project_dir)

    def notes(self, hooks: Hooks) -> tuple[str, ...]:
        return (NOTE,) if hooks else ()

    def flat_entry(self, native: str, group: flat.Entry, entry: flat.Entry) -> flat.Entry:
        """``command`` and ``timeout`` (seconds), and no matcher: VS Code runs every entry
        for every tool (its hooks reference), so the driver filters."""
        mine: flat.Entry = {"type": "command", "command": entry["command"]}
        if "timeout" in entry:
            mine["timeout"] = entry["timeout"]
        return mine


manifest = VscodeManifest()
