"""``hookbus doctor``: what is installed where, and what would make a hook misbehave.

It gathers facts first (one :class:`Report`, which ``--json`` prints as it is) and
renders them after, so the text and the JSON cannot disagree. Each finding is a
*problem* (a hook would misbehave: exit 1) or a *note* (worth knowing: exit 0), and
each problem says how to fix it. The choices:

- the last diagnostics are read before anything else: doctor compiles the index as
  install does, and what that compile logs must not pass for what the hooks last said;
- doctor's own diagnostics (discovery is asked once per scope, and says ``config-ignored``
  each time) are deferred, logged once each at the end, and only when the state root is
  usable: they repeat the report, and a refused root would send them to stderr;
- the interpreter is checked as the installed command runs it: the program it names
  must be executable and import hookbus as ``__main__.py`` does (its own install first,
  else the package beside the command's ``__main__.py``);
- drift is judged against what install would write, in the form installed, for the
  interpreter the command names when that one works. When it does not (it cannot even
  say where its hookbus is), the entries are planned for this interpreter and the paths
  put back to the installed ones: the missing interpreter is reported once, as itself,
  and drift still shows every other difference."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hookbus.bus.subscriptions import IndexData
    from hookbus.cli.doctor.report import Report


def add_arguments(commands: Any) -> None:
    from hookbus.hosts import HOSTS

    sub: argparse.ArgumentParser = commands.add_parser(
        "doctor", help="check the installation, configuration and state folder"
    )
    sub.add_argument("--host", help="only this host",
                     choices=sorted(h for h, facts in HOSTS.items() if facts.manifest))  # fmt: skip
    sub.add_argument("--all", action="store_true", dest="every_host",
                     help="every host's files, those of hosts not installed for too")  # fmt: skip
    sub.add_argument("--json", action="store_true",
                     help="one JSON document, for tools (always every host)")  # fmt: skip
    sub.set_defaults(main=main)


def main(opts: argparse.Namespace) -> int:
    from hookbus.cli.doctor.local import log_once
    from hookbus.cli.doctor.text import write
    from hookbus.local import diagnostics

    diagnostics.defer()
    try:
        report = examine(opts.host)
    finally:
        log_once(diagnostics.take())
    if opts.json:
        import json

        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        # A host asked for by name is shown whole, installed or not.
        write(report, sys.stdout, every_host=opts.every_host or opts.host is not None)
    return 0 if report["ok"] else 1


def examine(host: str | None = None) -> Report:
    """Every fact doctor reports, for ``host`` (default: every host with a manifest)."""
    from hookbus.cli.doctor import local
    from hookbus.cli.doctor.installs import host_installs
    from hookbus.cli.doctor.report import Findings
    from hookbus.hosts import HOSTS

    found = Findings()
    state = local.state_root(found)
    last = local.last_diagnostics()
    configuration = local.configuration(found)
    indexes: dict[tuple[str, ...], IndexData | None] = {}
    handlers = local.handlers(local.compiled(configuration["in_effect"], indexes, found), found)
    hosts = [host_installs(name, indexes, found) for name, facts in HOSTS.items()
             if facts.manifest and host in (None, name)]  # fmt: skip
    return {
        "ok": not found.problems,
        "problems": found.problems,
        "notes": found.notes,
        "hosts": hosts,
        "configuration": configuration,
        "handlers": handlers,
        "state": state,
        "server": local.server(),
        "diagnostics": last,
    }
