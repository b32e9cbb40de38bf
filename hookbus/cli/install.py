"""``hookbus manifest | install | verify | uninstall``: hookbus's entries in a host's own
settings, generated from the configuration, merged keeping everything of the user's.

Install run in a project for that project (``--scope project`` or ``local``) trusts the
project's code first, printing every file it trusts (:mod:`hookbus.cli.trust`); a
user-scope install trusts nothing. Install fails loudly, writing nothing, when the
configuration is invalid or an enabled
handler cannot be loaded (``--force`` installs anyway): a guard that silently never runs
is worse than an install that says no. Uninstall gives the user's file back as it was:
byte for byte when nothing else changed since install (the backup install made of it
before hookbus first touched it), else with only hookbus's entries taken out of it; a
file and the folders install made are removed (:mod:`hookbus.hosts.shared.folders`).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import TYPE_CHECKING, Any

from hookbus.local.interpreter import python_argv

if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData
    from hookbus.hosts.shared.manifest import CommandForm, Manifest, Scope


def add_arguments(commands: Any) -> None:
    from hookbus.hosts import HOSTS
    from hookbus.hosts.shared.manifest import COMMAND_FORMS, SCOPES

    installable = sorted(h for h, facts in HOSTS.items() if facts.manifest)

    def host_command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = commands.add_parser(name, help=help_text)
        sub.add_argument("--host", required=True, choices=installable)
        sub.add_argument(
            "--scope", choices=SCOPES, default=None,
            help="project (the default): the committed settings; local: the project's "
            "uncommitted ones (Claude: .claude/settings.local.json); user: yours, for every "
            "project (reads your user configuration only; the default of a host that has "
            "no other, Kimi)",
        )  # fmt: skip
        sub.set_defaults(main=main)
        return sub

    def command_form(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--python", help="interpreter for the hook command (default: this one)")
        sub.add_argument(
            "--command", choices=COMMAND_FORMS, dest="form",
            help="absolute: 'hookbus run' with this interpreter and hookbus by path (the "
            "default goes by path too, through the warm server's client); path: 'hookbus' "
            "found on PATH; module: 'python3' on PATH importing hookbus (both portable, "
            "for a committed file). With none of --command, --server and --no-server, a "
            "reinstall keeps the form installed",
        )  # fmt: skip
        sub.add_argument(
            "--server", action=argparse.BooleanOptionalAction, default=None,
            help="the absolute command goes through the warm server's client "
            "(hookbus/runtime/warm/client.py), which answers from a running 'hookbus serve', "
            "and runs the cold path itself and starts one when none answers (the default, but "
            "with --command and for the in-process shims of OpenCode, Kilo, Pi and Hermes, "
            "which ask the server only with --server); --no-server: 'hookbus run' itself",
        )  # fmt: skip

    def plugin(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--plugin", action="store_true",
            help="Claude only: hookbus's own plugin folder (.claude/skills/hookbus/, with the "
            "agent.spawn module when the guard is enabled) instead of the settings file",
        )  # fmt: skip

    def via(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "--via", choices=("plugin", "hooks", "both"), default=None,
            help="Hermes only: its hookbus plugin (the default), shell hooks in config.yaml "
            "(they fail open when hookbus is gone), or both",
        )  # fmt: skip

    manifest = host_command("manifest", "print the hooks block for the host's settings file")
    command_form(manifest)
    via(manifest)
    verify = host_command("verify", "check the installed entries against the configuration")
    command_form(verify)
    via(verify)
    install = host_command("install", "merge hookbus's entries into the host's settings file")
    command_form(install)
    via(install)
    install.add_argument("--dry-run", action="store_true", help="show the result, write nothing")
    install.add_argument("--force", action="store_true",
                         help="install even when a handler cannot be loaded")  # fmt: skip
    uninstall = host_command("uninstall", "remove hookbus's entries (and only those)")
    for sub in (manifest, verify, install, uninstall):
        plugin(sub)


def main(opts: argparse.Namespace) -> int:
    from hookbus.bus.errors import HostConfigError

    try:
        return _host(opts)
    except HostConfigError as exc:
        print(f"hookbus: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # a read-only folder, a full disk: said, not a traceback
        where = f" {exc.filename}" if exc.filename else ""
        print(f"hookbus: {opts.command} failed:{where}: {exc.strerror or exc}", file=sys.stderr)
        return 1


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
    from hookbus.bus.errors import HostConfigError
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


def print_problems(index: IndexData | None) -> int:
    """Print the configuration's problems; how many make it invalid. Their text quotes
    the configuration (a cloned project's names), so it is printed escaped."""
    from hookbus.cli.render import printable

    invalid = 0
    for problem in index["problems"] if index else []:
        kind = "error" if problem["invalid"] else "note"
        invalid += problem["invalid"]
        subject = f" {problem['subject']}:" if problem["subject"] else ""
        said = f"hookbus: {kind}: {problem['code']}:{subject} {problem['message']}"
        print(printable(said), file=sys.stderr)
    return invalid


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


def chosen_form(
    opts: argparse.Namespace, manifest: Manifest, installed: CommandForm | None
) -> CommandForm:
    """The form to write (or to compare with), ``installed`` being what is there now:

    - ``--command X``: X; with ``--server``, the server form, which runs this interpreter
      by path and so goes with ``--command absolute`` only;
    - else ``--server`` or ``--no-server``: the server form, or the form installed with
      the client taken out (absolute; ``path`` and ``module`` stay);
    - else what is installed: a plain reinstall keeps the user's choice;
    - else the host's default (``Manifest.server_default``): the server form where its
      hooks are shell commands, the absolute form for an in-process shim.
    """
    from hookbus.bus.errors import HostConfigError

    server = getattr(opts, "server", None)
    if server and opts.form not in (None, "absolute"):
        raise HostConfigError(f"--server runs this interpreter by path: it cannot go with "
                              f"--command {opts.form}")  # fmt: skip
    if server:
        return "server"
    if opts.form is not None:
        return opts.form  # type: ignore[no-any-return]  # argparse's choices
    if server is False:
        return "absolute" if installed in (None, "server") else installed
    if installed is not None:
        return installed
    return "server" if manifest.server_default else "absolute"


def form_flags(manifest: Manifest, form: CommandForm) -> str:
    """The flags that make install write ``form`` whatever is installed now (none for
    the host's default form)."""
    if form == ("server" if manifest.server_default else "absolute"):
        return ""
    if form in ("server", "absolute"):
        return " --server" if form == "server" else " --no-server"
    return f" --command {form}"


def _checked_python(python: str | None) -> str:
    """The interpreter for the hook command; one that cannot run hookbus the way the command
    does (``-P`` needs Python 3.11, and exits 2, a block, before that) is refused."""
    import subprocess

    from hookbus.bus.errors import HostConfigError

    if python is None:
        return sys.executable
    import shutil

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


def _host(opts: argparse.Namespace) -> int:
    manifest = _manifest(opts)
    if opts.scope is None:  # a host with one scope only (Kimi's user file) needs no flag
        opts.scope = "project" if "project" in manifest.scopes else next(iter(manifest.scopes))
    scope: Scope = opts.scope
    if scope not in manifest.scopes:
        from hookbus.bus.errors import HostConfigError

        raise HostConfigError(f"{opts.host} has no {scope} settings; scopes: "
                              f"{', '.join(manifest.scopes)}")  # fmt: skip
    if opts.command in ("install", "uninstall"):
        _refuse_links_out(opts, manifest, scope)
    if opts.command == "uninstall":
        # Before any handler is imported: uninstall is the way out of a handler module
        # that hangs or ends its importer.
        status = _uninstall(manifest, scope, opts.host)
        _uninstall_other_variants(opts, scope)
        return status
    if opts.command in ("install", "verify"):
        _check_variants(opts)
    if opts.command == "install" and not opts.dry_run and scope != "user":
        # Run in a project, a project or local install trusts its code (printing what it
        # trusts): the user installing hooks for that project is the user choosing it. A
        # user-scope install reads the user's configuration only and is about no project:
        # run inside a cloned repository, it must not trust the strangers' code there.
        from hookbus.cli.trust import trust_for_install

        trust_for_install()
    files = config_files(scope, manifest)
    if not files and opts.command == "install":
        # Nothing to install because nothing was found is a mistake (a misnamed file, the
        # wrong scope), not an empty configuration of the user's: said, and exit 1.
        from hookbus.cli.unconfigured import explain

        print("\n".join(explain(scope, tuple(manifest.scopes), f"hookbus install --host "
                                 f"{opts.host}")), file=sys.stderr)  # fmt: skip
        return 1
    index = compiled_index(files)
    invalid = print_problems(index)
    python = _checked_python(opts.python)
    if opts.command == "verify":
        return _verify(opts, manifest, index, python, invalid)
    form = chosen_form(opts, manifest, _installed(manifest, index, python, scope, opts))
    plan = manifest.plan(index, python=python, scope=scope, form=form, **_via(opts))
    if opts.command == "manifest":
        import json

        for document in plan.documents:
            print(json.dumps({"hooks": document.entries}, indent=2))
        for owned in plan.owned:
            # A host configured by whole files (Cline's hook scripts): each file as written.
            mode = "executable" if owned.executable else "not executable"
            text = owned.text if owned.text.endswith("\n") else owned.text + "\n"
            print(f"# {owned.path} ({mode})\n{text}", end="")
        return 0
    if invalid and not opts.force:
        print(f"hookbus: not installed: {_count(invalid, 'problem')} above would make hooks "
              "misbehave; fix them and run install again, or install anyway with --force",
              file=sys.stderr)  # fmt: skip
        return 1
    return _install(opts, manifest, plan, scope, form, python)


def form_in_effect(manifest: Manifest, index: IndexData | None) -> CommandForm:
    """The form of the command the host runs for this project: the first of its scopes
    where hookbus is installed (the host runs every scope's hooks), else the form
    ``install`` would write."""
    for scope in manifest.scopes:
        form = _installed(manifest, index, sys.executable, scope, argparse.Namespace())
        if form is not None:
            return form
    return "server" if manifest.server_default else "absolute"


def _installed(
    manifest: Manifest,
    index: IndexData | None,
    python: str,
    scope: Scope,
    opts: argparse.Namespace,
) -> CommandForm | None:
    """The form installed in ``scope`` now: the hook files hookbus owns first (Hermes's
    plugin has the form; its shell hooks in ``config.yaml`` are ``hookbus run`` in every
    form), then the settings files' entries."""
    from hookbus.bus.errors import HostConfigError
    from hookbus.hosts.shared import documents

    owned = owned_form(manifest, scope)
    if owned is not None:
        return owned
    probe = manifest.plan(index, python=python, scope=scope, **_via(opts))
    for document in probe.documents:
        try:
            _, current = documents.read(document.path, document.format)
        except HostConfigError:
            continue  # install refuses the file, saying why; manifest only prints
        form = installed_form(manifest, current)
        if form is not None:
            return form
    return None


def _refuse_links_out(opts: argparse.Namespace, manifest: Manifest, scope: Scope) -> None:
    """Refuse, before anything changes, a project or local install or uninstall whose files
    would be reached through a link leading out of the project (an agent's ``.claude``
    linked to the user's ``~/.claude``: :mod:`hookbus.hosts.shared.confine`). Uninstall
    checks every variant of the host, as it removes each found in ``scope``."""
    from hookbus.bus.errors import HostConfigError
    from hookbus.cli.render import printable
    from hookbus.hosts.shared import confine
    from hookbus.hosts.shared.variants import variants

    if scope == "user":
        return
    manifests = [manifest] if opts.command == "install" else [
        v.manifest for v in variants(opts.host) if scope in v.manifest.scopes]  # fmt: skip
    project = confine.project_folder()
    found = confine.link_out([p for m in manifests for p in confine.paths(m, scope)], project)
    if found is None:
        return
    link, leads = found
    verb = opts.command
    raise HostConfigError(printable(
        f"not {verb}ed, nothing changed: {link} is a link to {leads}, outside the project "
        f"{project}: the {scope} {verb} would change the files there (your own settings, "
        f"if it leads to them). Fix: remove the link (rm {shlex.quote(link)}) and run the "
        f"command again; to {verb} your own settings: hookbus {verb} --host {opts.host} "
        "--scope user"
    ))  # fmt: skip


def _manifest(opts: argparse.Namespace) -> Manifest:
    """The host's manifest; with ``--plugin``, its plugin folder's (Claude's)."""
    from hookbus.hosts.shared.variants import variant

    return variant(opts.host, plugin=getattr(opts, "plugin", False)).manifest


def _check_variants(opts: argparse.Namespace) -> None:
    """Install refuses to add a host's settings where its plugin is installed, or the
    plugin where its settings are (:mod:`hookbus.hosts.shared.variants`): the host would run
    both. Verify of the one installed nowhere names the command that checks the other."""
    from hookbus.bus.errors import HostConfigError
    from hookbus.hosts.shared.variants import folder, installed, variant

    chosen = variant(opts.host, plugin=getattr(opts, "plugin", False)).name
    others = installed(opts.host, besides=chosen)
    if not others:
        return
    other = others[0]
    where = (f"{folder(other.paths)} holds hookbus's hooks for {opts.host} (written by "
             f"'{other.command('install')}')")  # fmt: skip
    if opts.command == "install":
        raise HostConfigError(
            f"not installed: {where}, and {opts.host} runs both: every handler would run "
            f"twice. To switch, run '{other.command('uninstall')}' first; to update that "
            f"install, run '{other.command('install')}'"
        )
    if len(installed(opts.host)) == len(others):  # the one to verify is installed nowhere
        raise HostConfigError(f"{where}; to check it, run '{other.command('verify')}'")


def _uninstall_other_variants(opts: argparse.Namespace, scope: Scope) -> None:
    """After a plain uninstall, the host's plugin (Claude's) is removed from ``scope``
    too, and one installed in another scope is named with the command that removes it:
    the host would go on running its hooks."""
    from hookbus.hosts.shared.variants import folder, installed

    if getattr(opts, "plugin", False):
        return
    for found in installed(opts.host, besides="default"):
        if found.scope == scope:
            _uninstall(found.variant.manifest, scope, opts.host)
        else:
            print(f"{folder(found.paths)}: hookbus's {found.variant.name} is still installed "
                  f"for {opts.host}; '{found.command('uninstall')}' removes it")  # fmt: skip


def _via(opts: argparse.Namespace) -> dict[str, Any]:
    """``--via`` for the manifest that has it (Hermes: plugin or shell hooks)."""
    from hookbus.bus.errors import HostConfigError

    via = getattr(opts, "via", None)
    if via is None:
        return {}
    if opts.host != "hermes":
        raise HostConfigError(f"--via is for --host hermes only, not {opts.host}")
    return {"via": via}


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def _install(  # noqa: PLR0917
    opts: argparse.Namespace,
    manifest: Manifest,
    plan: Any,
    scope: Scope,
    form: CommandForm,
    python: str,
) -> int:
    import copy

    from hookbus.hosts.shared import documents
    from hookbus.hosts.shared.manifest import write_atomically

    for document in plan.documents:
        path = document.path
        text, current = documents.read(path, document.format)
        manifest.check(path, current)
        if not document.entries and text is None:
            # An empty settings file is not free: Claude Code reads it on every start.
            print(f"{path}: no enabled handler wants a {opts.host} event; nothing to install")
            continue
        wanted = manifest.merge(copy.deepcopy(current), document.entries)
        if wanted == current and text is not None:
            print(f"{path}: already up to date")
            continue
        new = documents.dump(wanted, document.format, original=text)
        if opts.dry_run:
            sys.stdout.write(new)
            continue
        # A file with nothing of hookbus's in it is the user's own: kept as the backup.
        # One holding hookbus's entries already (a reinstall) is not, whoever made it.
        backup = write_atomically(path, new, backup=text is not None and
                                  not holds_ours(manifest, current))  # fmt: skip
        print(f"{path}: installed hookbus entries" + (f" (your original: {backup})" if backup
              else ""))  # fmt: skip
        if manifest.scopes[scope]:
            _say_shared(path, python, form, local="local" in manifest.scopes)
        if scope == "local":
            _warn_unignored(path)
    if plan.owned or manifest.owned_paths(scope):
        from hookbus.hosts.shared import owned

        for line in owned.install(plan.owned, manifest.owned_paths(scope), dry_run=opts.dry_run):
            print(line)
        if not plan.owned and not any(d.entries for d in plan.documents):
            print(f"no enabled handler wants a {opts.host} event; no hook file to install")
    if not opts.dry_run and _record_hook_files(
        opts.host, scope, [d.path for d in plan.documents] + [o.path for o in plan.owned]
    ):
        # The index watches the trust store it was compiled with: compiled again now,
        # so that the first hook does not find it stale.
        compiled_index(config_files(scope, manifest))
    if form == "server" and not opts.dry_run:
        _cache_client(python)
    if form in ("absolute", "server"):
        _warn_code_in_project(python)
    for note in plan.notes:
        print(f"note: {note}")
    for item in plan.prefetch:
        if opts.dry_run:
            print(f"{item.folder}: would install {item.package} with npm, as {item.host} would")
            continue
        from hookbus.hosts.shared import npm

        done, said = npm.install(item)
        print(said if done else f"note: {said}")
    return 0


def _record_hook_files(host: str, scope: Scope, paths: list[str], *, forget: bool = False) -> bool:
    """Record (or, uninstalling, ``forget``) in the trust store the bytes of the hooks
    files of ``host`` in a project: a Claude command run by that host stands aside for
    them only as install wrote them (:mod:`hookbus.hosts.shared.native_install`). Whether the
    store may have changed."""
    from hookbus.hosts.shared.native_install import STANDS_ASIDE_FOR
    from hookbus.local import project_trust

    if host not in STANDS_ASIDE_FOR or scope == "user":
        return False
    for path in paths:
        if forget or not os.path.isfile(path):
            project_trust.forget_hook_file(path)
        else:
            project_trust.record_hook_file(path)
    return bool(paths)


def _cache_client(python: str) -> None:
    """Import the client once as the command will, so its bytecode is cached before the
    first hook (a package folder the hook cannot write to would compile it every call)."""
    import subprocess

    from hookbus.hosts.shared.manifest import client_folder, hookbus_file

    folder = client_folder(os.path.dirname(hookbus_file(python)))
    code = "import sys; sys.path.insert(0, sys.argv[1]); import client"
    subprocess.run([python, "-I", "-S", "-c", code, folder], capture_output=True, timeout=30,
                   check=False)  # fmt: skip


def shared_file(tracked: bool | None) -> str:
    """What a settings file shared with the project is, as git has it (``tracked``:
    :func:`git_tracks`)."""
    if tracked is None:
        return "the project's shared settings file (not in a git repository)"
    if tracked:
        return "committed with the project"
    return "the project's shared settings file, not tracked by git yet"


def _say_shared(path: str, python: str, form: CommandForm, *, local: bool = True) -> None:
    """What a person must know of a settings file shared with the project: whether git
    shares it yet, and that the absolute forms name this machine's interpreter."""
    tracked = git_tracks(path)
    where = f"is {shared_file(tracked)}"
    if form not in ("absolute", "server"):
        if tracked is False:  # the portable forms are made to be committed
            print(f"hookbus: note: {path} {where}; to share these hooks with the project: "
                  f"git add {shlex.quote(path)}", file=sys.stderr)  # fmt: skip
        return
    # A host without a local scope (Codex) has only the portable forms to offer.
    rest = "; or keep this machine's commands out of the repository with --scope local." \
        if local else "."  # fmt: skip
    print(
        f"hookbus: warning: {path} {where}, and its commands name this machine's "
        f"interpreter ({python}). Elsewhere they answer no opinion (a deny where a "
        "fail-closed handler is installed) until 'hookbus install' is run there. For "
        "commands that work on every machine with hookbus installed, install with --command "
        "path ('hookbus' on PATH) or --command module ('python3' on PATH), a few "
        f"milliseconds slower per hook{rest}",
        file=sys.stderr,
    )


def git_tracks(path: str) -> bool | None:
    """Whether git tracks ``path`` (in its index); None when it lies in no repository
    (or git cannot be run)."""
    code = _git("ls-files", "--error-unmatch", "--", path, cwd=os.path.dirname(path))
    if code == 0:
        return True
    # "did not match any file(s) known to git" (1) in a repository; 128 outside one.
    return False if code == 1 else None


def _git(*args: str, cwd: str) -> int | None:
    """The exit code of ``git ARGS`` in ``cwd`` (None when git cannot be run). The
    repository's own configuration is the project's, which an agent can write: its
    ``core.fsmonitor`` is a command git would run, as the user, for these index reads;
    it is turned off for hookbus's calls."""
    import subprocess

    try:
        return subprocess.run(["git", "-c", "core.fsmonitor=false", *args], cwd=cwd,
                              capture_output=True, timeout=30, check=False).returncode  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None


def _warn_code_in_project(python: str) -> None:
    """Say loudly when the interpreter or hookbus the command runs lie in the project
    install is run in: an agent working there could edit the hook's own code. Not a
    refusal: the hooks still run, and an install in a project's venv is a choice of the
    user's; the warning names the fix, and doctor reports it as a problem until fixed."""
    from hookbus.hosts.shared.manifest import hookbus_file
    from hookbus.local import project_trust
    from hookbus.local.discover import working_folder

    project = project_trust.project_folder(working_folder())
    package = os.path.dirname(hookbus_file(python))
    places = project_trust.hook_code_in_project(python, package, project)
    if places:
        print(f"hookbus: warning: {project_trust.hook_code_warning(places, project)}; "
              f"{project_trust.HOOK_CODE_FIX}", file=sys.stderr)  # fmt: skip


def _warn_unignored(path: str) -> None:
    """A local settings file must stay out of the repository: say so when git would add it."""
    if _git("check-ignore", "-q", path, cwd=os.path.dirname(path)) == 1:
        # In a repository, and not ignored.
        print(f"hookbus: warning: {path} is not ignored by git; add it to .gitignore",
              file=sys.stderr)  # fmt: skip


def _verify(
    opts: argparse.Namespace,
    manifest: Manifest,
    index: IndexData | None,
    python: str,
    invalid: int,
) -> int:
    from hookbus.hosts.shared import documents
    from hookbus.hosts.shared.variants import variant

    scope: Scope = opts.scope
    status = 1 if invalid else 0
    plugin = variant(opts.host, plugin=getattr(opts, "plugin", False)).flag
    probe = manifest.plan(index, python=python, scope=scope, **_via(opts))
    for document in probe.documents:
        _, current = documents.read(document.path, document.format)
        manifest.check(document.path, current)
        form = chosen_form(opts, manifest, installed_form(manifest, current))
        (wanted,) = [d for d in manifest.plan(index, python=python, scope=scope, form=form,
                                              **_via(opts)).documents
                     if d.path == document.path]  # fmt: skip
        problems = manifest.drift(current, wanted.entries)
        for problem in grouped(problems):
            print(f"  {problem}")
        if problems:
            status = 1
            flags = plugin + (f" --scope {scope}" if scope != "project" else "")
            flags += form_flags(manifest, form)
            fix = drift_fix(invalid, f"hookbus install --host {opts.host}{flags}")
            print(f"{document.path}: {_count(len(problems), 'difference')} from the "
                  f"configuration; fix: {fix}")  # fmt: skip
        else:
            print(f"{document.path}: up to date")
    candidates = manifest.owned_paths(scope)
    if candidates:
        from hookbus.hosts.shared import owned

        form = chosen_form(opts, manifest, owned_form(manifest, scope))
        wanted_files = manifest.plan(index, python=python, scope=scope, form=form,
                                     **_via(opts)).owned  # fmt: skip
        problems = owned.drift(wanted_files, candidates)
        for problem in grouped(problems):
            print(f"  {problem}")
        folder = os.path.dirname(candidates[0])
        if problems:
            status = 1
            flags = plugin + (f" --scope {scope}" if scope != "project" else "")
            flags += form_flags(manifest, form)
            fix = drift_fix(invalid, f"hookbus install --host {opts.host}{flags}")
            print(f"{folder}: {_count(len(problems), 'difference')} from the configuration; "
                  f"fix: {fix}")  # fmt: skip
        else:
            print(f"{folder}: up to date")
    if invalid:
        print(f"hookbus: {_count(invalid, 'configuration problem')} (above) would make "
              "hooks misbehave", file=sys.stderr)  # fmt: skip
    return status


def grouped(problems: list[str]) -> list[str]:
    """``problems`` (:meth:`Manifest.drift`'s lines) with the events that are missing said
    in one line: a handler that did not load may want any event, and makes every event
    of the host missing."""
    said = " is not registered"
    missing = [p.removeprefix("missing: ").partition(said)[0] for p in problems
               if p.startswith("missing: ") and said in p]  # fmt: skip
    if len(missing) < 2:
        return problems
    rest = [p for p in problems if not (p.startswith("missing: ") and said in p)]
    return [f"missing: {', '.join(missing)} (not registered, but an enabled handler may "
            "want them)", *rest]  # fmt: skip


def drift_fix(invalid: int, install: str) -> str:
    """What to do about a difference from the configuration: run ``install`` (the
    command that writes it), unless the configuration has ``invalid`` problems: then
    install refuses, and the difference may be that problem's (a handler that did not
    load may want every event), so the problem is fixed first."""
    if invalid:
        return (f"fix the configuration's {_count(invalid, 'problem')} (above) first: "
                "install refuses until then")  # fmt: skip
    return f"run: {install}"


def _uninstall(manifest: Manifest, scope: Scope, host: str) -> int:
    import copy

    from hookbus.hosts.shared import confine, documents, folders
    from hookbus.hosts.shared.manifest import backup_path, write_atomically

    plan = manifest.plan(None, python=sys.executable, scope=scope)
    for document in plan.documents:
        path = document.path
        text, current = documents.read(path, document.format)
        manifest.check(path, current)
        wanted = manifest.without_ours(copy.deepcopy(current))
        if text is None or wanted == current:
            print(f"{path}: no hookbus entries")
            continue
        backup = backup_path(path)
        original = _original(manifest, backup, document.format)
        if original is not None and _unchanged_since(manifest, original, wanted, document.format):
            # Nothing else changed since install: the user's own bytes, exactly.
            write_atomically(path, original)
            os.unlink(backup)
            print(f"{path}: removed hookbus entries (your original file is back as it was)")
        elif original is None and not wanted:
            # Through a link of the user's own (user scope: _refuse_links_out refused
            # the project's leading out), the file install created is the link's target.
            os.unlink(os.path.realpath(path))
            print(f"{path}: removed (hookbus created it)")
            made = os.path.dirname(os.path.realpath(path))
            for each in folders.prune(made, within=confine.bound(scope, made)):
                print(f"{each}: removed (hookbus made it)")
        else:
            write_atomically(path, documents.dump(wanted, document.format, original=text))
            kept = f" (your file as it was before install: {backup})" if original else ""
            print(f"{path}: removed hookbus entries{kept}")
    candidates = manifest.owned_paths(scope)
    _record_hook_files(host, scope, [d.path for d in plan.documents] + list(candidates),
                       forget=True)  # fmt: skip
    if candidates:
        from hookbus.hosts.shared import owned

        lines = owned.remove(candidates, scope, manifest.owned_top(scope))
        for line in lines:
            print(line)
        if not lines:
            print(f"{os.path.dirname(candidates[0])}: no hookbus files")
    return 0


def holds_ours(manifest: Manifest, document: dict[str, Any]) -> bool:
    """Whether ``document`` has anything of hookbus's in it: what its drift from a
    configuration that wants nothing finds (an empty container of the user's is not)."""
    return bool(manifest.drift(document, {}))


def _unchanged_since(manifest: Manifest, original: bytes, wanted: dict[str, Any], fmt: Any) -> bool:
    """True when ``wanted`` (the file now, without hookbus's entries) is the backup's
    ``original`` without them: nothing of the user's changed since install. Compared the
    same way on both sides (an empty ``"hooks": {}`` of the user's is kept by neither),
    and as JSON values (``1`` is not ``true``)."""
    import copy

    from hookbus.hosts.shared import documents

    before = documents.CODECS[fmt].load(original.decode("utf-8"))
    return documents.same(manifest.without_ours(copy.deepcopy(before)), wanted)


def _original(manifest: Manifest, path: str, fmt: Any) -> bytes | None:
    """The backup install made of the user's file at ``path``, when it exists, can be read
    and holds nothing of hookbus's. One that does (an earlier version backed up its own
    file on a changed reinstall) is no original of the user's: it is removed, and
    uninstall takes hookbus's entries out of the file as it is."""
    from hookbus.hosts.shared import documents

    try:
        with open(path, "rb") as f:
            data = f.read()
        document = documents.CODECS[fmt].load(data.decode("utf-8"))
    except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    if holds_ours(manifest, document):
        os.unlink(path)
        return None
    return data
