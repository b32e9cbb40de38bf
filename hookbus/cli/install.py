"""``hookbus manifest | install | verify | uninstall``: hookbus's entries in a host's own
settings, generated from the configuration, merged keeping everything of the user's."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any


def add_arguments(commands: Any) -> None:
    from hookbus.hosts import HOSTS

    installable = sorted(h for h, facts in HOSTS.items() if facts.manifest)

    def host_command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub: argparse.ArgumentParser = commands.add_parser(name, help=help_text)
        sub.add_argument("--host", required=True, choices=installable)
        sub.add_argument("--scope", choices=["project", "user"], default="project")
        sub.add_argument("--python", help="interpreter for the hook command (default: this one)")
        sub.set_defaults(main=main)
        return sub

    host_command("manifest", "print the hooks block for the host's settings file")
    host_command("verify", "report drift between installed entries and the configuration")
    install = host_command("install", "merge hookbus's entries into the host's settings file")
    install.add_argument("--dry-run", action="store_true", help="show the result, write nothing")
    host_command("uninstall", "remove hookbus's entries (and only those)")


def main(opts: argparse.Namespace) -> int:
    from hookbus.errors import HostConfigError

    try:
        return _host(opts)
    except HostConfigError as exc:
        print(f"hookbus: {exc}", file=sys.stderr)
        return 1


def _checked_python(python: str | None) -> str:
    """The interpreter for the hook command; one that cannot run hookbus the way the command
    does (``-P`` needs Python 3.11, and exits 2, a block, before that) is refused."""
    import subprocess

    from hookbus.errors import HostConfigError

    if python is None:
        return sys.executable
    try:
        probe = subprocess.run([python, "-P", "-c", "import hookbus"], capture_output=True,
                               timeout=30, check=False)  # fmt: skip
    except OSError as exc:
        raise HostConfigError(f"--python {python}: cannot run it ({exc})") from None
    if probe.returncode != 0:
        raise HostConfigError(
            f"--python {python}: cannot run 'python -P -m hookbus' (Python 3.11+ with hookbus "
            f"installed is needed): {probe.stderr.decode(errors='replace').strip()[-200:]}"
        )
    return python


def _host(opts: object) -> int:
    import copy
    import json

    from hookbus.discover import config_paths
    from hookbus.errors import HostConfigError
    from hookbus.manifests import documents
    from hookbus.manifests.base import load, write_atomically
    from hookbus.runtime.compile import compile_in_child

    command: str = opts.command  # type: ignore[attr-defined]
    manifest = load(opts.host)  # type: ignore[attr-defined]
    python = _checked_python(getattr(opts, "python", None))
    files = config_paths()
    compiled = None
    if files:
        # Compiled (and cached) now, so that the first hook never has to; in a child, like
        # every import of handler code.
        compiled = compile_in_child(files)
        if compiled is None:
            raise HostConfigError(
                "compiling the handlers' subscriptions failed (a handler module hung or "
                "ended its importer); see the diagnostics log"
            )
        for problem in compiled["problems"]:
            print(f"hookbus: {problem}", file=sys.stderr)
    plan = manifest.plan(compiled, python=python, scope=opts.scope)  # type: ignore[attr-defined]
    if command == "manifest":
        for document in plan.documents:
            print(json.dumps({"hooks": document.entries}, indent=2))
        return 0
    status = 0
    for document in plan.documents:
        path = document.path
        _, current = documents.read(path, document.format)
        manifest.check(path, current)
        if command == "verify":
            problems = manifest.drift(current, document.entries)
            if compiled and not compiled["complete"]:
                problems.append("broken: a configured handler could not be loaded (see above)")
            for problem in problems:
                print(problem)
            print(f"{path}: {'drift found' if problems else 'up to date'}")
            status = max(status, 1 if problems else 0)
            continue
        if command == "install" and not document.entries and not os.path.exists(path):
            # An empty settings file is not free: Claude Code reads it on every start.
            print(f"{path}: no enabled handler wants a {opts.host} event; nothing to install")  # type: ignore[attr-defined]
            continue
        if command == "install":
            wanted = manifest.merge(copy.deepcopy(current), document.entries)
        else:
            wanted = manifest.without_ours(copy.deepcopy(current))
        if wanted == current and os.path.exists(path):
            print(f"{path}: already up to date")
            continue
        text = documents.dump(wanted, document.format)
        if getattr(opts, "dry_run", False):
            sys.stdout.write(text)
            continue
        backup = write_atomically(path, text)
        print(f"{path}: {'installed' if command == 'install' else 'removed'} hookbus entries"
              + (f" (backup: {backup})" if backup else ""))  # fmt: skip
    for note in plan.notes:
        print(f"note: {note}")
    return status
