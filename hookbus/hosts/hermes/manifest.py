"""Hermes Agent: hookbus's plugin (the default) or a shell-hook block, in the user's
Hermes home (``$HERMES_HOME``, else ``~/.hermes``; Hermes has no project settings, so
the one install serves every project, and install follows the configuration in effect
where it is run: the user's and the project's there).

- ``--via plugin`` (the default): hookbus writes its own directory plugin,
  ``plugins/hookbus/{plugin.yaml,__init__.py}`` (:mod:`hookbus.hosts.hermes.plugin` with every
  event's command baked in, and what each configuration an install saw wants, with its
  fallbacks), and lists ``hookbus`` in ``plugins.enabled`` of ``config.yaml`` (user
  plugins are opt-in, ``hermes_cli/plugins.py``). Each call asks the configuration in
  effect in its working folder. When hookbus cannot answer, the plugin answers the
  fallback itself: a fail-closed handler's block survives a removed hookbus.
- ``--via hooks``: entries in ``config.yaml`` ``hooks:`` (``agent/shell_hooks.py``):
  ``{command, matcher?, timeout}`` per event. Hermes runs the command through
  ``shlex.split`` with no shell, so there is no shell fallback: when hookbus is gone the
  spawn fails, Hermes logs a warning and the call goes on (fail-open), even where a
  fail-closed handler wants the event. Hermes also asks consent for each new hook command,
  and a non-interactive run silently skips one not yet approved (``--accept-hooks``,
  ``HERMES_ACCEPT_HOOKS=1`` or ``hooks_auto_accept: true``). ``matcher`` is a regex Hermes
  tests with ``fullmatch`` (tool events only); ``timeout`` is whole seconds.
- ``--via both``: both (each event is then handled twice: for tests and migrations).

Without ``--via``, install (and verify) keep what is installed, the plugin at first.

``config.yaml`` is merged round-trip (ruamel.yaml): the user's comments, keys, plugins and
hooks stay as they are. Never imported on a hook's path.
"""

from __future__ import annotations

import functools
import os
import pprint
import shlex
from collections.abc import Mapping
from typing import Any, Literal

from hookbus.hosts.hermes.driver import ALL_EVENTS, driver
from hookbus.hosts.hermes.facts import FACTS
from hookbus.hosts.shared import grouped
from hookbus.hosts.shared.manifest import (
    MAIN_AT,
    OWNED_MARK,
    CommandForm,
    Scope,
    fallback,
    is_hookbus_command,
    owned_text,
    shell_command,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData, ToolsData
    from hookbus.hosts.shared.manifest import Plan

HOST = "hermes"
PLUGIN = "hookbus"
Via = Literal["plugin", "hooks", "both"]
VIAS: tuple[Via, ...] = ("plugin", "hooks", "both")
SCOPES: dict[Scope, bool] = {"user": False}
#: Seconds the plugin waits for hookbus, and a shell hook's ``timeout``.
BOUND = 10
NOTE = f"{OWNED_MARK}: written by 'hookbus install --host hermes', removed by its uninstall"
EVERY_SESSION = (
    "the hookbus plugin serves every Hermes session, whatever folder it runs in: each call "
    "goes to hookbus with the session's working folder, so the configuration in effect "
    "there applies (yours, and a project's .hookbus.toml, whose own code runs once you "
    "trust it with 'hookbus trust' in that folder); Hermes loads it when it next starts"
)
CONSENT = (
    "Hermes asks before it first runs each new shell hook, and a non-interactive run skips "
    "one not approved yet: approve them once in 'hermes', or run with --accept-hooks, "
    "HERMES_ACCEPT_HOOKS=1, or 'hooks_auto_accept: true' in config.yaml"
)


def hermes_home() -> str:
    """Hermes's home (``hermes_constants.get_hermes_home``): ``$HERMES_HOME``, else
    ``~/.hermes``."""
    return os.environ.get("HERMES_HOME") or os.path.join(os.path.expanduser("~"), ".hermes")


def fullmatch(tools: ToolsData | None) -> str | None:
    """A regex Hermes's ``fullmatch`` takes for exactly an index route's tools; None: all."""
    import re

    if tools is None or tools.get("unknown"):
        return None
    alternatives = [re.escape(n) for n in tools["names"]]
    alternatives += [f"{re.escape(p)}.*" for p in tools["prefixes"]]
    return "|".join(alternatives) or "(?!)"


class Wanted:
    """One native event an enabled handler wants: its tools and whether it is guarded."""

    __slots__ = ("guarded", "native", "tools")

    def __init__(self, native: str, tools: str | None, guarded: bool) -> None:
        self.native, self.tools, self.guarded = native, tools, guarded


def wanted(index: IndexData | None) -> list[Wanted]:
    """The events to register, in Hermes's order, as the command hosts' manifests choose
    them (a handler of unknown declaration counts as a guard on every refusable event)."""
    return [
        Wanted(native, fullmatch(route["tools"]) if native.endswith("_tool_call") else None,
               guarded)
        for native, route, guarded, _ in grouped.wanted(HOST, ALL_EVENTS, index)
    ]  # fmt: skip


def shell_hook(event: Wanted, argv: list[str]) -> str:
    """The ``config.yaml`` command for ``event``. Hermes splits it with ``shlex`` and runs
    it without a shell (``agent/shell_hooks.py``), so the command names ``/bin/sh`` itself:
    the command hosts' script (:func:`~hookbus.hosts.shared.manifest.shell_command`), which
    answers the event's fallback (no opinion, or the block a fail-closed handler owes)
    when hookbus's interpreter or package is gone, where Hermes would run the tool."""
    answer = fallback(driver, event.native, guarded=event.guarded)
    return shlex.join(["/bin/sh", "-c", shell_command(argv, answer, requires=(argv[MAIN_AT],))])


@functools.cache
def interpreter(python: str) -> str:
    """``python``'s own ``sys.executable``: the interpreter whose subscription index the
    hook calls it runs compile and read. ``python`` itself, but for a wrapper that runs
    another (pyenv's shim, a script that execs one); ``python`` when it cannot tell."""
    import subprocess
    import sys

    from hookbus.local.interpreter import python_argv

    if python == sys.executable:
        return python
    try:
        probe = subprocess.run(python_argv(python, "-c", "import sys; print(sys.executable)"),
                               capture_output=True, text=True, timeout=30, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return python
    return probe.stdout.strip() or python


def installs(
    index: IndexData | None, events: list[Wanted], installed: str | None
) -> dict[str, Any]:
    """What each configuration an install saw wants, with the answer owed when hookbus
    cannot answer (:func:`hookbus.hosts.hermes.plugin.owed`): the installed plugin's, with this
    install's (keyed by its project's folder, "" for none) in place of its earlier one,
    and without those of projects whose ``.hookbus.toml`` is gone. A refusal owed in one
    project is kept when installing in another: only hookbus can tell which applies."""
    from hookbus.local.discover import PROJECT_FILE, is_project_file

    files = [str(c[0]) for c in index["configs"]] if index else []
    here = next((os.path.dirname(f) for f in files if is_project_file(f)), "")
    found = {k: v for k, v in baked_installs(installed).items()
             if k != here and (not k or os.path.isfile(os.path.join(k, PROJECT_FILE)))}  # fmt: skip
    mine = {w.native: {"fallback": fallback(driver, w.native, guarded=w.guarded).stdout.decode(),
                       "tools": w.tools} for w in events}  # fmt: skip
    if mine:
        found[here] = mine
    return dict(sorted(found.items()))


def baked_installs(text: str | None) -> dict[str, Any]:
    """The ``wanted`` of an installed plugin's text (:func:`plugin_text`); empty when
    there is none or it is not of the shape this version writes."""
    import ast

    try:
        for node in ast.parse(text or "").body:
            if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "BAKED":
                found = ast.literal_eval(node.value) if node.value is not None else None
                wanted = found.get("wanted") if isinstance(found, dict) else None
                if isinstance(wanted, dict) and all(
                    isinstance(k, str) and isinstance(v, dict) and all(
                        isinstance(e, dict) and isinstance(e.get("fallback"), str)
                        for e in v.values())
                    for k, v in wanted.items()
                ):  # fmt: skip
                    return wanted
    except (SyntaxError, ValueError):
        pass
    return {}


def untrusted_note(config: str) -> str:
    """What install says of a project file whose own code is not trusted: install found
    none of its handlers, and Hermes runs none of them, until the user trusts them."""
    from hookbus.local.project_trust import fix_for

    fix = f"{fix_for(config)} && hookbus install --host {HOST}"
    return f"{config}: none of its own handlers run in Hermes until you trust them: {fix}"


def plugin_text(baked: dict[str, Any]) -> str:
    """:mod:`hookbus.hosts.hermes.plugin` with ``baked`` in place of ``BAKED = None``."""
    from importlib import resources

    source = resources.files("hookbus.hosts.hermes").joinpath("plugin.py").read_text("utf-8")
    line = "BAKED: dict[str, Any] | None = None\n"
    if line not in source:
        raise RuntimeError("hookbus/hosts/hermes/plugin.py lost its BAKED line")
    literal = pprint.pformat(baked, width=160, sort_dicts=False)
    return f"# {NOTE}\n" + source.replace(line, f"BAKED: dict[str, Any] | None = {literal}\n")


class HermesManifest:
    facts = FACTS
    scopes = SCOPES
    #: Its plugin asks the warm server through the client's functions, in Hermes's own
    #: process; a call no server answers runs the client's command. ``--no-server``:
    #: ``hookbus run`` only (its shell hooks are ``hookbus run`` in every form).
    server_default = True
    #: Its one install, in the user's Hermes home, serves every project: each call asks
    #: hookbus with its working folder (:func:`hookbus.install.plan.config_files`).
    every_project = True

    def installed_via(self) -> Via:
        """How hookbus is installed now (plugin, hooks or both), so that installing again
        keeps it; the plugin when nothing of hookbus's is in ``config.yaml``."""
        from hookbus.hosts.shared import documents

        try:
            _, current = documents.read(os.path.join(hermes_home(), "config.yaml"), "yaml")
        except Exception:  # unreadable: install refuses it later, saying why
            return "plugin"
        plugins = current.get("plugins")
        enabled = plugins.get("enabled") if isinstance(plugins, Mapping) else None
        listed = isinstance(enabled, list) and PLUGIN in enabled
        if not self.commands(current):
            return "plugin"
        return "both" if listed else "hooks"

    def plan(
        self,
        index: IndexData | None,
        *,
        python: str,
        scope: Scope,
        form: CommandForm = "absolute",
        project_dir: str | None = None,
        via: Via | None = None,
    ) -> Plan:
        from hookbus.hosts.shared import warm
        from hookbus.hosts.shared.manifest import (
            Document,
            OwnedFile,
            Plan,
            client_file,
            hook_argv,
            hookbus_file,
        )

        via = via or self.installed_via()
        events = wanted(index)
        timeout = self.facts.default_timeout
        argv = {n: hook_argv(python, HOST, n, timeout) for n in ALL_EVENTS}
        # The plugin with the server form: the warm server first, over its socket (the
        # client's functions, loaded from the client's file); when none answers, the
        # client's command (the cold path, and a server started for the next call).
        # Shell hooks keep ``hookbus run``: Hermes runs them without the shell wrapper
        # that answers a client's exit 1.
        served = {n: warm.shim_argv(python, HOST, n, timeout)
                  for n in ALL_EVENTS} if form == "server" else argv  # fmt: skip
        entries: dict[str, Any] = {}
        owned: tuple[OwnedFile, ...] = ()
        notes: list[str] = []
        manifest_path, init_path = self.owned_paths(scope)
        installed = owned_text(init_path)
        # One plugin serves every Hermes session (Hermes reads plugins from the user's
        # home only), so it registers every event, and each call asks the configuration
        # in effect in its own working folder: installed once something wants an event
        # here, and kept by an install where nothing does (another project may want it).
        if via in ("plugin", "both") and (events or installed is not None):
            baked: dict[str, Any] = {
                "bound": float(BOUND),
                "python": interpreter(python),
                "client": client_file(os.path.dirname(hookbus_file(python))),
                "project": self.facts.project_word,
                "events": {n: {"argv": served[n]} for n in ALL_EVENTS},
                "wanted": installs(index, events, installed),
            }
            if form == "server":
                baked["server"] = {"timeout": warm.timeout_of(served[ALL_EVENTS[0]])}
            # kind: said, not guessed (hermes_cli/plugins.py sniffs __init__.py otherwise).
            yaml = f"# {NOTE}\nname: {PLUGIN}\nversion: 1\ndescription: hookbus\n"
            yaml += "kind: standalone\n"
            yaml += "provides_hooks: [" + ", ".join(ALL_EVENTS) + "]\n"
            # What each event runs, for people and for ``hookbus try`` (Hermes reads
            # only the keys it knows); folded scalars keep a quoted path shell-readable.
            yaml += "commands:\n" + "".join(
                f"  {n}: >-\n    {shlex.join(served[n])}\n" for n in ALL_EVENTS
            )
            owned = (OwnedFile(path=manifest_path, text=yaml),
                     OwnedFile(path=init_path, text=plugin_text(baked)))  # fmt: skip
            entries["plugins"] = [PLUGIN]
            notes.append(EVERY_SESSION)
        for problem in index["problems"] if index else []:
            if problem["code"] == "config-untrusted":  # a project's own code, not trusted
                notes.append(untrusted_note(problem["subject"]))
        if events and via in ("hooks", "both"):
            hooks: dict[str, list[dict[str, Any]]] = {}
            for w in events:
                entry: dict[str, Any] = {"command": shell_hook(w, argv[w.native])}
                if w.tools is not None:
                    entry["matcher"] = w.tools
                entry["timeout"] = BOUND
                hooks[w.native] = [entry]
            entries["hooks"] = hooks
            notes.append(CONSENT)
        document = Document(path=os.path.join(hermes_home(), "config.yaml"), format="yaml",
                            entries=entries)  # fmt: skip
        return Plan(documents=(document,), owned=owned, notes=tuple(notes))

    # -- config.yaml -----------------------------------------------------------------

    def is_ours(self, entry: object) -> bool:
        return isinstance(entry, Mapping) and is_hookbus_command(entry.get("command"), HOST)

    def commands(self, document: dict[str, Any]) -> dict[str, list[str]]:
        hooks = document.get("hooks")
        found: dict[str, list[str]] = {}
        for native, entries in hooks.items() if isinstance(hooks, Mapping) else ():
            for entry in entries if isinstance(entries, list) else ():
                if self.is_ours(entry):
                    found.setdefault(native, []).append(str(entry["command"]))
        return found

    def check(self, path: str, document: dict[str, Any]) -> None:
        from hookbus.bus.errors import HostConfigError

        plugins, hooks = document.get("plugins"), document.get("hooks")
        if plugins is not None and not isinstance(plugins, Mapping):
            raise HostConfigError(f"{path}: plugins is not a mapping; fix it, nothing changed")
        enabled = plugins.get("enabled") if isinstance(plugins, Mapping) else None
        if enabled is not None and not isinstance(enabled, list):
            raise HostConfigError(f"{path}: plugins.enabled is not a list; nothing changed")
        if hooks is not None and not isinstance(hooks, Mapping):
            raise HostConfigError(f"{path}: hooks is not a mapping; fix it, nothing changed")
        for native, entries in hooks.items() if isinstance(hooks, Mapping) else ():
            if not isinstance(entries, list):
                raise HostConfigError(f"{path}: hooks.{native} is not a list; nothing changed")

    def merge(self, document: dict[str, Any], entries: Mapping[str, Any]) -> dict[str, Any]:
        document = self.without_ours(document, keep_plugin=True)
        if entries.get("plugins"):
            plugins = document.setdefault("plugins", {})
            enabled = plugins.setdefault("enabled", [])
            if PLUGIN not in enabled:
                enabled.append(PLUGIN)
        elif isinstance(document.get("plugins"), Mapping):
            self._disable(document)
        for native, ours in entries.get("hooks", {}).items():
            hooks = document.setdefault("hooks", {})
            hooks.setdefault(native, []).extend(ours)
        return document

    def without_ours(
        self, document: dict[str, Any], *, keep_plugin: bool = False
    ) -> dict[str, Any]:
        """``document`` without hookbus's hook entries (and, unless ``keep_plugin``,
        without ``hookbus`` in ``plugins.enabled``), emptied containers removed."""
        hooks = document.get("hooks")
        if isinstance(hooks, dict):
            for native in list(hooks):
                entries = hooks[native]
                if isinstance(entries, list) and any(self.is_ours(e) for e in entries):
                    kept = [e for e in entries if not self.is_ours(e)]
                    if kept:
                        entries[:] = kept
                    else:
                        del hooks[native]
            if not hooks:
                del document["hooks"]
        if not keep_plugin:
            self._disable(document)
        return document

    def _disable(self, document: dict[str, Any]) -> None:
        plugins = document.get("plugins")
        enabled = plugins.get("enabled") if isinstance(plugins, Mapping) else None
        if not isinstance(enabled, list) or PLUGIN not in enabled:
            return
        enabled.remove(PLUGIN)
        if not enabled:
            del plugins["enabled"]  # type: ignore[union-attr]
            if not plugins:
                del document["plugins"]

    def drift(self, document: dict[str, Any], entries: Mapping[str, Any]) -> list[str]:
        problems = []
        plugins = document.get("plugins")
        enabled = plugins.get("enabled") if isinstance(plugins, Mapping) else None
        listed = isinstance(enabled, list) and PLUGIN in enabled
        if entries.get("plugins") and not listed:
            problems.append(f"missing: {PLUGIN} is not in plugins.enabled")
        elif listed and not entries.get("plugins"):
            problems.append(f"stale: {PLUGIN} is in plugins.enabled but not wanted")
        have = self.commands(document)
        want = {n: [e["command"] for e in es] for n, es in entries.get("hooks", {}).items()}
        for native in ALL_EVENTS:
            if native in want and native not in have:
                problems.append(f"missing: {native} is not registered, but a handler wants it")
            elif native in have and native not in want:
                problems.append(f"stale: {native} is registered but no enabled handler wants it")
            elif have.get(native) != want.get(native):
                problems.append(f"changed: {native}: its command differs")
        return problems

    def owned_paths(self, scope: Scope, project_dir: str | None = None) -> tuple[str, ...]:
        folder = os.path.join(hermes_home(), "plugins", PLUGIN)
        return os.path.join(folder, "plugin.yaml"), os.path.join(folder, "__init__.py")

    def owned_top(self, scope: Scope, project_dir: str | None = None) -> str | None:
        # plugins/hookbus/, and plugins/ when install made it; never the Hermes home.
        return os.path.join(hermes_home(), "plugins")


manifest = HermesManifest()
