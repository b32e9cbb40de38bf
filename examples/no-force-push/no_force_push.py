"""An example hookbus handler: deny `git push --force` on any shell tool, on any host."""

from __future__ import annotations

import re

import hookbus

FORCE = re.compile(r"\bgit\s+push\b.*\s(--force(-with-lease)?|-f)\b")


@hookbus.handler("before-tool", tools="shell")
def no_force_push(event: hookbus.BeforeTool) -> hookbus.Reply | None:
    if event.tool.command and FORCE.search(event.tool.command):
        return hookbus.Reply.deny("Force-pushing is not allowed in this repository.")
    return None
