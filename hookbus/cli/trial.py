"""``hookbus try``: one event by hand, through the real hook, explained."""

from __future__ import annotations

import argparse
from typing import Any


def add_arguments(commands: Any) -> None:
    sub: argparse.ArgumentParser = commands.add_parser("try", help="send one event by hand")
    sub.set_defaults(main=main)


def main(opts: argparse.Namespace) -> int:
    raise NotImplementedError
