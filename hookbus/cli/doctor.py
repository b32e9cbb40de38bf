"""``hookbus doctor``: what is installed where, and what would make a hook misbehave."""

from __future__ import annotations

import argparse
from typing import Any


def add_arguments(commands: Any) -> None:
    sub: argparse.ArgumentParser = commands.add_parser(
        "doctor", help="check the installation, configuration and state folder"
    )
    sub.add_argument("--host", help="only this host")
    sub.add_argument("--json", action="store_true", help="one JSON document, for tools")
    sub.set_defaults(main=main)


def main(opts: argparse.Namespace) -> int:
    raise NotImplementedError
