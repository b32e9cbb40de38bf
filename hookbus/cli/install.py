"""``hookbus manifest | install | verify | uninstall``: hookbus's entries in a host's own
settings, generated from the configuration, merged keeping everything of the user's. The
work is :mod:`hookbus.install`'s; this module parses the arguments and says its results.

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
import shlex
import sys
from typing import TYPE_CHECKING, Any

from hookbus.bus.errors import HostConfigError
from hookbus.install.verify import count

if TYPE_CHECKING:
    from collections.abc import Iterator

    from hookbus.bus.subscriptions import IndexData
    from hookbus.hosts.shared.manifest import CommandForm, Manifest, Plan, Scope
    from hookbus.install.write import DocumentInstalled, Removed


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
    try:
        return _host(opts)
    except HostConfigError as exc:
        print(f"hookbus: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # a read-only folder, a full disk: said, not a traceback
        where = f" {exc.filename}" if exc.filename else ""
        print(f"hookbus: {opts.command} failed:{where}: {exc.strerror or exc}", file=sys.stderr)
        return 1


def _host(opts: argparse.Namespace) -> int:
    from hookbus.install import plan as planning

    plugin: bool = getattr(opts, "plugin", False)
    manifest = planning.manifest_of(opts.host, plugin=plugin)
    scope = opts.scope = planning.scope_of(opts.host, manifest, opts.scope)
    if opts.command in ("install", "uninstall"):
        _refuse_links_out(opts.command, opts.host, manifest, scope)
    if opts.command == "uninstall":
        # Before any handler is imported: uninstall is the way out of a handler module
        # that hangs or ends its importer.
        from hookbus.install import write

        _say_removed(write.uninstall(manifest, scope, opts.host), opts.host)
        if not plugin:
            _say_removed(write.uninstall_other_variants(opts.host, scope), opts.host)
        return 0
    if opts.command in ("install", "verify"):
        _check_variants(opts.command, opts.host, plugin=plugin)
    if opts.command == "install" and not opts.dry_run and scope != "user":
        # Run in a project, a project or local install trusts its code (printing what it
        # trusts): the user installing hooks for that project is the user choosing it. A
        # user-scope install reads the user's configuration only and is about no project:
        # run inside a cloned repository, it must not trust the strangers' code there.
        from hookbus.cli.trust import trust_for_install

        trust_for_install()
    files = planning.config_files(scope, manifest)
    if not files and opts.command == "install":
        # Nothing to install because nothing was found is a mistake (a misnamed file, the
        # wrong scope), not an empty configuration of the user's: said, and exit 1.
        from hookbus.cli.unconfigured import explain

        print("\n".join(explain(scope, tuple(manifest.scopes), f"hookbus install --host "
                                 f"{opts.host}")), file=sys.stderr)  # fmt: skip
        return 1
    index = planning.compiled_index(files)
    print_problems(index)
    invalid = planning.invalid(index)
    python = planning.checked_python(opts.python)
    via = planning.via(opts.host, getattr(opts, "via", None))
    server: bool | None = getattr(opts, "server", None)
    if opts.command == "verify":
        return _verify(opts, manifest, index, python, invalid, via)
    installed = planning.installed(manifest, index, python, scope, via)
    form = planning.chosen_form(manifest, installed, form=opts.form, server=server)
    plan = manifest.plan(index, python=python, scope=scope, form=form, **via)
    if opts.command == "manifest":
        _say_plan(plan)
        return 0
    if invalid and not opts.force:
        print(f"hookbus: not installed: {count(invalid, 'problem')} above would make hooks "
              "misbehave; fix them and run install again, or install anyway with --force",
              file=sys.stderr)  # fmt: skip
        return 1
    _install(opts, manifest, plan, form, python)
    return 0


def print_problems(index: IndexData | None) -> None:
    """Print the configuration's problems. Their text quotes the configuration (a cloned
    project's names), so it is printed escaped."""
    from hookbus.cli.render import printable

    for problem in index["problems"] if index else []:
        kind = "error" if problem["invalid"] else "note"
        subject = f" {problem['subject']}:" if problem["subject"] else ""
        said = f"hookbus: {kind}: {problem['code']}:{subject} {problem['message']}"
        print(printable(said), file=sys.stderr)


def _say_plan(plan: Plan) -> None:
    """``hookbus manifest``: each document's entries, each owned file as written."""
    import json

    for document in plan.documents:
        print(json.dumps({"hooks": document.entries}, indent=2))
    for owned in plan.owned:
        # A host configured by whole files (Cline's hook scripts): each file as written.
        mode = "executable" if owned.executable else "not executable"
        text = owned.text if owned.text.endswith("\n") else owned.text + "\n"
        print(f"# {owned.path} ({mode})\n{text}", end="")


def _refuse_links_out(command: str, host: str, manifest: Manifest, scope: Scope) -> None:
    """Refuse, before anything changes, a project or local install or uninstall whose files
    would be reached through a link leading out of the project
    (:func:`hookbus.install.checks.link_out`)."""
    from hookbus.cli.render import printable
    from hookbus.install.checks import link_out

    found = link_out("install" if command == "install" else "uninstall", host, manifest, scope)
    if found is None:
        return
    link, leads, project = found
    raise HostConfigError(printable(
        f"not {command}ed, nothing changed: {link} is a link to {leads}, outside the project "
        f"{project}: the {scope} {command} would change the files there (your own settings, "
        f"if it leads to them). Fix: remove the link (rm {shlex.quote(link)}) and run the "
        f"command again; to {command} your own settings: hookbus {command} --host {host} "
        "--scope user"
    ))  # fmt: skip


def _check_variants(command: str, host: str, *, plugin: bool) -> None:
    """Install refuses to add a host's settings where its plugin is installed, or the
    plugin where its settings are (:mod:`hookbus.hosts.shared.variants`): the host would run
    both. Verify of the one installed nowhere names the command that checks the other."""
    from hookbus.hosts.shared.variants import folder
    from hookbus.install.checks import other_variant

    found = other_variant(host, plugin=plugin)
    if found is None:
        return
    other = found.found
    where = (f"{folder(other.paths)} holds hookbus's hooks for {host} (written by "
             f"'{other.command('install')}')")  # fmt: skip
    if command == "install":
        raise HostConfigError(
            f"not installed: {where}, and {host} runs both: every handler would run "
            f"twice. To switch, run '{other.command('uninstall')}' first; to update that "
            f"install, run '{other.command('install')}'"
        )
    if found.alone:  # the one to verify is installed nowhere
        raise HostConfigError(f"{where}; to check it, run '{other.command('verify')}'")


def _install(
    opts: argparse.Namespace, manifest: Manifest, plan: Plan, form: CommandForm, python: str
) -> None:
    """Carry out ``plan`` (:func:`hookbus.install.write.install`), saying each step."""
    from hookbus.install import write

    steps = write.install(manifest, plan, opts.host, opts.scope, form, python,
                          dry_run=opts.dry_run)  # fmt: skip
    for step in steps:
        if isinstance(step, write.DocumentInstalled):
            _say_document(step, opts.host, python, form, local="local" in manifest.scopes)
        elif isinstance(step, write.OwnedInstalled):
            for line in step.lines:
                print(line)
            if step.unwanted:
                print(f"no enabled handler wants a {opts.host} event; no hook file to install")
        elif isinstance(step, write.HookCodeInProject):
            from hookbus.local import project_trust

            warning = project_trust.hook_code_warning(step.places, step.project)
            print(f"hookbus: warning: {warning}; {project_trust.HOOK_CODE_FIX}",
                  file=sys.stderr)  # fmt: skip
        elif isinstance(step, write.Note):
            print(f"note: {step.text}")
        elif step.done is None:
            item = step.item
            print(f"{item.folder}: would install {item.package} with npm, as {item.host} would")
        else:
            print(step.said if step.done else f"note: {step.said}")


def _say_document(
    done: DocumentInstalled, host: str, python: str, form: CommandForm, *, local: bool
) -> None:
    """What install did to one settings file (:class:`hookbus.install.write.DocumentInstalled`)."""
    path = done.path
    if done.outcome == "unwanted":
        print(f"{path}: no enabled handler wants a {host} event; nothing to install")
    elif done.outcome == "up-to-date":
        print(f"{path}: already up to date")
    elif done.outcome == "dry-run":
        sys.stdout.write(done.text)
    else:
        print(f"{path}: installed hookbus entries"
              + (f" (your original: {done.backup})" if done.backup else ""))  # fmt: skip
        if done.shared:
            _say_shared(path, done.tracked, python, form, local=local)
        if done.unignored:
            # A local settings file must stay out of the repository.
            print(f"hookbus: warning: {path} is not ignored by git; add it to .gitignore",
                  file=sys.stderr)  # fmt: skip


def _say_shared(path: str, tracked: bool | None, python: str, form: CommandForm, *,
                local: bool) -> None:  # fmt: skip
    """What a person must know of a settings file shared with the project: whether git
    shares it yet, and that the absolute forms name this machine's interpreter."""
    from hookbus.install.git import shared_file

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


def _verify(  # noqa: PLR0917
    opts: argparse.Namespace,
    manifest: Manifest,
    index: IndexData | None,
    python: str,
    invalid: int,
    via: dict[str, Any],
) -> int:
    """Each file compared with the configuration (:func:`hookbus.install.verify.verify`)."""
    from hookbus.hosts.shared.variants import variant
    from hookbus.install import plan as planning
    from hookbus.install.verify import drift_fix, grouped, verify

    scope: Scope = opts.scope
    status = 1 if invalid else 0
    flag = variant(opts.host, plugin=getattr(opts, "plugin", False)).flag
    checked = verify(manifest, index, python, scope, opts.form, getattr(opts, "server", None),
                     via)  # fmt: skip
    for found in checked:
        for problem in grouped(found.drift):
            print(f"  {problem}")
        if not found.drift:
            print(f"{found.where}: up to date")
            continue
        status = 1
        install = planning.install_command(opts.host, scope, found.form, manifest, flag)
        print(f"{found.where}: {count(len(found.drift), 'difference')} from the "
              f"configuration; fix: {drift_fix(invalid, install)}")  # fmt: skip
    if invalid:
        print(f"hookbus: {count(invalid, 'configuration problem')} (above) would make "
              "hooks misbehave", file=sys.stderr)  # fmt: skip
    return status


def _say_removed(steps: Iterator[Removed], host: str) -> None:
    """What uninstall did (:func:`hookbus.install.write.uninstall`), one line a file."""
    from hookbus.hosts.shared.variants import folder
    from hookbus.install import write

    for step in steps:
        if isinstance(step, write.OwnedRemoved):
            for line in step.lines or [f"{step.folder}: no hookbus files"]:
                print(line)
        elif isinstance(step, write.VariantLeft):
            found = step.found
            print(f"{folder(found.paths)}: hookbus's {found.variant.name} is still installed "
                  f"for {host}; '{found.command('uninstall')}' removes it")  # fmt: skip
        elif step.outcome == "none":
            print(f"{step.path}: no hookbus entries")
        elif step.outcome == "restored":
            print(f"{step.path}: removed hookbus entries (your original file is back as it was)")
        elif step.outcome == "created":
            print(f"{step.path}: removed (hookbus created it)")
            for each in step.pruned:
                print(f"{each}: removed (hookbus made it)")
        else:
            kept = f" (your file as it was before install: {step.backup})" if step.backup else ""
            print(f"{step.path}: removed hookbus entries{kept}")
