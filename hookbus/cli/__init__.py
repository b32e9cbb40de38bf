"""The ``hookbus`` command.

``run`` is the hook entrypoint and is dispatched before argparse is even imported; the
other commands are for people (and their tools) and are never on a hook's path. Each
lives in its own module with ``add_arguments(parser)`` and ``main(opts) -> int``:

- :mod:`~hookbus.cli.install`: ``manifest``, ``install``, ``verify``, ``uninstall``;
- :mod:`~hookbus.cli.doctor`: what is installed where, and what would misbehave;
- :mod:`~hookbus.cli.log`: the diagnostics as readable lines;
- :mod:`~hookbus.cli.trial`: ``try``, one event by hand through the real hook;
- :mod:`~hookbus.cli.prices`: ``prices refresh`` and ``prices show``;
- :mod:`~hookbus.cli.guard`: ``guard --json``, the guard's decision for Claude's spawn module;
- :mod:`~hookbus.cli.serve`: ``serve``, the warm server, and its ``--status`` and ``--stop``;
- :mod:`~hookbus.cli.trust`: ``trust``, the user's trust of a project's code.
"""

from __future__ import annotations

import os
import sys

RUN_USAGE = """\
usage: hookbus run --host NAME [--event NATIVE] [--timeout SECONDS] < payload.json

The hook entrypoint: a host runs it with the native payload on stdin and reads the
native reply from stdout, stderr and the exit code. The command is written into the
host's settings by 'hookbus install --host NAME'; to send it an event by hand, use
'hookbus try --host NAME --event NATIVE' (it builds the payload and explains the reply).
"""


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["run"] and not {"-h", "--help"} & set(args[1:]):
        from hookbus.runtime.hook import main as run

        code = run(args[1:])
        if argv is None:
            # The reply is written (unbuffered) and nothing is left to clean up: skip
            # interpreter finalization, which costs a hook ~10 ms once msgspec is loaded.
            os._exit(code)
        return code
    return _command(args)


def _version() -> str:
    import hookbus

    where = os.path.dirname(hookbus.__file__ or "")
    python = f"Python {sys.version.split()[0]} at {sys.executable}"
    return f"hookbus {hookbus.__version__} ({where}; {python})\n"


def _command(args: list[str]) -> int:
    import argparse

    from hookbus.cli import doctor, guard, install, log, prices, serve, trial, trust

    parser = argparse.ArgumentParser(
        prog="hookbus",
        description="One typed event model and one async bus for coding-agent hooks.",
    )
    parser.add_argument("-V", "--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands.add_parser(
        "run", help="the hook entrypoint: native stdin in, native reply out (see run --help)",
        add_help=False,
    )  # fmt: skip
    install.add_arguments(commands)
    doctor.add_arguments(commands)
    log.add_arguments(commands)
    trial.add_arguments(commands)
    prices.add_arguments(commands)
    guard.add_arguments(commands)
    serve.add_arguments(commands)
    trust.add_arguments(commands)
    if args[:1] in (["-V"], ["--version"]):
        sys.stdout.write(_version())
        return 0
    if args[:1] == ["run"]:  # only with -h/--help: a hook never asks for help
        sys.stdout.write(RUN_USAGE)
        return 0
    opts = parser.parse_args(args)
    main_of = opts.main
    return int(main_of(opts))
