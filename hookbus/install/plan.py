"""What an install follows and what it writes: the configuration of a scope and its
compiled index, the interpreter the command runs, and the command's form (what is
installed now, what a request chooses, what the host runs)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from hookbus.bus.errors import HostConfigError
from hookbus.local.interpreter import python_argv

if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData
    from hookbus.hosts.shared.manifest import CommandForm, Manifest, Scope


def manifest_of(host: str, *, plugin: bool = False) -> Manifest:
    """The host's manifest; with ``plugin``, its plugin folder's (Claude's)."""
    from hookbus.hosts.shared.variants import variant

    return variant(host, plugin=plugin).manifest


def scope_of(host: str, manifest: Manifest, scope: Scope | None) -> Scope:
    """``scope``, checked against the host's; none given: ``project``, or the one scope
    of a host that has no project settings (Kimi's user file needs no flag)."""
    if scope is None:
        return "project" if "project" in manifest.scopes else next(iter(manifest.scopes))
    if scope not in manifest.scopes:
        raise HostConfigError(f"{host} has no {scope} settings; scopes: "
                              f"{', '.join(manifest.scopes)}")  # fmt: skip
    return scope


def via(host: str, chosen: str | None) -> dict[str, Any]:
    """``--via`` for the manifest that has it (Hermes: plugin or shell hooks), as the
    keywords of its ``plan``."""
    if chosen is None:
        return {}
    if host != "hermes":
        raise HostConfigError(f"--via is for --host hermes only, not {host}")
    return {"via": chosen}


def config_files(scope: Scope, manifest: Manifest | None = None) -> list[str]:
    """The configuration an install of ``scope`` follows: the user's alone for the user's
    settings (they apply in every project, wherever install is run); the project's alone
    for a settings file committed with it (a teammate must not get the installer's own
    handlers, nor their refusals); both for the project's local settings, which are this
    machine's. ``HOOKBUS_CONFIG`` names the file for every scope. A host whose one install,
    in the user's home, serves every project by each call's working folder
    (``every_project``: Hermes) follows what is in effect where install is run, the user's
    and the project's there: that project's handlers are what its sessions get (its own
    code only once trusted, which install never does for it)."""
    from hookbus.local.discover import config_paths

    if scope == "project":
        return config_paths(project_only=True)
    if manifest is not None and manifest.every_project:
        return config_paths()
    return config_paths(user_only=scope == "user")


def compiled_index(files: list[str]) -> IndexData | None:
    """The index of ``files``, compiled (and cached) now in a child, so that the first
    hook never has to; None when there is no configuration."""
    from hookbus.runtime.compile import compile_in_child

    if not files:
        return None
    compiled = compile_in_child(files)
    if compiled is None:
        raise HostConfigError(
            "compiling the handlers' subscriptions failed (a handler module hung or ended "
            "its importer); 'hookbus log' shows which"
        )
    return compiled


def invalid(index: IndexData | None) -> int:
    """How many of the configuration's problems make it invalid (install refuses it)."""
    return sum(p["invalid"] for p in index["problems"]) if index else 0


def checked_python(python: str | None) -> str:
    """The interpreter for the hook command; one that cannot run hookbus the way the command
    does (``-P`` needs Python 3.11, and exits 2, a block, before that) is refused."""
    import shutil
    import subprocess

    if python is None:
        return sys.executable
    # The command tests the interpreter by path ([ -x ... ]) in the folder the agent works
    # in: a bare name or a relative path would never be found there.
    found = shutil.which(python)
    if found is None:
        raise HostConfigError(f"--python {python}: no such interpreter")
    python = os.path.abspath(found)
    try:
        probe = subprocess.run(python_argv(python, "-c", "import hookbus"), capture_output=True,
                               timeout=30, check=False)  # fmt: skip
    except OSError as exc:
        raise HostConfigError(f"--python {python}: cannot run it ({exc})") from None
    if probe.returncode != 0:
        raise HostConfigError(
            f"--python {python}: cannot run 'python -P -m hookbus' (Python 3.11+ with hookbus "
            f"installed is needed): {probe.stderr.decode(errors='replace').strip()[-200:]}"
        )
    return python


def installed_form(manifest: Manifest, document: dict[str, Any]) -> CommandForm | None:
    """The command form of hookbus's entries in ``document`` (None: none installed)."""
    from hookbus.hosts.shared.manifest import CLIENT_LAUNCHER, interpreter_of

    for commands in manifest.commands(document).values():
        for command in commands:
            found = interpreter_of(command)
            if found is None:
                continue
            program, main_file = found
            if main_file is not None:
                return "server" if CLIENT_LAUNCHER in command else "absolute"
            return "path" if program == "hookbus" else "module"
    return None


def owned_form(manifest: Manifest, scope: Scope) -> CommandForm | None:
    """The command form of the hook files hookbus wrote in ``scope`` (Cline's scripts, a
    plugin's ``hooks.json``); None when it wrote none, or none holding a command."""
    from hookbus.hosts.shared.manifest import form_of, owned_text

    for path in manifest.owned_paths(scope):
        text = owned_text(path)
        form = form_of(text) if text is not None else None
        if form is not None:
            return form
    return None


def installed(
    manifest: Manifest,
    index: IndexData | None,
    python: str,
    scope: Scope,
    planned: dict[str, Any] | None = None,
) -> CommandForm | None:
    """The form installed in ``scope`` now: the hook files hookbus owns first (Hermes's
    plugin has the form; its shell hooks in ``config.yaml`` are ``hookbus run`` in every
    form), then the settings files' entries. ``planned``: :func:`via`'s keywords."""
    from hookbus.hosts.shared import documents

    owned = owned_form(manifest, scope)
    if owned is not None:
        return owned
    probe = manifest.plan(index, python=python, scope=scope, **(planned or {}))
    for document in probe.documents:
        try:
            _, current = documents.read(document.path, document.format)
        except HostConfigError:
            continue  # install refuses the file, saying why; manifest only prints
        form = installed_form(manifest, current)
        if form is not None:
            return form
    return None


def default_form(manifest: Manifest) -> CommandForm:
    """The form install writes when nothing asks for another (``Manifest.server_default``):
    the server form where the host's hooks are shell commands, the absolute form for an
    in-process shim."""
    return "server" if manifest.server_default else "absolute"


def form_in_effect(manifest: Manifest, index: IndexData | None) -> CommandForm:
    """The form of the command the host runs for this project: the first of its scopes
    where hookbus is installed (the host runs every scope's hooks), else the form
    ``install`` would write."""
    for scope in manifest.scopes:
        form = installed(manifest, index, sys.executable, scope)
        if form is not None:
            return form
    return default_form(manifest)


def chosen_form(
    manifest: Manifest,
    installed: CommandForm | None,
    *,
    form: CommandForm | None = None,
    server: bool | None = None,
) -> CommandForm:
    """The form to write (or to compare with), ``installed`` being what is there now:

    - ``form`` (``--command X``): X; with ``server``, the server form, which runs this
      interpreter by path and so goes with ``--command absolute`` only;
    - else ``server`` true or false (``--server``, ``--no-server``): the server form, or
      the form installed with the client taken out (absolute; ``path`` and ``module`` stay);
    - else what is installed: a plain reinstall keeps the user's choice;
    - else the host's default (:func:`default_form`).
    """
    if server and form not in (None, "absolute"):
        raise HostConfigError(f"--server runs this interpreter by path: it cannot go with "
                              f"--command {form}")  # fmt: skip
    if server:
        return "server"
    if form is not None:
        return form
    if server is False:
        return "absolute" if installed in (None, "server") else installed
    if installed is not None:
        return installed
    return default_form(manifest)


def form_flags(manifest: Manifest, form: CommandForm) -> str:
    """The flags that make install write ``form`` whatever is installed now (none for
    the host's default form)."""
    if form == default_form(manifest):
        return ""
    if form in ("server", "absolute"):
        return " --server" if form == "server" else " --no-server"
    return f" --command {form}"


def install_command(host: str, scope: Scope, form: CommandForm, manifest: Manifest,
                    variant_flag: str = "") -> str:  # fmt: skip
    """The command that installs ``form`` into ``scope`` (the fix of a drift)."""
    flags = variant_flag + (f" --scope {scope}" if scope != "project" else "")
    return f"hookbus install --host {host}{flags}{form_flags(manifest, form)}"
