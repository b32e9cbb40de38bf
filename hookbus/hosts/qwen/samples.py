"""Realistic Qwen Code payloads, one per native event, for ``hookbus try``.

The shapes are those the real Qwen Code 0.24.4 sent offline (captured in
``tests/golden/qwen/real``): every input is ``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name``, an ISO ``timestamp`` and ``permission_mode``, then the event's own
fields. The transcript lives where Qwen records chats:
``~/.qwen/projects/<the project path, "/" as "-">/chats/<session>.jsonl``.

A tool event carries the tool asked for, else a harmless ``git status`` shell command; a
tool the table below does not know gets an empty input. PostToolUse answers with the
tool's sample response, whatever the input.

Loaded only by :meth:`hookbus.hosts.qwen.driver.QwenDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

import os
from typing import Any

from hookbus.hosts.shared.driver import filled

TIMESTAMP = "2026-12-01T06:26:48.305Z"
PROMPT = "Run the tests and fix what fails"
TOOL, INPUT, OUTPUT = "$tool", "$input", "$response"
#: Native event -> its own fields (``{cwd}`` is filled in).
EVENTS: dict[str, dict[str, Any]] = {
    "SessionStart": {"source": "startup", "model": "qwen3-coder-plus"},
    "Notification": {"message": "Successfully authenticated with openai",
                     "notification_type": "auth_success", "title": "Authentication successful"},
    "UserPromptSubmit": {"prompt": PROMPT, "submitted_prompt": PROMPT},
    "PreToolUse": {"tool_name": TOOL, "tool_input": INPUT},
    "PermissionRequest": {"tool_name": TOOL, "tool_input": INPUT},
    "PostToolUse": {"tool_name": TOOL, "tool_input": INPUT, "tool_response": OUTPUT,
                    "duration_ms": 76},
    "PostToolUseFailure": {"tool_name": TOOL, "tool_input": INPUT,
                           "error": "Command failed", "duration_ms": 12},
    "SubagentStart": {"agent_id": "general-purpose-4f2a", "agent_type": "general-purpose"},
    "SubagentStop": {"agent_id": "general-purpose-4f2a", "agent_type": "general-purpose",
                     "stop_hook_active": False, "last_assistant_message": "Found 3 tests."},
    "Stop": {"stop_hook_active": False, "last_assistant_message": "All tests pass."},
    "PreCompact": {"trigger": "auto", "custom_instructions": ""},
    "SessionEnd": {"reason": "other"},
}  # fmt: skip
TOOL_EVENTS = ("PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure")
DEFAULT_TOOL = "run_shell_command"


def _shell(command: str, output: str) -> str:
    return (f"Command: {command}\nDirectory: (root)\nOutput: {output}\nError: (none)\n"
            "Exit Code: 0\nSignal: (none)\nProcess Group PGID: (none)")  # fmt: skip


#: A harmless input per tool, and its ``tool_response``.
TOOLS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "run_shell_command": (
        {"command": "git status", "description": "Show the working tree status"},
        {"llmContent": _shell("git status", "nothing to commit, working tree clean"),
         "returnDisplay": "nothing to commit, working tree clean"},
    ),
    "read_file": (
        {"file_path": "{cwd}/README.md"},
        {"llmContent": "# Project\n", "returnDisplay": ""},
    ),
    "write_file": (
        {"file_path": "{cwd}/NOTES.md", "content": "Notes\n"},
        {"llmContent": "Successfully created and wrote to new file: {cwd}/NOTES.md.",
         "returnDisplay": "NOTES.md"},
    ),
    "edit": (
        {"file_path": "{cwd}/README.md", "old_string": "# Project", "new_string": "# The project"},
        {"llmContent": "The file: {cwd}/README.md has been updated.", "returnDisplay": "README.md"},
    ),
    "web_fetch": (
        {"url": "https://example.com", "prompt": "Summarise the page"},
        {"llmContent": "An example page.", "returnDisplay": "Fetched."},
    ),
    "agent": (
        {"subagent_type": "general-purpose", "description": "Find tests",
         "prompt": "List the test files of this project."},
        {"llmContent": [{"text": "Found 3 tests."}], "returnDisplay": "Found 3 tests."},
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
    """The payload of ``native`` (one of :data:`EVENTS`) as Qwen sends it."""
    names = {"cwd": cwd}
    home = os.path.expanduser("~")
    project = cwd.replace("/", "-")
    data: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": f"{home}/.qwen/projects/{project}/chats/{session_id}.jsonl",
        "cwd": cwd,
        "hook_event_name": native,
        "timestamp": TIMESTAMP,
        "permission_mode": "default",
    }
    if native in TOOL_EVENTS or native in ("UserPromptSubmit", "Stop"):
        data["prompt_id"] = f"{session_id}########0"
    name = tool or DEFAULT_TOOL
    default_input, response = TOOLS.get(name, ({}, {"llmContent": "done", "returnDisplay": "done"}))
    slots = {
        TOOL: name,
        INPUT: dict(tool_input) if tool_input is not None else filled(default_input, names),
        OUTPUT: filled(response, names),
    }
    for key, value in EVENTS[native].items():
        data[key] = slots[value] if isinstance(value, str) and value in slots else value
    if native in TOOL_EVENTS:
        data["tool_use_id"] = "toolu_1796106408298_423fk7kht"
    return data
