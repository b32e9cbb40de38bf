"""Realistic Kimi Code CLI payloads, one per native event, for ``hookbus try``.

The shapes are kimi-cli 1.49.0's (``src/kimi_cli/hooks/events.py`` at
MoonshotAI/kimi-cli@4a550ef): ``hook_event_name``, ``session_id`` and ``cwd``, then the
event's own fields; tool inputs are the tools' own parameters (``path``, not
``file_path``; StrReplaceFile's ``edit: {old, new}``). ``tool_output`` is the result as
text, cut at 2000 characters.

A tool event carries the tool asked for, else a harmless ``git status`` in the Shell; a
tool the table below does not know gets an empty input.

Loaded only by :meth:`hookbus.hosts.kimi.driver.KimiDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

from typing import Any

from hookbus.hosts.shared.driver import sample_tool

#: Native event -> its own fields (a tool event's are its tool's, below).
EVENTS: dict[str, dict[str, Any]] = {
    "PreToolUse": {},
    "PostToolUse": {},
    "PostToolUseFailure": {"error": "Command failed with exit code 1"},
    "UserPromptSubmit": {"prompt": "Run the tests and fix what fails"},
    "Stop": {"stop_hook_active": False},
    "StopFailure": {"error_type": "APIStatusError", "error_message": "429 Too Many Requests"},
    "SessionStart": {"source": "startup"},
    "SessionEnd": {"reason": "exit"},
    "SubagentStart": {"agent_name": "coder", "prompt": "List the test files of this project."},
    "SubagentStop": {"agent_name": "coder", "response": "Found 3 tests."},
    "PreCompact": {"trigger": "auto", "token_count": 180000},
    "PostCompact": {"trigger": "auto", "estimated_token_count": 24000},
    "Notification": {"sink": "shell", "notification_type": "task_done", "title": "Done",
                     "body": "The background task finished.", "severity": "info"},
}  # fmt: skip
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")
DEFAULT_TOOL = "Shell"
CALL_ID = "tool_6c1Vq2dKx8"

#: A harmless input per tool, and the text of its result.
TOOLS: dict[str, tuple[dict[str, Any], str]] = {
    "Shell": ({"command": "git status", "timeout": 60},
              "nothing to commit, working tree clean"),
    "ReadFile": ({"path": "{cwd}/README.md", "line_offset": 1, "n_lines": 200}, "# Project\n"),
    "WriteFile": ({"path": "{cwd}/NOTES.md", "content": "Notes\n", "mode": "overwrite"},
                  "File successfully overwritten."),
    "StrReplaceFile": ({"path": "{cwd}/README.md",
                        "edit": {"old": "# Project", "new": "# The project"}},
                       "File successfully edited."),
    "Glob": ({"pattern": "**/*.py", "directory": "{cwd}"}, "src/app.py"),
    "FetchURL": ({"url": "https://example.com"}, "An example page."),
    "Agent": ({"description": "Find tests", "prompt": "List the test files of this project.",
               "subagent_type": "coder"}, "Found 3 tests."),
}  # fmt: skip


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` (one of :data:`EVENTS`) as Kimi sends it."""
    names = {"cwd": cwd}
    data: dict[str, Any] = {"hook_event_name": native, "session_id": session_id, "cwd": cwd}
    if native in TOOL_EVENTS:
        name = tool or DEFAULT_TOOL
        data["tool_input"], result = sample_tool(TOOLS, name, tool_input, names)
        data["tool_name"] = name
        if native == "PostToolUse":
            data["tool_output"] = result
        data["tool_call_id"] = CALL_ID
    return {**data, **EVENTS[native]}
