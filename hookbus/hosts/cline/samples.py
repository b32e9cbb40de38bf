"""Realistic Cline CLI 3.0.65 payloads, one per native event, for ``hookbus try``.

The shape and key order are those real 3.0.65 runs wrote (``tests/golden/cline/real``):
the base fields (``clineVersion`` is empty unless ``$CLINE_VERSION`` is set, ``userId``
``unknown`` without ``$CLINE_USER_ID``), the wire ``hookName``, then the event's own
fields; a tool event carries both the runtime record (``tool_call``/``tool_result``) and
the string-map ``preToolUse``/``postToolUse``. A tool event carries the tool asked for,
else a harmless ``run_commands`` ``git status``. Loaded only by
:meth:`hookbus.hosts.shared.driver.BaseDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hookbus.hosts.shared.driver import filled

#: Native event (the hook file) -> its wire hookName and own fields.
EVENTS: dict[str, tuple[str, dict[str, Any]]] = {
    "TaskStart": ("agent_start", {"taskStart": {"taskMetadata": {}}}),
    "TaskResume": ("agent_resume", {"taskResume": {"taskMetadata": {}, "previousState": {}}}),
    "UserPromptSubmit": ("prompt_submit", {"userPromptSubmit": {
        "prompt": "Run the tests and fix what fails", "attachments": []}}),
    "PreToolUse": ("tool_call", {}),
    "PostToolUse": ("tool_result", {}),
    "TaskComplete": ("agent_end", {"iteration": 2, "turn": {"outputText": "All done.",
                                   "status": "completed"}, "taskComplete": {"taskMetadata": {}}}),
    "TaskError": ("agent_error", {"iteration": 1, "error": {
        "name": "Error", "message": "The model request failed", "stack": ""}}),
    "TaskCancel": ("agent_abort", {"reason": "user_abort", "taskCancel": {"taskMetadata": {}}}),
    "SessionShutdown": ("session_shutdown", {}),
    "PreCompact": ("pre_compact", {}),
    # The legacy extension's only: its hookName is the event itself.
    "Notification": ("Notification", {}),
}  # fmt: skip

TOOL_EVENTS = ("PreToolUse", "PostToolUse")
DEFAULT_TOOL = "run_commands"

#: A harmless input per tool, and its output.
TOOLS: dict[str, tuple[dict[str, Any], Any]] = {
    "run_commands": ({"commands": ["git status"]}, [{"query": "git status", "success": True,
                     "result": "On branch main\nnothing to commit, working tree clean\n"}]),
    "editor": ({"path": "{cwd}/README.md", "old_text": "# Project", "new_text": "# The project"},
               {"query": "edit:{cwd}/README.md", "result": "Edited {cwd}/README.md",
                "success": True}),
    "read_files": ({"files": ["{cwd}/README.md"]}, [{"query": "{cwd}/README.md",
                   "result": "# Project\n", "success": True}]),
    "spawn_agent": ({"systemPrompt": "You are a read-only investigator.",
                     "task": "List the test files of this project."},
                    {"text": "tests/ holds test_app.py.", "iterations": 2}),
}  # fmt: skip


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` (one of :data:`EVENTS`) as Cline 3.0.65 sends it."""
    wire, own = EVENTS[native]
    names = {"cwd": cwd}
    digest = hashlib.sha256(session_id.encode()).hexdigest()
    data: dict[str, Any] = {
        "clineVersion": "",
        "timestamp": "2026-12-01T10:12:03.025Z",
        "taskId": f"conv_1796106195962_{digest[:7]}",
        "sessionContext": {"rootSessionId": session_id},
        "workspaceRoots": [cwd],
        "workspaceInfo": {"rootPath": cwd, "hint": cwd.rstrip("/").rsplit("/", 1)[-1]},
        "userId": "unknown",
        "agent_id": f"agent_1796106195863_{digest[7:13]}",
        "parent_agent_id": None,
        "hookName": wire,
        **filled(own, names),
    }
    if native in TOOL_EVENTS:
        name = tool or DEFAULT_TOOL
        default_input, output = TOOLS.get(name, ({}, "done"))
        given = dict(tool_input) if tool_input is not None else filled(default_input, names)
        record: dict[str, Any] = {"id": "call_" + digest[:24], "name": name, "input": given}
        params = {k: v if isinstance(v, str) else json.dumps(v) for k, v in given.items()}
        data["iteration"] = 1
        if native == "PreToolUse":
            data["tool_call"] = record
            data["preToolUse"] = {"toolName": name, "parameters": params}
        else:
            result = filled(output, names)
            data["tool_result"] = {**record, "output": result, "durationMs": 32}
            data["postToolUse"] = {"toolName": name, "parameters": params,
                                   "result": json.dumps(result), "success": True,
                                   "executionTimeMs": 32}  # fmt: skip
    return data
