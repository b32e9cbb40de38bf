"""Realistic VS Code agent-hook payloads, one per native event, for ``hookbus try``.

The shapes are the hooks reference's (code.visualstudio.com, "Hooks reference"): every
input is ``timestamp`` (ISO-8601), ``cwd``, ``sessionId``, ``hookEventName`` and
``transcript_path``, then the event's own fields. Tool inputs follow Copilot Chat's tool
parameters (``IRunInTerminalInputParams``, ``IReplaceStringToolParams``,
``IApplyPatchToolParams``, ``IRunSubagentToolInputParams`` ...): camelCase, ``filePath``.
A PostToolUse's ``tool_response`` is the tool's output as text.

A tool event carries the tool asked for, else a harmless ``git status`` in the terminal;
a tool the table below does not know gets an empty input.

Loaded only by :meth:`hookbus.hosts.vscode.driver.VscodeDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

from typing import Any

from hookbus.hosts.shared.driver import sample_tool

TIMESTAMP = "2026-12-01T10:30:00.000Z"
CALL_ID = "call_Xb3kT9"
#: Native event -> its own fields (a tool event's are its tool's, below).
EVENTS: dict[str, dict[str, Any]] = {
    "SessionStart": {"source": "new"},
    "UserPromptSubmit": {"prompt": "Run the tests and fix what fails"},
    "PreToolUse": {},
    "PostToolUse": {},
    "PreCompact": {"trigger": "auto"},
    "SubagentStart": {"agent_id": "subagent-7f3c", "agent_type": "Plan"},
    "SubagentStop": {"agent_id": "subagent-7f3c", "agent_type": "Plan",
                     "stop_hook_active": False},
    "Stop": {"stop_hook_active": False},
}  # fmt: skip
TOOL_EVENTS = ("PreToolUse", "PostToolUse")
DEFAULT_TOOL = "run_in_terminal"
_PATCH = (
    "*** Begin Patch\n*** Update File: {cwd}/README.md\n@@\n-# Project\n+# The project\n"
    "*** End Patch"
)

#: A harmless input per tool, and the text of its result.
TOOLS: dict[str, tuple[dict[str, Any], str]] = {
    "run_in_terminal": ({"command": "git status", "explanation": "Show the working tree",
                         "isBackground": False}, "nothing to commit, working tree clean"),
    "read_file": ({"filePath": "{cwd}/README.md", "startLine": 1, "endLine": 40}, "# Project\n"),
    "create_file": ({"filePath": "{cwd}/NOTES.md", "content": "Notes\n"},
                    "The following files were successfully edited:\n{cwd}/NOTES.md"),
    "replace_string_in_file": (
        {"filePath": "{cwd}/README.md", "oldString": "# Project", "newString": "# The project",
         "explanation": "Rename the heading"},
        "The following files were successfully edited:\n{cwd}/README.md",
    ),
    "apply_patch": ({"input": _PATCH, "explanation": "Rename the heading"},
                    "The following files were successfully edited:\n{cwd}/README.md"),
    "fetch_webpage": ({"urls": ["https://example.com"], "query": "what is it"},
                      "An example page."),
    "runSubagent": ({"prompt": "List the test files of this project.",
                     "description": "Find tests", "agentName": "Plan"}, "Found 3 tests."),
    "mcp_github_get_issue": ({"owner": "octo", "repo": "shop", "issue_number": 7},
                             '{"title": "Checkout fails"}'),
}  # fmt: skip


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` (one of :data:`EVENTS`) as VS Code sends it."""
    names = {"cwd": cwd}
    data: dict[str, Any] = {
        "timestamp": TIMESTAMP,
        "cwd": cwd,
        "sessionId": session_id,
        "hookEventName": native,
        "transcript_path": f"{cwd}/.vscode-transcripts/{session_id}.json",
    }
    if native in TOOL_EVENTS:
        name = tool or DEFAULT_TOOL
        data["tool_input"], result = sample_tool(TOOLS, name, tool_input, names)
        data["tool_name"], data["tool_use_id"] = name, CALL_ID
        if native == "PostToolUse":
            data["tool_response"] = result
    return {**data, **EVENTS[native]}
