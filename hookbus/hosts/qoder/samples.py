"""Realistic Qoder CLI payloads, one per native event, for ``hookbus try``.

The shapes are the Qoder Agent SDK reference's hook inputs (``BaseHookInput`` and each
event's own), with the CLI page's common fields (``permission_mode``, and ``agent_id``
and ``agent_type`` "when available"). The transcript is a JSONL file; its folder is
UNCONFIRMED (here Claude's layout under ``~/.qoder/projects``). A tool event carries the
tool asked for, else a harmless ``git status`` through ``Bash``; a tool the table below
does not know gets an empty input.

Loaded only by :meth:`hookbus.hosts.qoder.driver.QoderDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

import os
from typing import Any

from hookbus.hosts.shared.driver import filled

TOOL, INPUT, OUTPUT = "$tool", "$input", "$response"
#: Native event -> its own fields (``{cwd}`` is filled in).
EVENTS: dict[str, dict[str, Any]] = {
    "SessionStart": {"source": "startup"},
    "InstructionsLoaded": {"load_reason": "nested_traversal"},
    "UserPromptSubmit": {"prompt": "Run the tests and fix what fails"},
    "PreToolUse": {"tool_name": TOOL, "tool_input": INPUT},
    "PermissionRequest": {"tool_name": TOOL, "tool_input": INPUT},
    "PostToolUse": {"tool_name": TOOL, "tool_input": INPUT, "tool_response": OUTPUT},
    "PostToolUseFailure": {"tool_name": TOOL, "tool_input": INPUT,
                           "error": "Command failed with exit code 1", "is_interrupt": False},
    "FileChanged": {"file_path": "{cwd}/README.md", "event": "change"},
    "CwdChanged": {"old_cwd": "{cwd}", "new_cwd": "{cwd}/src"},
    "SubagentStart": {"agent_id": "agent-7c1e", "agent_type": "reviewer"},
    "SubagentStop": {"stop_hook_active": False},
    "Stop": {"stop_hook_active": False},
    "PreCompact": {"trigger": "auto", "custom_instructions": None},
    "PostCompact": {"trigger": "auto", "compact_summary": "Ran the tests; two failures left."},
    "SessionEnd": {"reason": "prompt_input_exit"},
}  # fmt: skip
TOOL_EVENTS = ("PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure")
DEFAULT_TOOL = "Bash"

#: A harmless input per tool (the SDK's ``*Input`` types), and its output (``*Output``).
TOOLS: dict[str, tuple[dict[str, Any], Any]] = {
    "Bash": (
        {"command": "git status", "description": "Show the working tree status"},
        {"stdout": "nothing to commit, working tree clean", "stderr": "", "exitCode": 0},
    ),
    "Read": (
        {"file_path": "{cwd}/README.md"},
        {"type": "text", "text": "# Project\n", "file_path": "{cwd}/README.md"},
    ),
    "Write": (
        {"file_path": "{cwd}/NOTES.md", "content": "Notes\n"},
        {"success": True, "file_path": "{cwd}/NOTES.md", "bytesWritten": 6},
    ),
    "Edit": (
        {"file_path": "{cwd}/README.md", "old_string": "# Project", "new_string": "# The project"},
        {"success": True, "file_path": "{cwd}/README.md"},
    ),
    "WebFetch": (
        {"url": "https://example.com", "prompt": "Summarise the page"},
        {"content": "An example page.", "url": "https://example.com", "statusCode": 200},
    ),
    "Agent": (
        {"prompt": "List the test files of this project.", "agent": "reviewer"},
        {"result": "Found 3 tests.", "agent": "reviewer"},
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
    """The payload of ``native`` (one of :data:`EVENTS`) as Qoder sends it."""
    names = {"cwd": cwd}
    home = os.path.expanduser("~")
    data: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": f"{home}/.qoder/projects/{cwd.replace('/', '-')}/{session_id}.jsonl",
        "cwd": cwd,
        "hook_event_name": native,
        "permission_mode": "default",
    }
    name = tool or DEFAULT_TOOL
    default_input, response = TOOLS.get(name, ({}, {"success": True}))
    slots = {
        TOOL: name,
        INPUT: dict(tool_input) if tool_input is not None else filled(default_input, names),
        OUTPUT: filled(response, names),
    }
    for key, value in filled(EVENTS[native], names).items():
        data[key] = slots[value] if isinstance(value, str) and value in slots else value
    return data
