"""``hookbus trust [--show | --revoke]``: trust the code a project's ``.hookbus.toml``
would run, by hash (:mod:`hookbus.local.project_trust`; not :mod:`hookbus.local.trust`, which is the
rule on who may have written a file).

Run in a project, it finds the configuration the hooks would (the nearest
``.hookbus.toml``, up to the repository root or the home folder), prints every file it
trusts with its hash, and records them. ``--show`` compares the record with the files as
they are now; ``--revoke`` removes it. Exit code 0: done (or the record still matches);
1: nothing to trust, refused, or no longer as trusted.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any


def add_arguments(commands: Any) -> None:
    sub: argparse.ArgumentParser = commands.add_parser(
        "trust",
        help="trust the code this project's .hookbus.toml would run (its handler modules "
        "and what they import, its python_path): recorded by hash, with your configuration",
    )
    which = sub.add_mutually_exclusive_group()
    which.add_argument("--show", action="store_true",
                       help="show the record, and each file that changed since")  # fmt: skip
    which.add_argument("--revoke", action="store_true", help="remove the record")
    sub.set_defaults(main=main)


def main(opts: argparse.Namespace) -> int:
    config = _project()
    if config is None:
        return 1
    if opts.show:
        return show(config)
    if opts.revoke:
        return revoke(config)
    return trust(config, quiet=False)


def _project(*, quiet: bool = False) -> str | None:
    """The project configuration the hooks would read here, or None (said why, unless
    ``quiet``)."""
    from hookbus.local.discover import find_project_config, working_folder

    if os.environ.get("HOOKBUS_CONFIG"):
        if not quiet:
            print("hookbus: HOOKBUS_CONFIG is set: hooks read only the file it names, which "
                  "is yours and needs no trust; nothing to trust", file=sys.stderr)  # fmt: skip
        return None
    here = working_folder()
    config = find_project_config(here)
    if config is None and not quiet:
        print(f"hookbus: no .hookbus.toml in {here} or above it (up to the repository root "
              "or your home folder): nothing to trust", file=sys.stderr)  # fmt: skip
    return config


def trust_for_install() -> int:
    """What ``hookbus install`` does in a project: trust its code, printing what it
    trusts; nothing printed when it names none, or is trusted as it is already."""
    config = _project(quiet=True)
    return trust(config, quiet=True) if config is not None else 0


def trust(config: str, *, quiet: bool) -> int:
    """Trust what ``config`` would run, printing every file with its hash; with ``quiet``
    (install), print nothing when it names no code."""
    from hookbus.bus.errors import ConfigError
    from hookbus.local import project_trust
    from hookbus.runtime.config import project_code

    try:
        code, named = project_code(config)
    except ConfigError as exc:
        print(f"hookbus: {exc}; not trusted (fix it, then run hookbus trust)", file=sys.stderr)
        return 1
    if not named:
        if not quiet:
            print(f"hookbus: {config} names no code of its own (built-in handlers need no "
                  "trust): nothing to trust", file=sys.stderr)  # fmt: skip
        return 1
    found = project_trust.read_store().record(config)
    if quiet and found is not None and (found.config, found.files) == (
        code.config_digest, code.files):  # fmt: skip
        return 0  # trusted as it is: a reinstall says nothing
    if code.refused:
        for module, why in sorted(code.refused.items()):
            print(f"hookbus: refused: {module}: {why}", file=sys.stderr)
        print(f"hookbus: {config} not trusted: hookbus runs only Python source from a "
              "project; remove what is refused above, or install it as a package",
              file=sys.stderr)  # fmt: skip
        return 1
    print(f"{config} names {', '.join(named)}; trusting it and the project files it "
          "would run, as they are now (sha256):")  # fmt: skip
    print(f"  {code.config_digest}  {os.path.realpath(config)}")
    for path, sha in sorted(code.files.items()):
        print(f"  {sha}  {path}")
    try:
        project_trust.record(config, code)
    except OSError as exc:
        print(f"hookbus: cannot record the trust: {exc}", file=sys.stderr)
        return 1
    print(f"recorded in {project_trust.store_path()}: the hooks run this code from now on; "
          "any change to these files stops it until you trust it again (hookbus trust "
          "--show says what changed)")  # fmt: skip
    return 0


def show(config: str) -> int:
    """Print the record of ``config`` and whether each file still matches it."""
    from hookbus.bus.errors import ConfigError
    from hookbus.local import project_trust
    from hookbus.runtime.config import project_code

    store = project_trust.read_store()
    found = store.record(config)
    if found is None:
        why = f" ({store.problem})" if store.problem else ""
        print(f"{config}: not trusted{why}; to review and trust it: "
              f"{project_trust.fix_for(config)}")  # fmt: skip
        return 1
    print(f"{config}: trusted at {found.trusted_at or 'an unknown time'}")
    changed = 0
    current = project_trust.file_digest(config)
    state = "as trusted" if current == found.config else "CHANGED"
    changed += current != found.config
    print(f"  {state:10}  {os.path.realpath(config)}")
    for path, sha in sorted(found.files.items()):
        now = project_trust.file_digest(path)
        state = "as trusted" if now == sha else ("MISSING" if now is None else "CHANGED")
        changed += now != sha
        print(f"  {state:10}  {path}")
    try:
        code, _ = project_code(config)
    except ConfigError:
        code = None
    for path in sorted(set(code.files) - set(found.files)) if code is not None else []:
        changed += 1
        print(f"  {'NEW':10}  {path}")
    if changed:
        print(f"{changed} file(s) not as trusted: the project's code does not run; to "
              f"review and trust it again: {project_trust.fix_for(config)}")  # fmt: skip
        return 1
    return 0


def revoke(config: str) -> int:
    from hookbus.local import project_trust

    try:
        removed = project_trust.revoke(config)
    except OSError as exc:
        print(f"hookbus: cannot change the trust store: {exc}", file=sys.stderr)
        return 1
    if not removed:
        print(f"hookbus: {config} was not trusted: nothing to revoke", file=sys.stderr)
        return 1
    print(f"{config}: no longer trusted; its code does not run in hooks from now on")
    return 0
