"""Realistic Factory Droid payloads, one per native event, for ``hookbus try``.

The shapes are the hooks reference's samples (Factory-AI/factory@a80aa7c5,
``docs/reference/hooks-reference.mdx``, "Hook Input"): every input is ``session_id``,
``transcript_path``, ``cwd``, ``permission_mode`` and ``hook_event_name``, then the
event's own fields. The transcript is a ``.jsonl`` under ``~/.factory/projects/``; the
folder name between is elided in the docs (here: the project path, "/" as "-",
UNCONFIRMED). A tool event carries the tool asked for, else a harmless ``git status``
through ``Execute``; a tool the table below does not know gets an empty input.

Loaded only by :meth:`hookbus.hosts.droid.driver.DroidDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

import os
from typing import Any

from hookbus.hosts.shared.driver import filled

PROMPT = "Run the tests and fix what fails"
TOOL, INPUT, OUTPUT = "$tool", "$input", "$response"
#: Native event -> its own fields.
EVENTS: dict[str, dict[str, Any]] = {
    "SessionStart": {"source": "startup"},
    "UserPromptSubmit": {"prompt": PROMPT},
    "PreToolUse": {"tool_name": TOOL, "tool_input": INPUT},
    "Notification": {"message": "Droid needs your permission to use Execute"},
    "PostToolUse": {"tool_name": TOOL, "tool_input": INPUT, "tool_response": OUTPUT},
    "SubagentStop": {"stop_hook_active": False},
    "Stop": {"stop_hook_active": False},
    "PreCompact": {"trigger": "manual", "custom_instructions": ""},
    "SessionEnd": {"reason": "other"},
}  # fmt: skip
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
DEFAULT_TOOL = "Execute"
_PATCH = (
    "*** Begin Patch\n*** Update File: README.md\n@@\n-# Project\n+# The project\n*** End Patch\n"
)

#: A harmless input per tool, and its ``tool_response``. Create's pair is the docs' own;
#: the others are UNCONFIRMED shapes (the docs say only that they depend on the tool).
TOOLS: dict[str, tuple[dict[str, Any], Any]] = {
    "Execute": ({"command": "git status"}, "nothing to commit, working tree clean"),
    "Read": ({"file_path": "{cwd}/README.md"}, "# Project\n"),
    "Create": (
        {"file_path": "{cwd}/NOTES.md", "content": "Notes\n"},
        {"filePath": "{cwd}/NOTES.md", "success": True},
    ),
    "Edit": (
        {"file_path": "{cwd}/README.md", "old_string": "# Project", "new_string": "# The project"},
        {"filePath": "{cwd}/README.md", "success": True},
    ),
    "ApplyPatch": ({"input": _PATCH}, {"success": True}),
    "FetchUrl": ({"url": "https://example.com"}, "An example page."),
    "Task": (
        {"subagent_type": "worker", "description": "Find tests",
         "prompt": "List the test files of this project."},
        "Found 3 tests.",
    ),
}  # fmt: skip


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` (one of :data:`EVENTS`) as Droid sends it."""
    names = {"cwd": cwd}
    home = os.path.expanduser("~")
    project = cwd.replace("/", "-")
    data: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": f"{home}/.factory/projects/{project}/{session_id}.jsonl",
        "cwd": cwd,
        "permission_mode": "auto-low",
        "hook_event_name": native,
    }
    name = tool or DEFAULT_TOOL
    default_input, response = TOOLS.get(name, ({}, {"success": True}))
    slots = {
        TOOL: name,
        INPUT: dict(tool_input) if tool_input is not None else filled(default_input, names),
        OUTPUT: filled(response, names),
    }
    for key, value in EVENTS[native].items():
        data[key] = slots[value] if isinstance(value, str) and value in slots else value
    return data
