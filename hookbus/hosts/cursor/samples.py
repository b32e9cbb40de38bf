"""Realistic Cursor payloads, one per native event, for ``hookbus try``.

The fields are those cursor.com/docs/hooks lists (2026-08): the common ones
(``conversation_id``, ``generation_id``, ``model``, ``hook_event_name``,
``cursor_version``, ``workspace_roots``, ``user_email``, ``transcript_path``), then the
event's own. The transcript is ``~/.cursor/projects/<folder>/agent-transcripts/<id>.jsonl``
(the layout is invented: the docs give none). A tool event carries the tool asked for,
else a harmless ``Shell`` ``git status``.

Loaded only by :meth:`hookbus.hosts.cursor.driver.CursorDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from hookbus.hosts.shared.driver import filled

TOOL_EVENTS = (
    "preToolUse", "postToolUse", "postToolUseFailure", "beforeShellExecution",
    "afterShellExecution", "beforeMCPExecution", "afterMCPExecution", "beforeReadFile",
    "beforeTabFileRead", "afterFileEdit", "afterTabFileEdit",
)  # fmt: skip
DEFAULT_TOOL = "Shell"
#: Events of one tool, whose input is at the payload's top level.
ONE_TOOL = ("beforeShellExecution", "afterShellExecution", "beforeReadFile",
            "beforeTabFileRead", "afterFileEdit", "afterTabFileEdit")  # fmt: skip
VERSION = "2.9.14"

#: A harmless input per tool, and the output the tool gave (JSON-encoded, as Cursor sends).
TOOLS: dict[str, tuple[dict[str, Any], str]] = {
    "Shell": ({"command": "git status", "working_directory": "{cwd}"},
              '{"exitCode": 0, "stdout": "nothing to commit, working tree clean"}'),
    "Read": ({"file_path": "{cwd}/README.md"}, '{"content": "# Project"}'),
    "Write": ({"file_path": "{cwd}/README.md", "contents": "# The project\n"},
              '{"success": true}'),
    "Task": ({"description": "Find tests", "prompt": "List the test files.",
              "subagent_type": "explore"}, '{"summary": "Found tests/."}'),
}  # fmt: skip


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` as Cursor's hooks get it."""
    home = os.path.expanduser("~/.cursor")
    folder = cwd.strip("/").replace("/", "-").replace(" ", "-")
    transcript = f"{home}/projects/{folder}/agent-transcripts/{session_id}.jsonl"
    child = str(uuid.uuid5(uuid.NAMESPACE_URL, f"hookbus-try:{session_id}:agent"))
    data: dict[str, Any] = {
        "conversation_id": session_id,
        "generation_id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"hookbus-try:{session_id}:turn")),
        "model": "claude-4.6-sonnet", "hook_event_name": native, "cursor_version": VERSION,
        "workspace_roots": [cwd], "user_email": None, "transcript_path": transcript,
    }  # fmt: skip
    name = tool or DEFAULT_TOOL
    default, output = TOOLS.get(name, ({}, "{}"))
    args = dict(tool_input) if tool_input is not None else filled(default, {"cwd": cwd})
    command = str(args.get("command", "git status"))
    path = str(args.get("file_path", f"{cwd}/README.md"))
    call = {"tool_name": name, "tool_input": args, "tool_use_id": "toolu_01hookbusTry", "cwd": cwd}
    own: dict[str, Any] = {
        "sessionStart": {"session_id": session_id, "is_background_agent": False,
                         "composer_mode": "agent"},
        "sessionEnd": {"session_id": session_id, "reason": "completed", "duration_ms": 60000,
                       "is_background_agent": False, "final_status": "completed"},
        "beforeSubmitPrompt": {"prompt": "Run the tests and fix what fails", "attachments": []},
        "preToolUse": {**call, "agent_message": "Checking the working tree."},
        "postToolUse": {**call, "tool_output": filled(output, {"cwd": cwd}), "duration": 120},
        "postToolUseFailure": {**call, "error_message": "exit code 1", "failure_type": "error",
                               "duration": 120, "is_interrupt": False},
        "subagentStart": {"subagent_id": child, "subagent_type": "explore",
                          "task": "List the test files.", "parent_conversation_id": session_id,
                          "tool_call_id": "toolu_01hookbusTask", "subagent_model": "inherit",
                          "is_parallel_worker": False},
        "subagentStop": {"subagent_type": "explore", "status": "completed",
                         "task": "List the test files.", "description": "Find tests",
                         "summary": "Found tests/.", "duration_ms": 9000, "message_count": 3,
                         "tool_call_count": 2, "loop_count": 0, "modified_files": [],
                         "agent_transcript_path": transcript.replace(".jsonl", f"/{child}.jsonl")},
        "beforeShellExecution": {"command": command, "cwd": cwd, "sandbox": False},
        "afterShellExecution": {"command": command, "cwd": cwd, "output": "nothing to commit",
                                "duration": 120, "sandbox": False},
        "beforeMCPExecution": {"tool_name": name, "tool_input": _encoded(args),
                               "command": "npx mcp-server"},
        "afterMCPExecution": {"tool_name": name, "tool_input": _encoded(args),
                              "result_json": '{"rows": 0}', "duration": 80},
        "beforeReadFile": {"file_path": path, "content": "# Project\n", "attachments": []},
        "beforeTabFileRead": {"file_path": path, "content": "# Project\n"},
        "afterFileEdit": {"file_path": path, "edits": [{"old_string": "# Project",
                                                        "new_string": "# The project"}]},
        "afterTabFileEdit": {"file_path": path, "edits": [{"old_string": "x", "new_string": "y"}]},
        "preCompact": {"trigger": "auto", "context_usage_percent": 85, "context_tokens": 170000,
                       "context_window_size": 200000, "message_count": 40,
                       "messages_to_compact": 30, "is_first_compaction": True},
        "stop": {"status": "completed", "loop_count": 0},
        "afterAgentResponse": {"text": "The tests pass."},
        "afterAgentThought": {"text": "Checking the tests first.", "duration_ms": 800},
    }  # fmt: skip
    if native in ONE_TOOL and tool_input is not None:
        # The call's input is the event's own fields (beforeShellExecution: command ...).
        own[native] = {**tool_input, **{k: v for k, v in own[native].items()
                                        if k in ("output", "duration")}}  # fmt: skip
    data.update(own[native])
    return data


def _encoded(args: dict[str, Any]) -> str:
    import json

    return json.dumps(args)
