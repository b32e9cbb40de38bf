"""Cline's hook files: generate, verify, install, uninstall.

Cline has no settings file for hooks: it runs the executable named after each event in
its hook folders (``sdk/packages/core/src/hooks``: ``resolveHooksConfigSearchPaths``),
the project's ``<project>/.clinerules/hooks/`` and the user's ``~/Documents/Cline/Hooks/``,
which the CLI 3.x and the legacy VS Code extension both read. So hookbus writes one small
shell script per event an enabled handler subscribes to, and owns it: each carries
:data:`~hookbus.hosts.shared.manifest.OWNED_MARK`, install never replaces a file without it (a
user's own ``PreToolUse`` is theirs), and uninstall removes exactly the files with it.

No matcher: Cline runs every tool's hook; the bus filters. The file has no timeout field
(Cline's own limit is 120 s for tool hooks), so only the command's ``--timeout`` is set.
"""

from __future__ import annotations

import os

from hookbus.hosts.cline.driver import ALL_EVENTS, driver
from hookbus.hosts.cline.facts import FACTS
from hookbus.hosts.shared import grouped
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import OWNED_MARK, CommandForm, Scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData, ToolsData
    from hookbus.hosts.shared.manifest import Plan

HOST = "cline"
#: The project's folder is committed with it; the user's is theirs alone.
SCOPES: dict[Scope, bool] = {"project": True, "user": False}


def hooks_dir(scope: str, project_dir: str | None = None) -> str:
    """Cline's hook folder for ``scope``."""
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), "Documents", "Cline", "Hooks")
    return os.path.join(project_dir or project_root(), ".clinerules", "hooks")


def script(command: str) -> str:
    """The hook file: a POSIX shell script running ``command`` (which answers its own
    fallback when hookbus is gone), marked as hookbus's."""
    return (
        "#!/bin/sh\n"
        f"# {OWNED_MARK}: written by 'hookbus install --host cline', removed by its "
        "uninstall; edits are overwritten.\n"
        f"{command}\n"
    )


class ClineManifest(grouped.GroupedManifest):
    """One owned executable per registered event in ``.clinerules/hooks/`` (project) or
    ``~/Documents/Cline/Hooks/`` (user)."""

    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return hooks_dir(scope, project_dir)

    def matcher(self, tools: ToolsData | None) -> str | None:
        return None

    def timeouts(self, native: str, budget: float) -> tuple[float | None, float | None]:
        return budget + 5, None

    def plan(
        self,
        index: IndexData | None,
        *,
        python: str,
        scope: Scope,
        form: CommandForm = "absolute",
        project_dir: str | None = None,
    ) -> Plan:
        from hookbus.hosts.shared.manifest import OwnedFile, Plan

        folder = self.path(scope, project_dir)
        hooks = self.generate(index, python, form)
        owned = tuple(
            OwnedFile(path=os.path.join(folder, native),
                      text=script(groups[0]["hooks"][0]["command"]), executable=True)
            for native, groups in hooks.items()
        )  # fmt: skip
        return Plan(owned=owned)

    def owned_paths(self, scope: Scope, project_dir: str | None = None) -> tuple[str, ...]:
        folder = self.path(scope, project_dir)
        return tuple(os.path.join(folder, native) for native in self.events)


manifest = ClineManifest()
