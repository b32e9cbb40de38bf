"""Realistic Grok Build payloads, one per native event, for ``hookbus try``.

The shapes and key order are ``HookEventEnvelope``'s serialisation
(``xai-org/grok-build@19d42e3`` ``crates/codegen/xai-grok-hooks/src/event.rs``):
``hookEventName``, ``sessionId``, ``cwd``, ``workspaceRoot``, ``timestamp``, ``promptId``
(absent for session-scoped events), ``permissionMode``, then the event's own fields. A
tool event carries the tool asked for, else a harmless ``run_terminal_command`` ``git
status``. The texts and ids are illustrative.

Loaded only by :meth:`hookbus.hosts.grok.driver.GrokDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

import uuid
from typing import Any

from hookbus.hosts.shared.driver import filled

TOOL_EVENTS = ("pre_tool_use", "post_tool_use", "post_tool_use_failure", "permission_denied")
DEFAULT_TOOL = "run_terminal_command"
STAMP = "2026-12-01T09:30:00Z"
#: The events that belong to no turn (no ``promptId``).
SESSION_SCOPED = ("session_start", "session_end", "notification")

#: A harmless input per tool (the tool's own input struct), and what it gave back.
TOOLS: dict[str, tuple[dict[str, Any], str]] = {
    "run_terminal_command": ({"command": "git status", "description": "Show the status"},
                             "nothing to commit, working tree clean"),
    "search_replace": ({"file_path": "{cwd}/README.md", "old_string": "# Project",
                        "new_string": "# The project"}, "The file was updated."),
    "read_file": ({"target_file": "{cwd}/README.md"}, "1|# Project"),
    "task": ({"subagent_type": "explore", "description": "Find tests",
              "prompt": "List the test files."}, "Found tests/."),
}  # fmt: skip


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` as Grok writes it to a hook's stdin."""
    turn = str(uuid.uuid5(uuid.NAMESPACE_URL, f"hookbus-try:{session_id}:turn"))
    child = str(uuid.uuid5(uuid.NAMESPACE_URL, f"hookbus-try:{session_id}:agent"))
    data: dict[str, Any] = {"hookEventName": native, "sessionId": session_id, "cwd": cwd,
                            "workspaceRoot": cwd, "timestamp": STAMP}  # fmt: skip
    if native not in SESSION_SCOPED:
        data["promptId"] = turn
    data["permissionMode"] = "default"
    name = tool or DEFAULT_TOOL
    default, text = TOOLS.get(name, ({}, "done"))
    args = dict(tool_input) if tool_input is not None else filled(default, {"cwd": cwd})
    call = {"toolName": name, "toolUseId": f"call_{turn[:8]}", "toolInput": args,
            "toolInputTruncated": False}  # fmt: skip
    own: dict[str, Any] = {
        "session_start": {"source": "startup", "modelId": "grok-build"},
        "user_prompt_submit": {"prompt": "Run the tests and fix what fails"},
        "pre_tool_use": call,
        "post_tool_use": {**call, "toolResult": filled(text, {"cwd": cwd}),
                          "toolResultTruncated": False, "durationMs": 41,
                          "isBackgrounded": False},
        "post_tool_use_failure": {**call, "error": "exit code 1"},
        "permission_denied": call,
        "stop": {"reason": "end_turn", "stopHookActive": False,
                 "lastAssistantMessage": "The tests pass.", "backgroundTasks": [],
                 "sessionCrons": []},
        "stop_failure": {"error": "rate_limit", "errorDetails": "429 Too Many Requests"},
        "stop_cancelled": {"reason": "user_interrupt", "cancelledBy": "user",
                           "cancelTrigger": "esc"},
        "notification": {"notificationType": "idle_prompt", "message": "Grok is waiting"},
        "subagent_start": {"subagentId": child, "subagentType": "explore",
                           "description": "Find tests"},
        "subagent_stop": {"phase": "gate", "subagentId": child, "subagentType": "explore",
                          "stopHookActive": False, "lastAssistantMessage": "Found tests/."},
        "pre_compact": {"source": "manual"},
        "post_compact": {"source": "manual"},
        "session_end": {"reason": "shutdown", "turnCount": 3, "toolCallCount": 7},
    }  # fmt: skip
    data.update(own[native])
    return data
