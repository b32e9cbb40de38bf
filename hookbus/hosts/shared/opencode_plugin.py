"""The plugin of a host of OpenCode's plugin API (OpenCode, and Kilo CLI, its descendant):
hookbus's shim, generated, verified, installed, uninstalled. Each host's manifest
(:mod:`hookbus.hosts.opencode.manifest`, :mod:`hookbus.hosts.kilo.manifest`) is
:class:`OpenCodePluginManifest` with its facts, driver, folders and npm package.

OpenCode has no command hooks; it loads every ``{plugin,plugins}/*.{js,ts}`` in each of
its config folders (the project's ``.opencode/``, the user's ``~/.config/opencode/``) into
its own process. So hookbus writes one plugin file of its own, ``plugin/hookbus.js``: the
shim ``hookbus/hosts/shared/opencode.js`` with, baked in, each native event an enabled handler
wants, the argv that runs hookbus for it (by absolute path), how long to wait for it, and
its fallback (the no-opinion, or the block a fail-closed handler owes). The file carries
:data:`~hookbus.hosts.shared.manifest.OWNED_MARK`; the user's own plugins beside it are never
opened. Kilo CLI 7.7.7 does the same from ``.kilo/plugin/`` and ``~/.config/kilo/plugin/``.

The offline pitfall (OpenCode 1.18.33, ``Npm.install`` and the plugin loader, seen by
running it): once any plugin is configured, OpenCode waits, before it loads plugins, for a
background ``npm install @opencode-ai/plugin`` in every config folder, and skips that
install only where the folder holds a ``node_modules/`` and a ``package-lock.json`` whose
root lists ``@opencode-ai/plugin``. Online that is a one-time install of a few seconds;
offline it stalls each start about 70 s. So install runs that same step itself, where a
folder lacks it (:mod:`hookbus.hosts.shared.npm`), and says what to run when it cannot; it
never fakes the package (a user's own plugin may import it).
"""

from __future__ import annotations

import json
import os
from typing import Any, ClassVar

from hookbus.hosts.shared import grouped
from hookbus.hosts.shared.grouped import project_root
from hookbus.hosts.shared.manifest import OWNED_MARK, CommandForm, Scope, fallback
from hookbus.hosts.shared.npm import Prefetch, satisfied
from hookbus.hosts.shared.opencode_api import ALL_EVENTS
from hookbus.hosts.shared.shims import shim_source, with_server_client

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData, ToolsData
    from hookbus.hosts.shared.manifest import Plan

#: The project's folder is committed with it; the user's is theirs alone.
SCOPES: dict[Scope, bool] = {"project": True, "user": False}
PLUGIN_FILE = "hookbus.js"
#: The shim waits this much longer than hookbus's own --timeout before it kills it.
SHIM_MARGIN = 2.0


def _config_text(config: dict[str, Any]) -> str:
    """The shim's CONFIG as a JavaScript literal (JSON), one line per event."""
    items = config["events"].items()
    events = ",\n".join(f"    {json.dumps(k)}: {json.dumps(v)}" for k, v in items)
    server = f',\n  "server": {json.dumps(config["server"])}' if config.get("server") else ""
    return (f'{{\n  "host": {json.dumps(config["host"])},\n  "events": {{\n{events}\n  }}'
            f"{server}\n}}")  # fmt: skip


class OpenCodePluginManifest(grouped.GroupedManifest):
    """hookbus's plugin in the project's config folder (``.opencode/plugin/``) or the
    user's (``~/.config/opencode/plugin/``); a host's own binds its facts, its driver,
    and :attr:`folder`, :attr:`user_folder` and :attr:`package`."""

    scopes = SCOPES
    events = ALL_EVENTS
    #: The plugin asks the warm server over its socket (no process per call); a call no
    #: server answers runs the client's command. ``--no-server``: ``hookbus run`` only.
    server_default = True
    #: The project's config folder, the user's under ``$XDG_CONFIG_HOME``, and the npm
    #: package the host installs into each.
    folder: ClassVar[str]
    user_folder: ClassVar[str]
    package: ClassVar[str]

    def config_dir(self, scope: Scope, project_dir: str | None) -> str:
        if scope == "user":
            xdg = os.environ.get("XDG_CONFIG_HOME")
            home = os.path.join(os.path.expanduser("~"), ".config")
            base = xdg if xdg and os.path.isabs(xdg) else home
            return os.path.join(base, self.user_folder)
        return os.path.join(project_dir or project_root(), self.folder)

    def path(self, scope: Scope, project_dir: str | None) -> str:
        return os.path.join(self.config_dir(scope, project_dir), "plugin", PLUGIN_FILE)

    def matcher(self, tools: ToolsData | None) -> str | None:
        return None

    def timeouts(self, native: str, budget: float) -> tuple[float | None, float | None]:
        return budget + 5, None

    def argv(self, python: str, native: str, seconds: float, form: CommandForm) -> list[str]:
        from hookbus.hosts.shared.manifest import MODULE_LAUNCHER, console_argv, hook_argv

        args = ["run", "--host", self.facts.name, "--event", native, "--timeout", f"{seconds:g}"]
        if form == "path":
            return console_argv(*args)
        if form == "module":
            return ["python3", "-E", "-c", MODULE_LAUNCHER, *args]
        return hook_argv(python, self.facts.name, native, seconds)

    def config(self, index: IndexData | None, python: str, form: CommandForm) -> dict[str, Any]:
        """What the shim is given: per wanted native event, its argv, wait and fallback;
        with the server form, each event's timeout and what a request to the warm server
        carries (:mod:`hookbus.hosts.shared.warm`), the argv being the client's."""
        from hookbus.hosts.shared import warm

        events: dict[str, Any] = {}
        for native, route, guarded, budget in self.wanted(index):
            seconds = self.timeouts(native, budget)[0] or budget
            answer = fallback(self.driver, native, guarded=guarded)
            tools = route["tools"]
            argv = (warm.shim_argv(python, self.facts.name, native, seconds)
                    if form == "server" else self.argv(python, native, seconds, form))  # fmt: skip
            events[native] = {
                "argv": argv,
                "wait_ms": round((seconds + SHIM_MARGIN) * 1000),
                "fallback": json.loads(answer.stdout or b"{}"),
                # The tools its handlers filter on (None: every tool), so that the shim
                # spawns nothing for a call no handler wants.
                "tools": None
                if tools is None or tools.get("unknown")
                else {"names": list(tools["names"]), "prefixes": list(tools["prefixes"])},
            }
            if form == "server":
                events[native]["timeout"] = seconds
        config: dict[str, Any] = {"host": self.facts.name, "events": events}
        if form == "server" and events:
            config["server"] = warm.server_config()
        return config

    def shim(self, config: dict[str, Any]) -> str:
        import shlex

        # Each command in shell words too: what install reads the installed form from.
        events = config["events"].items()
        commands = "\n".join(f"//   {n}: {shlex.join(e['argv'])}" for n, e in events)
        return (
            with_server_client(shim_source("opencode.js"))
            .replace("@@MARK@@", OWNED_MARK)
            .replace("@@HOST@@", self.facts.name)
            .replace("@@COMMANDS@@", commands)
            .replace("@@CONFIG@@", _config_text(config))
        )

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

        config = self.config(index, python, form)
        if not config["events"]:
            return Plan()
        owned = (OwnedFile(path=self.path(scope, project_dir), text=self.shim(config)),)
        return Plan(owned=owned, prefetch=self.prefetch(scope, project_dir))

    def prefetch(self, scope: Scope, project_dir: str | None) -> tuple[Prefetch, ...]:
        """The host's own npm install, for each config folder it would wait on that
        lacks the package (the project's and the user's; the user's alone for ``user``)."""
        folders = [self.config_dir(scope, project_dir)]
        if scope != "user":
            folders.append(self.config_dir("user", None))
        name = self.facts.name
        return tuple(Prefetch(host=name, folder=f, package=self.package, program=name)
                     for f in folders if not satisfied(f, self.package))  # fmt: skip

    def owned_paths(self, scope: Scope, project_dir: str | None = None) -> tuple[str, ...]:
        return (self.path(scope, project_dir),)

    def owned_top(self, scope: Scope, project_dir: str | None = None) -> str | None:
        # plugin/ and the config folder, when install made them and nothing else is left.
        return self.config_dir(scope, project_dir)
