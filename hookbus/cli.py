"""The ``hookbus`` command.

``run`` is the hook entrypoint and is dispatched before argparse is even imported; the
other commands configure hosts and are not on any hook's path.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["run"]:
        from hookbus.run import main as run

        code = run(args[1:])
        if argv is None:
            # The reply is written (unbuffered) and nothing is left to clean up: skip
            # interpreter finalization, which costs a hook ~10 ms once msgspec is loaded.
            os._exit(code)
        return code
    return _configure(args)


def _configure(args: list[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="hookbus",
        description="One typed event model and one async bus for coding-agent hooks.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    run = commands.add_parser("run", help="the hook entrypoint: native stdin in, native reply out")
    run.add_argument("--host", required=True)
    run.add_argument("--event", help="native event name, for hosts whose stdin lacks it")
    run.add_argument("--timeout", type=float, help="seconds the host gives this hook")

    def host_command(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text)
        sub.add_argument("--host", required=True, choices=["claude"])
        sub.add_argument("--scope", choices=["project", "user"], default="project")
        sub.add_argument("--python", help="interpreter for the hook command (default: this one)")
        return sub

    host_command("manifest", "print the hooks block for the host's settings file")
    host_command("verify", "report drift between installed entries and the configuration")
    install = host_command("install", "merge hookbus's entries into the host's settings file")
    install.add_argument("--dry-run", action="store_true", help="show the result, write nothing")
    host_command("uninstall", "remove hookbus's entries (and only those)")

    opts = parser.parse_args(args)
    if opts.command == "run":  # reached only through argparse-style calls like --help
        from hookbus.run import main as run_main

        return run_main(args[1:])
    from hookbus.errors import HostConfigError

    try:
        return _host(opts)
    except HostConfigError as exc:
        print(f"hookbus: {exc}", file=sys.stderr)
        return 1


def _host(opts: object) -> int:
    import json

    from hookbus import index
    from hookbus.locations import config_paths
    from hookbus.manifests import claude as manifest

    command: str = opts.command  # type: ignore[attr-defined]
    files = config_paths()
    compiled = index.build(files) if files else None
    ours = manifest.generate(compiled, getattr(opts, "python", None))
    if command == "manifest":
        print(json.dumps({"hooks": ours}, indent=2))
        return 0
    path = manifest.settings_path(opts.scope)  # type: ignore[attr-defined]
    current = manifest.read_settings(path)
    if command == "verify":
        problems = manifest.drift(current, ours)
        for problem in problems:
            print(problem)
        print(f"{path}: {'drift found' if problems else 'up to date'}")
        return 1 if problems else 0
    if command == "install" and not ours and not os.path.exists(path):
        # An empty settings file is not free: Claude Code reads it on every start.
        print(f"{path}: no enabled handler wants a {manifest.HOST} event; nothing to install")
        return 0
    if command == "install":
        wanted = manifest.merged(current, ours)
    else:
        wanted = manifest.without_ours(current)
    if wanted == current and os.path.exists(path):
        print(f"{path}: already up to date")
        return 0
    text = manifest.dump(wanted)
    if getattr(opts, "dry_run", False):
        sys.stdout.write(text)
        return 0
    backup = manifest.write_atomically(path, text)
    print(f"{path}: {'installed' if command == 'install' else 'removed'} hookbus entries"
          + (f" (backup: {backup})" if backup else ""))  # fmt: skip
    return 0
