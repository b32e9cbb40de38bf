"""Realistic Codex CLI payloads, one per native event, for ``hookbus try``.

The shapes are those of the input schemas embedded in Codex 0.171.0 (vendored in
``tests/codex_schemas``; each sample validates against its schema in the tests), in the
key order real 0.171.0 runs wrote (``tests/golden/codex/real``): ``session_id``, the
turn's ``turn_id``, ``transcript_path``, ``cwd``, ``hook_event_name``, ``model``,
``permission_mode``, then the event's own fields. The transcript is Codex's rollout
file, ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl``. Identifiers
are derived from the session, so one session's samples agree with each other.

A tool event carries the tool asked for, else a harmless ``Bash`` ``git status``.
Loaded only by :meth:`hookbus.hosts.codex.driver.CodexDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from typing import Any

from hookbus.hosts.shared.driver import filled

TOOL, INPUT, CALL, RESPONSE = "$tool", "$input", "$call", "$response"
TURN = ("turn_id", "model", "permission_mode")
CHILD = {"agent_id": "{agent_id}", "agent_type": "default"}

#: Native event -> (the common fields it carries, its own fields).
EVENTS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "SessionStart": (("model", "permission_mode"), {"source": "startup"}),
    "UserPromptSubmit": (TURN, {"prompt": "Run the tests and fix what fails"}),
    "PreToolUse": (TURN, {"tool_name": TOOL, "tool_input": INPUT, "tool_use_id": CALL}),
    # No tool_use_id: the approval is asked before the call exists (the schema).
    "PermissionRequest": (TURN, {"tool_name": TOOL, "tool_input": INPUT}),
    "PostToolUse": (TURN, {"tool_name": TOOL, "tool_input": INPUT, "tool_response": RESPONSE,
                           "tool_use_id": CALL}),
    "PreCompact": (("turn_id", "model"), {"trigger": "manual"}),
    "PostCompact": (("turn_id", "model"), {"trigger": "manual"}),
    "SubagentStart": (TURN, CHILD),
    "SubagentStop": (TURN, {
        **CHILD, "agent_transcript_path": "{agent_transcript}", "stop_hook_active": False,
        "last_assistant_message": "Found the tests in tests/.",
    }),
    "Stop": (TURN, {"stop_hook_active": False, "last_assistant_message": "All tests pass."}),
    "Interrupt": (TURN, {}),
    "SessionEnd": ((), {"reason": "other"}),
}  # fmt: skip

TOOL_EVENTS = ("PreToolUse", "PermissionRequest", "PostToolUse")
DEFAULT_TOOL = "Bash"
PATCH = (
    "*** Begin Patch\n*** Update File: README.md\n@@\n-# Project\n+# The project\n*** End Patch\n"
)

#: A harmless input per tool, and the response PostToolUse carries (Bash's is the text
#: the model read, as real runs sent it).
TOOLS: dict[str, tuple[dict[str, Any], Any]] = {
    "Bash": ({"command": "git status"}, "On branch main\nnothing to commit, working tree clean\n"),
    "apply_patch": ({"command": PATCH}, "Success. Updated the following files:\nM README.md\n"),
    "spawn_agent": (
        {"message": "List the test files of this project.", "agent_type": "default"},
        {"agent_id": "{agent_id}", "nickname": "Dirac"},
    ),
    "collaborationspawn_agent": (
        {"task_name": "find_tests", "message": "List the test files of this project.",
         "fork_turns": "none"},
        {"agent_id": "{agent_id}", "task_name": "/root/find_tests"},
    ),
    "view_image": ({"path": "{cwd}/screenshot.png"}, "image attached"),
}  # fmt: skip
for _shell in ("exec_command", "shell", "shell_command", "local_shell"):
    TOOLS[_shell] = TOOLS["Bash"]


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` (one of :data:`EVENTS`) as Codex sends it."""
    common, own = EVENTS[native]
    digest = hashlib.sha256(session_id.encode()).hexdigest()
    agent_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"hookbus-try:{session_id}:agent"))
    sessions = os.path.join(os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex"),
                            "sessions", "2026", "12", "01")  # fmt: skip
    names = {
        "cwd": cwd,
        "agent_id": agent_id,
        "agent_transcript": f"{sessions}/rollout-2026-12-01T10-14-40-{agent_id}.jsonl",
    }
    values: dict[str, Any] = {
        "turn_id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"hookbus-try:{session_id}:turn")),
        "model": "gpt-5.5-codex",
        "permission_mode": "default",
    }
    data: dict[str, Any] = {"session_id": session_id}
    if "turn_id" in common:
        data["turn_id"] = values["turn_id"]
    data["transcript_path"] = f"{sessions}/rollout-2026-12-01T10-12-03-{session_id}.jsonl"
    data["cwd"] = cwd
    data["hook_event_name"] = native
    data.update((k, values[k]) for k in common if k != "turn_id")
    name = tool or DEFAULT_TOOL
    default_input, response = TOOLS.get(name, ({}, _unknown_response(name)))
    call = {
        TOOL: name,
        INPUT: dict(tool_input) if tool_input is not None else filled(default_input, names),
        CALL: "call_" + digest[:24],
        RESPONSE: filled(response, names),
    }
    for key, value in own.items():
        slot = isinstance(value, str) and value in call
        data[key] = call[value] if slot else filled(value, names)
    return data


def _unknown_response(tool: str) -> Any:
    # An MCP tool answers the MCP call result; any other tool, text.
    if tool.startswith("mcp__"):
        return {"content": [{"type": "text", "text": "done"}], "isError": False}
    return "done"
