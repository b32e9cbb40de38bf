"""Realistic Claude Code payloads, one per native event, for ``hookbus try``.

The shapes are those real Claude Code runs sent (2.1.197 and 2.1.332 offline, captured in
``tests/golden/claude/real``) and, for the events those runs never fired, those of the
hooks reference and ``sdk.d.ts`` 0.3.332: every input starts with ``session_id``,
``transcript_path`` and ``cwd``, then the optional common fields the event carries
(``prompt_id`` once a prompt was sent, ``permission_mode``, a subagent's ``agent_id`` and
``agent_type``, the turn's ``effort``), then ``hook_event_name`` and the event's own
fields, in that order. The transcript lives where Claude keeps it:
``~/.claude/projects/<the cwd with every other character than a letter or digit as
"-">/<session>.jsonl``. Identifiers are derived from the session, so one session's
samples agree with each other (a tool call's ``tool_use_id`` is the same before and
after it).

A tool event carries the tool asked for, else a harmless Bash ``git status``; a tool
the table below does not know gets an empty input. The after-tool events answer with
the tool's sample response, whatever the input.

Loaded only by :meth:`hookbus.hosts.claude.driver.ClaudeDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from typing import Any

from hookbus.hosts.shared.driver import filled

#: The optional common fields (``BaseHookInput``), in the order Claude writes them.
COMMON = ("prompt_id", "permission_mode", "agent_id", "agent_type", "effort")
TURN = ("prompt_id", "permission_mode")
TOOL_TURN = ("prompt_id", "permission_mode", "effort")

# Slots, filled per call: the tool, its input, its call id, its response and failure.
TOOL, INPUT, CALL, RESPONSE, CALLS = "$tool", "$input", "$call", "$response", "$calls"
TOOL_CALL = {"tool_name": TOOL, "tool_input": INPUT, "tool_use_id": CALL}
MODEL_SWITCH = {
    "from_model": "claude-opus-5", "to_model": "claude-sonnet-5", "requested_model": "sonnet",
    "source": "user", "context_tokens": 1200, "prompt_cache_warm": True, "cache_ttl": 300,
    "estimated_cache_write_usd": 0.01, "pricing": {},
}  # fmt: skip

#: Native event -> (the optional common fields it carries, its own fields). Strings may
#: name ``{cwd}``, ``{parent}`` (the cwd's folder), ``{agent_id}`` and
#: ``{agent_transcript}``.
EVENTS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "SessionStart": ((), {"source": "startup"}),
    "Setup": (("permission_mode",), {"trigger": "init"}),
    "InstructionsLoaded": (("permission_mode",), {
        "file_path": "{cwd}/CLAUDE.md", "memory_type": "Project", "load_reason": "session_start",
    }),
    "UserPromptSubmit": (TURN, {"prompt": "Run the tests and fix what fails"}),
    "UserPromptExpansion": (TURN, {
        "expansion_type": "slash_command", "command_name": "review", "command_args": "",
        "prompt": "/review",
    }),
    "PreToolUse": (TOOL_TURN, TOOL_CALL),
    # No tool_use_id: the call has none before it is permitted (hooks reference).
    "PermissionRequest": (TOOL_TURN, {"tool_name": TOOL, "tool_input": INPUT}),
    "PermissionDenied": (TURN, {**TOOL_CALL, "reason": "auto mode classifier denied the call"}),
    "PostToolUse": (TOOL_TURN, {
        "tool_name": TOOL, "tool_input": INPUT, "tool_response": RESPONSE, "tool_use_id": CALL,
        "duration_ms": 68,
    }),
    "PostToolUseFailure": (TOOL_TURN, {
        **TOOL_CALL, "error": "Exit code 128\nfatal: not a git repository", "is_interrupt": False,
        "duration_ms": 64,
    }),
    "PostToolBatch": (TOOL_TURN, {"tool_calls": CALLS}),
    "PreSkillShellCommand": (TURN, {**TOOL_CALL, "command_name": "status", "invoked_by": "user"}),
    "Notification": ((), {
        "message": "Claude needs your permission to use Bash", "title": "Permission",
        "notification_type": "permission_prompt",
    }),
    "MessageDisplay": (("prompt_id",), {
        "turn_id": "{turn_id}", "message_id": "{message_id}", "index": 0, "final": True,
        "delta": "I will run the tests.",
    }),
    "SubagentStart": (("prompt_id", "agent_id", "agent_type"), {}),
    "SubagentStop": (("prompt_id", "permission_mode", "agent_id", "agent_type", "effort"), {
        "stop_hook_active": False, "agent_transcript_path": "{agent_transcript}",
        "last_assistant_message": "Found the tests in tests/.", "background_tasks": [],
        "session_crons": [],
    }),
    "TaskCreated": (("permission_mode",), {
        "task_id": "task-1", "task_subject": "Fix the failing tests",
        "task_description": "Run the suite and fix each failure",
    }),
    "TaskCompleted": (("permission_mode",), {
        "task_id": "task-1", "task_subject": "Fix the failing tests",
    }),
    "TeammateIdle": (("permission_mode",), {"teammate_name": "reviewer"}),
    "Stop": (TOOL_TURN, {
        "stop_hook_active": False, "last_assistant_message": "All tests pass.",
        "background_tasks": [], "session_crons": [],
    }),
    "StopFailure": (TURN, {
        "error": "rate_limit", "last_assistant_message": "API Error: rate limited",
    }),
    "PreCompact": (("permission_mode",), {"trigger": "manual", "custom_instructions": ""}),
    "PostCompact": (("permission_mode",), {
        "trigger": "manual", "compact_summary": "The user is fixing the failing tests.",
    }),
    "PreModelSwitch": (("permission_mode",), MODEL_SWITCH),
    "PostModelSwitch": ((), MODEL_SWITCH),
    "ConfigChange": (("permission_mode",), {
        "source": "project_settings", "file_path": "{cwd}/.claude/settings.json",
    }),
    "CwdChanged": (("permission_mode",), {"old_cwd": "{cwd}", "new_cwd": "{cwd}/src"}),
    "DirectoryAdded": (("permission_mode",), {
        "directory": "{parent}/shared-lib", "source": "add_dir",
    }),
    "FileChanged": (("permission_mode",), {"file_path": "{cwd}/.env", "event": "change"}),
    "WorktreeCreate": (("permission_mode",), {"name": "try-worktree"}),
    "WorktreeRemove": (("permission_mode",), {
        "worktree_path": "{cwd}/.claude/worktrees/try-worktree",
    }),
    "Elicitation": (("permission_mode",), {
        "mcp_server_name": "github", "message": "Which repository?", "mode": "form",
        "elicitation_id": "el-1",
        "requested_schema": {"type": "object", "properties": {"repo": {"type": "string"}}},
    }),
    "ElicitationResult": (("permission_mode",), {
        "mcp_server_name": "github", "elicitation_id": "el-1", "mode": "form",
        "action": "accept", "content": {"repo": "shop-api"},
    }),
    "SessionEnd": (("prompt_id",), {"reason": "prompt_input_exit"}),
}  # fmt: skip

#: The events that carry a tool call (PostToolBatch: a batch of one).
TOOL_EVENTS = tuple(n for n, (_, own) in EVENTS.items() if TOOL in own.values() or CALLS in
                    own.values())  # fmt: skip
DEFAULT_TOOL = "Bash"

#: A harmless input per tool (``sdk-tools.d.ts``), and the response an after-tool carries.
TOOLS: dict[str, tuple[dict[str, Any], Any]] = {
    "Bash": (
        {"command": "git status", "description": "Show the working tree status"},
        {"stdout": "On branch main\nnothing to commit, working tree clean", "stderr": "",
         "interrupted": False, "isImage": False, "noOutputExpected": False},
    ),
    "PowerShell": (
        {"command": "Get-ChildItem", "description": "List the files"},
        {"stdout": "README.md", "stderr": "", "interrupted": False, "isImage": False},
    ),
    "Read": (
        {"file_path": "{cwd}/README.md"},
        {"type": "text", "file": {"filePath": "{cwd}/README.md", "content": "# Project\n",
                                  "numLines": 1, "startLine": 1, "totalLines": 1}},
    ),
    "Edit": (
        {"file_path": "{cwd}/README.md", "old_string": "# Project", "new_string": "# The project",
         "replace_all": False},
        {"filePath": "{cwd}/README.md", "oldString": "# Project", "newString": "# The project",
         "originalFile": "# Project\n", "structuredPatch": [], "userModified": False,
         "replaceAll": False},
    ),
    "Write": (
        {"file_path": "{cwd}/NOTES.md", "content": "Notes\n"},
        {"type": "create", "filePath": "{cwd}/NOTES.md", "content": "Notes\n",
         "structuredPatch": [], "originalFile": None},
    ),
    "Glob": (
        {"pattern": "**/*.py"},
        {"filenames": [], "durationMs": 3, "numFiles": 0, "truncated": False},
    ),
    "Grep": (
        {"pattern": "TODO", "output_mode": "files_with_matches"},
        {"mode": "files_with_matches", "filenames": [], "numFiles": 0},
    ),
    "WebFetch": (
        {"url": "https://example.com", "prompt": "Summarise the page"},
        {"bytes": 1256, "code": 200, "codeText": "OK", "result": "An example page.",
         "durationMs": 310, "url": "https://example.com"},
    ),
    "WebSearch": (
        {"query": "hookbus"},
        {"query": "hookbus", "results": [], "durationSeconds": 0.8},
    ),
    "Agent": (
        {"description": "Find the tests", "prompt": "List the test files of this project.",
         "subagent_type": "Explore"},
        {"status": "completed", "agentId": "{agent_id}", "agentType": "Explore",
         "content": [{"type": "text", "text": "tests/"}], "totalToolUseCount": 2,
         "totalDurationMs": 4210},
    ),
}  # fmt: skip
TOOLS["Task"] = TOOLS["Agent"]  # the legacy name of Agent


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` (one of :data:`EVENTS`) as Claude sends it."""
    extras, own = EVENTS[native]
    ids = _Ids(session_id)
    home = os.path.expanduser("~")
    slug = re.sub(r"[^A-Za-z0-9]", "-", cwd)
    names = {
        "cwd": cwd,
        "parent": os.path.dirname(cwd.rstrip("/")) or "/",
        "agent_id": ids.agent_id,
        "agent_transcript": f"{home}/.claude/projects/{slug}/{session_id}/subagents/"
        f"agent-{ids.agent_id}.jsonl",
        "turn_id": ids.uuid("turn"),
        "message_id": ids.uuid("message"),
    }
    common: dict[str, Any] = {
        "prompt_id": ids.uuid("prompt"),
        "permission_mode": "default",
        "agent_id": ids.agent_id,
        "agent_type": "Explore",
        "effort": {"level": "high"},
    }
    data: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": f"{home}/.claude/projects/{slug}/{session_id}.jsonl",
        "cwd": cwd,
    }
    data.update((k, common[k]) for k in COMMON if k in extras)
    data["hook_event_name"] = native
    name = tool or DEFAULT_TOOL
    default_input, response = TOOLS.get(name, ({}, _unknown_response(name)))
    if native == "PreSkillShellCommand" and tool_input is None:
        default_input = {"command": default_input.get("command", "")}
    call = {
        TOOL: name,
        INPUT: dict(tool_input) if tool_input is not None else filled(default_input, names),
        CALL: ids.tool_use_id,
        RESPONSE: filled(response, names),
    }
    call[CALLS] = [{"tool_name": name, "tool_input": call[INPUT], "tool_use_id": ids.tool_use_id,
                    "tool_response": call[RESPONSE]}]  # fmt: skip
    for key, value in own.items():
        slot = isinstance(value, str) and value in call
        data[key] = call[value] if slot else filled(value, names)
    return data


def _unknown_response(tool: str) -> Any:
    # An MCP tool answers content blocks; any other tool, text.
    return [{"type": "text", "text": "done"}] if tool.startswith("mcp__") else "done"


class _Ids:
    """Identifiers in Claude's shapes, derived from the session (stable for a session)."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        digest = hashlib.sha256(session_id.encode()).hexdigest()
        self.agent_id = "a" + digest[:16]
        self.tool_use_id = "toolu_01" + digest[16:38]

    def uuid(self, what: str) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"hookbus-try:{self.session_id}:{what}"))
