"""Realistic payloads of OpenCode's plugin API, one per native event, for ``hookbus try``:
each host's samples module (:mod:`hookbus.hosts.opencode.samples`,
:mod:`hookbus.hosts.kilo.samples`) is :func:`payload` with the version it puts in a
session's info.

The shapes are what the shim sends (:mod:`hookbus.hosts.shared.opencode_api`), around the
hook inputs and outputs real OpenCode 1.18.33 and Kilo 7.7.7 runs gave
(``tests/golden/opencode``, ``tests/golden/kilo``). A tool event carries the tool asked
for, else a harmless ``bash`` ``git status``. Loaded only by
:meth:`hookbus.hosts.shared.driver.BaseDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

import hashlib
from typing import Any

from hookbus.hosts.shared.driver import filled, sample_tool

TOOL_EVENTS = ("tool.execute.before", "tool.execute.after")
DEFAULT_TOOL = "bash"

#: A harmless input per tool, and its output.
TOOLS: dict[str, tuple[dict[str, Any], Any]] = {
    "bash": ({"command": "git status", "description": "Show the working tree status"},
             "On branch main\nnothing to commit, working tree clean\n"),
    "read": ({"filePath": "{cwd}/README.md"}, "<file>\n00001| # Project\n</file>"),
    "edit": ({"filePath": "{cwd}/README.md", "oldString": "# Project",
              "newString": "# The project"}, "Edit applied successfully."),
    "write": ({"filePath": "{cwd}/NOTES.md", "content": "notes\n"}, "Wrote file successfully."),
    "task": ({"description": "List tests", "prompt": "List the test files of this project.",
              "subagent_type": "general"}, "tests/ holds test_app.py."),
}  # fmt: skip


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
    version: str,
) -> dict[str, Any]:
    """The payload the shim sends for ``native``, from a host of this ``version``."""
    digest = hashlib.sha256(session_id.encode()).hexdigest()
    call = f"call_{digest[:20]}"
    data: dict[str, Any] = {"hook": native, "api": 1, "directory": cwd}
    info = {"id": session_id, "slug": "quiet-harbor", "version": version, "projectID": "global",
            "directory": cwd, "title": "e2e"}  # fmt: skip
    if native in TOOL_EVENTS:
        name = tool or DEFAULT_TOOL
        args, result = sample_tool(TOOLS, name, tool_input, {"cwd": cwd})
        if native == "tool.execute.before":
            data["input"] = {"tool": name, "sessionID": session_id, "callID": call}
            data["output"] = {"args": args}
        else:
            data["input"] = {"tool": name, "sessionID": session_id, "callID": call, "args": args}
            data["output"] = {"title": name, "metadata": {"truncated": False}, "output": result}
    elif native == "chat.message":
        data["input"] = {"sessionID": session_id}
        data["output"] = {"parts": [{"type": "text", "text": "Run the tests and fix what fails",
                                     "sessionID": session_id}]}  # fmt: skip
    elif native == "experimental.session.compacting":
        data["input"] = {"sessionID": session_id}
        data["output"] = {"context": []}
    else:
        properties: dict[str, Any] = {"sessionID": session_id}
        if native == "session.created":
            properties["info"] = info
        if native == "file.edited":
            properties = {"file": filled("{cwd}/README.md", {"cwd": cwd})}
        data["input"] = {"event": {"type": native, "properties": properties}}
    return data
