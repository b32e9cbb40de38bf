"""``hookbus log``: the diagnostics as readable lines."""

from __future__ import annotations

import argparse
from typing import Any


def add_arguments(commands: Any) -> None:
    sub: argparse.ArgumentParser = commands.add_parser("log", help="show the diagnostics")
    sub.set_defaults(main=main)


def main(opts: argparse.Namespace) -> int:
    raise NotImplementedError
