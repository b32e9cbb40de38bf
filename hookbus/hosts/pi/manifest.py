"""Pi's extension: hookbus's own, generated, verified, installed, uninstalled.

Pi has no hook settings: it loads extensions, TypeScript modules run in its own process
(jiti), from ``<project>/.pi/extensions/*.ts`` and ``~/.pi/agent/extensions/*.ts``
(``$PI_CODING_AGENT_DIR/extensions/`` when that is set; Pi's ``config.js``
``getAgentDir``). So hookbus writes one extension of its own, ``hookbus.ts``, from the
template ``hookbus/hosts/pi/extension.ts`` with what this configuration wants baked in, per native
event:

- ``argv``: ``hook_argv`` (this interpreter and hookbus's ``__main__.py`` by path, spawned
  without a shell), with ``--timeout`` the budget plus 5 s, as the command hosts get;
- ``waitMs``: the extension's own bound, 2 s past that, after which it kills hookbus
  (Pi itself would wait for ever);
- ``fallback``: the answer when hookbus cannot give one: the host's no-opinion ``{}``,
  or the refusal a fail-closed handler owes (the rule of the command hosts' fallback);
- ``tools``: the tool names an event is forwarded for (None: every one), so that an
  unwanted tool spawns nothing.

Only events an enabled handler wants are in it; with none, no file is written. The file
carries :data:`~hookbus.hosts.shared.manifest.OWNED_MARK`: a user's own ``hookbus.ts`` is never
replaced, and uninstall removes only ours (then the folders install made, while empty).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from hookbus.hosts.pi.driver import ALL_EVENTS, driver
from hookbus.hosts.pi.facts import FACTS
from hookbus.hosts.shared import grouped
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import OWNED_MARK, CommandForm, Scope, fallback, hook_argv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData
    from hookbus.hosts.shared.manifest import Plan

HOST = "pi"
FILE = "hookbus.ts"
#: The project's extensions are committed with it; the user's are theirs alone.
SCOPES: dict[Scope, bool] = {"project": True, "user": False}
#: How long past hookbus's own ``--timeout`` the extension waits before it kills it.
KILL_MARGIN = 2.0


def agent_dir() -> str:
    """Pi's user folder: ``$PI_CODING_AGENT_DIR``, else ``~/.pi/agent``."""
    found = os.environ.get("PI_CODING_AGENT_DIR")
    if found:
        return os.path.expanduser(found)
    return os.path.join(os.path.expanduser("~"), ".pi", "agent")


def extensions_dir(scope: str, project_dir: str | None = None) -> str:
    """The extension folder Pi discovers for ``scope``."""
    if scope == "user":
        return os.path.join(agent_dir(), "extensions")
    return os.path.join(project_dir or project_root(), ".pi", "extensions")


def template() -> str:
    """The extension's source, shipped as package data."""
    from importlib.resources import files

    return files("hookbus.hosts.pi").joinpath("extension.ts").read_text(encoding="utf-8")


def extension(wanted: Mapping[str, Any], server: Mapping[str, Any] | None = None) -> str:
    """The extension file for ``wanted`` (native event -> what the extension needs);
    ``server``: what a request to the warm server carries (None: the server path is off)."""
    import shlex

    from hookbus.hosts.shared.shims import with_server_client

    baked = json.dumps(wanted, indent=2, sort_keys=True)  # JSON is a JavaScript literal
    commands = "\n".join(f"//   {shlex.join(spec['argv'])}" for spec in wanted.values())
    text = template().replace("@@MARK@@", OWNED_MARK, 1).replace("@@COMMANDS@@", commands, 1)
    text = with_server_client(text).replace("@@SERVER@@", json.dumps(server), 1)
    return text.replace("@@WANTED@@", baked, 1)


class PiManifest(grouped.GroupedManifest):
    """hookbus's extension ``hookbus.ts`` in ``.pi/extensions/`` (project) or
    ``~/.pi/agent/extensions/`` (user)."""

    facts = FACTS
    scopes = SCOPES
    events = ALL_EVENTS
    driver = driver
    #: The extension asks the warm server over its socket (no process per call); a call
    #: no server answers runs the client's command. ``--no-server``: ``hookbus run`` only.
    server_default = True

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return os.path.join(extensions_dir(scope, project_dir), FILE)

    def baked(
        self, index: IndexData | None, python: str, form: CommandForm = "absolute"
    ) -> dict[str, Any]:
        """Per native event an enabled handler wants: argv, waitMs, fallback, tools; with
        the server form, argv is the warm server's client and timeout its --timeout."""
        from hookbus.hosts.shared import warm

        baked: dict[str, Any] = {}
        for native, route, guarded, budget in self.wanted(index):
            seconds, _ = self.timeouts(native, budget)
            answer = fallback(self.driver, native, guarded=guarded)
            argv = (warm.shim_argv(python, HOST, native, seconds) if form == "server"
                    else hook_argv(python, HOST, native, seconds))  # fmt: skip
            baked[native] = {
                "argv": argv,
                "waitMs": round(((seconds or 0) + KILL_MARGIN) * 1000),
                "fallback": json.loads(answer.stdout),
                "tools": route["tools"],
            }
            if form == "server":
                baked[native]["timeout"] = warm.timeout_of(argv)
        return baked

    def plan(
        self,
        index: IndexData | None,
        *,
        python: str,
        scope: Scope,
        form: CommandForm = "absolute",
        project_dir: str | None = None,
    ) -> Plan:
        from hookbus.hosts.shared import warm
        from hookbus.hosts.shared.manifest import OwnedFile, Plan

        # The extension spawns hookbus without a shell, by absolute path only: the
        # hookbus that installed it, whatever Pi's PATH holds; a missing one is the fallback.
        wanted = self.baked(index, python, form)
        if not wanted:
            return Plan()
        server = warm.server_config() if form == "server" else None
        owned = OwnedFile(path=self.path(scope, project_dir), text=extension(wanted, server))
        notes = () if form in ("absolute", "server") else (
            f"Pi's extension runs hookbus by absolute path ({python}); --command {form} "
            "does not apply to it",)  # fmt: skip
        return Plan(owned=(owned,), notes=notes)

    def owned_paths(self, scope: Scope, project_dir: str | None = None) -> tuple[str, ...]:
        return (self.path(scope, project_dir),)

    def owned_top(self, scope: Scope, project_dir: str | None = None) -> str | None:
        # .pi/extensions/: install may make both levels; .pi holds Pi's own settings too,
        # so it goes only when nothing is left in it. The user's ~/.pi/agent stays.
        folder = extensions_dir(scope, project_dir)
        return folder if scope == "user" else os.path.dirname(folder)


manifest = PiManifest()
