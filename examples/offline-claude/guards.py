"""The handler under test: a fail-closed guard that denies ``rm -rf`` on any shell tool."""

from __future__ import annotations

import hookbus


@hookbus.handler("before-tool", tools="shell", timeout=5, fail_closed=True)
def no_rm_rf(event: hookbus.BeforeTool) -> hookbus.Reply | None:
    if "rm -rf" in (event.tool.command or ""):
        return hookbus.Reply.deny("rm -rf is not allowed in this project")
    return None
