"""``hookbus prices refresh | show``: the model prices the guard compares.

``refresh`` runs ``python -m hookbus.handlers.guard.prices.refresh`` in a new session and waits for
it at most ``--timeout`` seconds (30 by default); past that it kills the whole process group (the
fetch and anything it started), removes the half-written file it may have left, says so and exits 1.
The cache is replaced only by a finished, valid refresh.

``show MODEL...`` prints what each id resolves to and from which source (your override
file, the refreshed cache, the shipped snapshot); it exits 1 when an id has no price.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
from typing import Any

from hookbus.local.interpreter import python_argv

#: Seconds a refresh may take before it is stopped.
TIMEOUT = 30.0


def add_arguments(commands: Any) -> None:
    sub: argparse.ArgumentParser = commands.add_parser(
        "prices", help="refresh or show the model prices the guard compares",
        description="The model prices (genai-prices' data): refresh the cache, or show "
        "what model ids resolve to.",
    )  # fmt: skip
    actions = sub.add_subparsers(dest="prices_command", metavar="ACTION", required=True)
    refresh = actions.add_parser(
        "refresh", help="fetch the newest prices into the cache (a bounded separate process)",
        description="Fetch genai-prices' data in a separate process, check and convert it, "
        "and replace the cache in the state folder; the old cache stays when anything fails.",
    )  # fmt: skip
    refresh.add_argument("--url", help="where to fetch (default: $HOOKBUS_PRICES_URL, else "
                         "genai-prices' own update URL)")  # fmt: skip
    refresh.add_argument("--timeout", type=float, default=TIMEOUT, metavar="SECONDS",
                         help=f"stop the refresh after SECONDS (default {TIMEOUT:g})")  # fmt: skip
    refresh.add_argument("--max-bytes", type=int, default=None, help=argparse.SUPPRESS)
    refresh.set_defaults(main=main_refresh)
    show = actions.add_parser(
        "show", help="what model ids resolve to, and from which source",
        description="Print the price each MODEL id resolves to and where it comes from.",
    )  # fmt: skip
    show.add_argument("models", nargs="+", metavar="MODEL")
    show.add_argument("--provider", help="try this provider first")
    show.add_argument("--json", action="store_true", help="one JSON object per id")
    show.set_defaults(main=main_show)


def main_refresh(opts: argparse.Namespace) -> int:
    if not opts.timeout > 0:
        sys.stderr.write("hookbus: --timeout must be a positive number of seconds\n")
        return 2
    argv = python_argv(sys.executable, "-m", "hookbus.handlers.guard.prices.refresh")
    if opts.url:
        argv += ["--url", opts.url]
    if opts.max_bytes is not None:
        argv += ["--max-bytes", str(opts.max_bytes)]
    # Its own session: the kill below reaches everything it started, and a Ctrl-C at
    # this terminal reaches this process, which stops it the same way.
    child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        return child.wait(timeout=opts.timeout)
    except subprocess.TimeoutExpired:
        _stop(child)
        sys.stderr.write(f"hookbus: the price refresh did not finish within {opts.timeout:g} s "
                         "and was stopped; the cache is unchanged\n")  # fmt: skip
        return 1
    except KeyboardInterrupt:
        _stop(child)
        sys.stderr.write("hookbus: the price refresh was interrupted; the cache is unchanged\n")
        return 130
    finally:
        if child.returncode is None:
            _stop(child)


def _stop(child: subprocess.Popen[bytes]) -> None:
    """Kill ``child``'s process group, reap it, and remove the file a write cut short."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()
    from hookbus.handlers.guard.prices import CACHE
    from hookbus.local import state

    with contextlib.suppress(OSError):  # state.write's temporary name: the child's pid
        os.unlink(f".{CACHE}.{child.pid}.tmp", dir_fd=state.root())


def main_show(opts: argparse.Namespace) -> int:
    import msgspec

    from hookbus.handlers.guard import prices

    missing = 0
    for model in opts.models:
        price = prices.lookup(model, opts.provider)
        missing += price is None
        if opts.json:
            record = {"id": model, "price": None if price is None else msgspec.to_builtins(price)}
            if price is not None:
                record["total"] = price.total
            sys.stdout.write(msgspec.json.encode(record).decode() + "\n")
        elif price is None:
            sys.stdout.write(f"{model}: unknown (no price: the guard allows it)\n")
        else:
            sys.stdout.write(
                f"{model}: {price.provider}/{price.model}  input ${price.input_mtok:g}  "
                f"output ${price.output_mtok:g}  per Mtok  (total {price.total:g}; "
                f"from the {price.source} prices)\n"
            )
    if not opts.json:
        sys.stdout.write("read: " + ", ".join(prices.source_files()) + "\n")
    return 1 if missing else 0
