"""Realistic Copilot CLI payloads, one per native event, for ``hookbus try``.

The shapes and key order are those real 1.0.102 runs wrote (``tests/golden/copilot/real``):
``sessionId``, ``timestamp`` (Unix ms), ``cwd``, then the event's own fields; the
camelCase dialect, which names no event (``permissionRequest`` aside, with ``hookName``).
The transcript is ``~/.copilot/session-state/<session>/events.jsonl``. A tool event
carries the tool asked for, else a harmless ``bash`` ``git status``.

Loaded only by :meth:`hookbus.hosts.copilot.driver.CopilotDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

from hookbus.hosts.shared.driver import filled

TOOL_EVENTS = ("preToolUse", "permissionRequest", "postToolUse", "postToolUseFailure")
DEFAULT_TOOL = "bash"
STAMP = 1796105894282

#: A harmless input per tool, and the text the model read from it.
TOOLS: dict[str, tuple[dict[str, Any], str]] = {
    "bash": ({"command": "git status", "description": "Show the status"},
             "nothing to commit, working tree clean\n<shellId: 0 completed with exit code 0>"),
    "edit": ({"path": "{cwd}/README.md", "old_str": "# Project", "new_str": "# The project"},
             "File {cwd}/README.md updated with changes."),
    "view": ({"path": "{cwd}/README.md"}, "1. # Project"),
    "task": ({"description": "Find tests", "prompt": "List the test files.",
              "agent_type": "general-purpose", "name": "finder"}, "Found tests/."),
}  # fmt: skip


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` as Copilot's camelCase hooks get it."""
    home = os.environ.get("COPILOT_HOME") or os.path.expanduser("~/.copilot")
    transcript = f"{home}/session-state/{session_id}/events.jsonl"
    child = str(uuid.uuid5(uuid.NAMESPACE_URL, f"hookbus-try:{session_id}:agent"))
    data: dict[str, Any] = {"sessionId": session_id, "timestamp": STAMP, "cwd": cwd}
    if native == "permissionRequest":
        data = {"hookName": native, **data}
    name = tool or DEFAULT_TOOL
    default, text = TOOLS.get(name, ({}, "done"))
    args = dict(tool_input) if tool_input is not None else filled(default, {"cwd": cwd})
    own: dict[str, Any] = {
        "sessionStart": {"source": "new", "initialPrompt": "Run the tests"},
        "userPromptSubmitted": {"prompt": "Run the tests and fix what fails"},
        "preToolUse": {"toolName": name, "toolArgs": args},
        "permissionRequest": {"toolName": name, "toolInput": args, "permissionSuggestions": []},
        "postToolUse": {"toolName": name, "toolArgs": args, "toolResult": {
            "resultType": "success", "textResultForLlm": filled(text, {"cwd": cwd})}},
        "postToolUseFailure": {"toolName": name, "toolArgs": args, "error": "exit code 1"},
        "agentStop": {"transcriptPath": transcript, "stopReason": "end_turn",
                      "stop_hook_active": False},
        "subagentStart": {"transcriptPath": transcript, "agentName": "general-purpose",
                          "agentId": child, "agentType": "general-purpose",
                          "parentAgentId": session_id},
        "subagentStop": {"transcriptPath": transcript, "agentId": child,
                         "agentType": "general-purpose", "agentName": "general-purpose",
                         "response": "Found tests/.", "stopReason": "end_turn",
                         "stop_hook_active": False, "parentAgentId": session_id},
        "preCompact": {"transcriptPath": transcript, "trigger": "manual",
                       "customInstructions": ""},
        "errorOccurred": {"error": {"message": "model call failed", "name": "Error"},
                          "errorContext": "model_call", "recoverable": True},
        "sessionEnd": {"reason": "complete"},
    }  # fmt: skip
    data.update(own[native])
    return data
