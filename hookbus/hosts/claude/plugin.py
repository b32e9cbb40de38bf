"""Claude Code's plugin folder for hookbus (``hookbus install --host claude --plugin``).

The same command hooks the settings install writes (:mod:`hookbus.hosts.claude.manifest`), in
a plugin folder hookbus owns instead of the user's settings file, and, when the ``guard``
handler is enabled, the hooks module ``hooks/spawn.js`` (``hookbus/hosts/claude/spawn.js``
with the argv of ``hookbus guard --json`` baked in) that decides ``agent.spawn`` itself.

Where Claude Code loads it from (2.1.332: ``claude plugin init`` scaffolds there and says
so): ``~/.claude/skills/<name>/`` auto-loads as ``<name>@skills-dir`` in every session
(scope ``user``); ``<project>/.claude/skills/<name>/`` once the workspace is trusted
(scope ``project``). A test loads the folder with ``claude --plugin-dir``.

The folder's layout, checked by ``claude plugin validate`` of 2.1.332:

- ``.claude-plugin/plugin.json``: the manifest (name, version, description, author);
- ``hooks/hooks.json``: auto-discovered; ``hooks`` as in settings, and ``modules``, a list
  of at most one path (relative to ``hooks/``). Claude Code 2.1.197 ignores ``modules``
  but rejects the whole file over an event name it does not know (``PostModelSwitch``),
  where its settings file ignores one; so the plugin is for 2.1.289 and later;
- ``hooks/spawn.js``: the module.

Every file holds :data:`~hookbus.hosts.shared.manifest.OWNED_MARK` (the JSON files in their
``description``), so uninstall removes them and nothing else. Never imported on a hook's
path.
"""

from __future__ import annotations

import json
import os
from typing import Any

from hookbus.hosts.claude.manifest import ClaudeManifest
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import (
    OWNED_MARK,
    CommandForm,
    OwnedFile,
    Plan,
    Scope,
    hookbus_file,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData

NAME = "hookbus"
#: Project and user plugin folders: both are machine-specific (the commands name this
#: machine's interpreter); a project's ``.claude/skills/`` is committed only if the user
#: commits it.
SCOPES: dict[Scope, bool] = {"project": False, "user": False}
MODULE = "spawn.js"
#: How long the module waits for ``hookbus guard --json`` before the engine kills it (ms):
#: the guard makes no network or model call, so a healthy answer takes well under 1 s.
GUARD_WAIT_MS = 10_000
#: What install says: an older Claude rejects a plugin's whole hooks file over one event
#: name it does not know (2.1.197 over PostModelSwitch), where its settings file ignores it.
NOTE = (
    "the plugin needs Claude Code 2.1.289 or later ('claude --version'); an older one loads "
    "none of its hooks (2.1.197 rejects the file over events it does not know): use the "
    "settings install (without --plugin) there"
)
#: The built-in handler whose decision the module runs.
GUARD = "guard"


def plugin_dir(scope: Scope, project_dir: str | None = None) -> str:
    """The folder Claude Code auto-loads hookbus's plugin from, for ``scope``."""
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".claude", "skills", NAME)
    return os.path.join(project_dir or project_root(), ".claude", "skills", NAME)


def module_source() -> str:
    from importlib.resources import files

    return (files("hookbus.hosts.claude") / "spawn.js").read_text(encoding="utf-8")


def guard_argv(python: str) -> list[str]:
    """``python -E -P <hookbus>/__main__.py guard --json``: by absolute path, no shell."""
    from hookbus.local.interpreter import python_argv

    main = os.path.join(os.path.dirname(hookbus_file(python)), "__main__.py")
    return python_argv(python, main, GUARD, "--json")


def render_module(argv: list[str], wait_ms: int = GUARD_WAIT_MS) -> str:
    """The module's text with the guard's ``argv`` and its wait baked in."""
    return (
        module_source()
        .replace("@@MARK@@", OWNED_MARK)
        .replace("@@ARGV@@", json.dumps(argv))
        .replace("@@WAIT_MS@@", str(wait_ms))
    )


def guard_enabled(index: IndexData | None) -> bool:
    """Whether ``index`` enables the handler ``hookbus guard`` runs, by the name that
    command finds it by (a group: ``guard.on_spawn``, ...)."""
    if not index:
        return False
    return any(h["name"] == GUARD or h["name"].startswith(f"{GUARD}.") for h in index["handlers"])


def _json(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=2) + "\n"


class ClaudePluginManifest(ClaudeManifest):
    """hookbus's plugin folder: ``~/.claude/skills/hookbus/`` (user) or the project's
    ``.claude/skills/hookbus/`` (project). Its files are hookbus's own; the user's
    settings files are not touched."""

    scopes = SCOPES

    def files(self, scope: Scope, project_dir: str | None) -> dict[str, str]:
        """Each file of the folder by role: manifest, hooks, module."""
        root = plugin_dir(scope, project_dir)
        return {
            "manifest": os.path.join(root, ".claude-plugin", "plugin.json"),
            "hooks": os.path.join(root, "hooks", "hooks.json"),
            "module": os.path.join(root, "hooks", MODULE),
        }

    def plan(
        self,
        index: IndexData | None,
        *,
        python: str,
        scope: Scope,
        form: CommandForm = "absolute",
        project_dir: str | None = None,
    ) -> Plan:
        from hookbus import __version__

        hooks = self.generate(index, python, form)
        spawn = guard_enabled(index)
        if not hooks and not spawn:
            return Plan()
        paths = self.files(scope, project_dir)
        mark = f"{OWNED_MARK}: written by 'hookbus install --host claude --plugin'"
        manifest = {
            "name": NAME,
            "version": __version__,
            "description": f"hookbus: the hooks of the handlers enabled in .hookbus.toml ({mark})",
            "author": {"name": "hookbus"},
        }
        hooks_file: dict[str, Any] = {"description": mark}
        if spawn:
            hooks_file["modules"] = [f"./{MODULE}"]
        hooks_file["hooks"] = hooks
        owned = [
            OwnedFile(path=paths["manifest"], text=_json(manifest)),
            OwnedFile(path=paths["hooks"], text=_json(hooks_file)),
        ]
        if spawn:
            owned.append(OwnedFile(path=paths["module"], text=self.module(python)))
        return Plan(owned=tuple(owned), notes=(NOTE,))

    def module(self, python: str) -> str:
        return render_module(guard_argv(python))

    def owned_paths(self, scope: Scope, project_dir: str | None = None) -> tuple[str, ...]:
        return tuple(self.files(scope, project_dir).values())

    def owned_top(self, scope: Scope, project_dir: str | None = None) -> str | None:
        # Empty folders up to the project's .claude/ (install may have made it), or up to
        # the user's ~/.claude/skills/; a folder holding anything of the user's stays.
        root = os.path.dirname(plugin_dir(scope, project_dir))
        return root if scope == "user" else os.path.dirname(root)


manifest = ClaudePluginManifest()
