"""Realistic Gemini CLI payloads, one per native event, for ``hookbus try``.

The shapes are those the real Gemini CLI 0.61.0 sent offline (captured in
``tests/golden/gemini/real``): every input is ``session_id``, ``transcript_path``,
``cwd``, ``hook_event_name`` and an ISO ``timestamp``, then the event's own fields. The
transcript lives where Gemini records chats:
``~/.gemini/tmp/<the project folder's name>/chats/session-<minute>-<first 8 of the
session>.jsonl``. The model events carry Gemini's "stable" request and response shapes
(text parts only).

A tool event carries the tool asked for, else a harmless ``git status`` shell command; a
tool the table below does not know gets an empty input, and an MCP tool its
``mcp_context``. AfterTool answers with the tool's sample response, whatever the input.

Loaded only by :meth:`hookbus.hosts.gemini.driver.GeminiDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

import os
from typing import Any

from hookbus.hosts.shared.driver import filled

TIMESTAMP = "2026-12-01T12:23:42.213Z"
REQUEST = {
    "model": "gemini-3.8-flash",
    "messages": [{"role": "user", "content": "Run the tests and fix what fails"}],
    "config": {"temperature": 1, "topP": 0.95, "topK": 64},
}
RESPONSE = {
    "text": "I will run the tests.",
    "candidates": [{"content": {"role": "model", "parts": ["I will run the tests."]},
                    "finishReason": "STOP", "index": 0}],
    "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
}  # fmt: skip

TOOL, INPUT, OUTPUT = "$tool", "$input", "$response"
#: Native event -> its own fields (``{cwd}`` is filled in).
EVENTS: dict[str, dict[str, Any]] = {
    "SessionStart": {"source": "startup"},
    "BeforeAgent": {"prompt": "Run the tests and fix what fails"},
    "BeforeModel": {"llm_request": REQUEST},
    "BeforeToolSelection": {"llm_request": REQUEST},
    "AfterModel": {"llm_request": REQUEST, "llm_response": RESPONSE},
    "BeforeTool": {"tool_name": TOOL, "tool_input": INPUT},
    "AfterTool": {"tool_name": TOOL, "tool_input": INPUT, "tool_response": OUTPUT},
    "AfterAgent": {
        "prompt": "Run the tests and fix what fails",
        "prompt_response": "All tests pass.",
        "stop_hook_active": False,
    },
    "PreCompress": {"trigger": "auto"},
    "Notification": {
        "notification_type": "ToolPermission",
        "message": "Tool Shell requires execution",
        "details": {
            "type": "exec",
            "title": "Shell",
            "command": "git status",
            "rootCommand": "git",
        },
    },
    "SessionEnd": {"reason": "exit"},
}
TOOL_EVENTS = ("BeforeTool", "AfterTool")
DEFAULT_TOOL = "run_shell_command"


def _untrusted(text: str) -> str:
    return f"<untrusted_context>\n{text}\n</untrusted_context>"


#: A harmless input per tool (``tools/definitions``), and its ``tool_response``.
TOOLS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "run_shell_command": (
        {"command": "git status", "description": "Show the working tree status"},
        {"llmContent": _untrusted("Output: On branch main\nnothing to commit, working tree "
                                  "clean\nProcess Group PGID: 48211"),
         "returnDisplay": "On branch main\nnothing to commit, working tree clean"},
    ),
    "read_file": (
        {"file_path": "{cwd}/README.md"},
        {"llmContent": "# Project\n", "returnDisplay": ""},
    ),
    "read_many_files": (
        {"include": ["docs/**/*.md"]},
        {"llmContent": ["--- docs/index.md ---\n\n# Docs\n"],
         "returnDisplay": "Read 1 file(s)"},
    ),
    "list_directory": (
        {"dir_path": "{cwd}"},
        {"llmContent": "Directory listing for {cwd}:\nREADME.md",
         "returnDisplay": "Listed 1 item(s)."},
    ),
    "glob": (
        {"pattern": "**/*.py"},
        {"llmContent": "No files found matching pattern \"**/*.py\"",
         "returnDisplay": "No files found"},
    ),
    "grep_search": (
        {"pattern": "TODO"},
        {"llmContent": "No matches found for pattern \"TODO\"",
         "returnDisplay": "No matches found"},
    ),
    "write_file": (
        {"file_path": "{cwd}/NOTES.md", "content": "Notes\n"},
        {"llmContent": "Successfully created and wrote to new file: {cwd}/NOTES.md.",
         "returnDisplay": {"fileDiff": "", "fileName": "NOTES.md", "filePath": "{cwd}/NOTES.md",
                           "originalContent": "", "newContent": "Notes\n", "isNewFile": True}},
    ),
    "replace": (
        {"file_path": "{cwd}/README.md", "old_string": "# Project", "new_string": "# The project",
         "instruction": "Rename the heading"},
        {"llmContent": "Successfully modified file: {cwd}/README.md (1 replacements).",
         "returnDisplay": {"fileDiff": "", "fileName": "README.md", "filePath": "{cwd}/README.md",
                           "originalContent": "# Project\n", "newContent": "# The project\n",
                           "isNewFile": False}},
    ),
    "web_fetch": (
        {"prompt": "Summarise https://example.com"},
        {"llmContent": "An example page.", "returnDisplay": "Content processed from prompt."},
    ),
    "google_web_search": (
        {"query": "hookbus"},
        {"llmContent": "Web search results for \"hookbus\":\n",
         "returnDisplay": "Search results returned."},
    ),
    "invoke_agent": (
        {"agent_name": "codebase_investigator", "prompt": "List the test files of this project."},
        {"llmContent": [{"text": "Subagent 'codebase_investigator' finished.\nTermination "
                                 "Reason: GOAL\nResult:\ntests/"}],
         "returnDisplay": {"isSubagentProgress": True, "agentName": "codebase_investigator",
                           "recentActivity": [], "state": "completed", "result": "tests/",
                           "terminateReason": "GOAL"}},
    ),
}  # fmt: skip
TOOLS["search_file_content"] = TOOLS["grep_search"]  # the legacy name of grep_search


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` (one of :data:`EVENTS`) as Gemini sends it."""
    names = {"cwd": cwd}
    home = os.path.expanduser("~")
    project = os.path.basename(cwd.rstrip("/")) or "root"
    data: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": f"{home}/.gemini/tmp/{project}/chats/session-2026-12-01T12-23-"
        f"{session_id[:8]}.jsonl",
        "cwd": cwd,
        "hook_event_name": native,
        "timestamp": TIMESTAMP,
    }
    name = tool or DEFAULT_TOOL
    default_input, response = TOOLS.get(name, ({}, {"llmContent": "done", "returnDisplay": "done"}))
    slots = {
        TOOL: name,
        INPUT: dict(tool_input) if tool_input is not None else filled(default_input, names),
        OUTPUT: filled(response, names),
    }
    for key, value in EVENTS[native].items():
        data[key] = slots[value] if isinstance(value, str) and value in slots else value
    if native in TOOL_EVENTS and name.startswith("mcp_"):
        server, _, tool_name = name[4:].partition("_")
        data["mcp_context"] = {"server_name": server, "tool_name": tool_name}
    return data
