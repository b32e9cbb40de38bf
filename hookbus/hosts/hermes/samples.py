"""Realistic Hermes Agent 0.19.0 envelopes, one per native event, for ``hookbus try``.

The shape and key order are those of real 0.19.0 runs (``tests/golden/hermes``): the
fixed envelope, then the call's other keyword arguments under ``extra``, each ending in
``telemetry_schema_version``. A tool event carries the tool asked for, else a harmless
``terminal`` ``git status``. Loaded only by :meth:`hookbus.hosts.shared.driver.BaseDriver.sample`,
never on a hook's path.
"""

from __future__ import annotations

import hashlib
from typing import Any

from hookbus.hosts.shared.driver import filled, sample_tool

TELEMETRY = {"telemetry_schema_version": "hermes.observer.v1"}
TURN = "{session}:{task}:8807604f"
#: Native event -> its ``extra`` (``{session}``, ``{task}``, ``{child}`` filled in).
EXTRA: dict[str, dict[str, Any]] = {
    "on_session_start": {"model": "fake-model", "platform": "cli"},
    "pre_llm_call": {"task_id": "{task}", "turn_id": TURN,
                     "user_message": "Run the tests and fix what fails",
                     "conversation_history": [{"role": "user",
                                               "content": "Run the tests and fix what fails"}],
                     "is_first_turn": True, "model": "fake-model", "platform": "cli",
                     "sender_id": ""},
    "pre_tool_call": {"task_id": "{task}", "tool_call_id": "call_0001", "turn_id": TURN,
                      "api_request_id": TURN + ":api:1", "middleware_trace": []},
    "post_tool_call": {"result": None, "task_id": "{task}", "tool_call_id": "call_0001",
                       "turn_id": TURN, "api_request_id": TURN + ":api:1", "duration_ms": 36,
                       "status": "ok", "error_type": None, "error_message": None,
                       "middleware_trace": []},
    "subagent_start": {"parent_turn_id": TURN, "parent_subagent_id": None,
                       "child_session_id": "{child}", "child_subagent_id": "sa-0-ea8228e5",
                       "child_role": "leaf", "child_goal": "List the test files"},
    "subagent_stop": {"parent_turn_id": TURN, "child_session_id": "{child}",
                      "child_role": "leaf", "child_summary": "tests/ holds test_app.py.",
                      "child_status": "completed", "duration_ms": 250},
    "post_llm_call": {"task_id": "{task}", "turn_id": TURN,
                      "user_message": "Run the tests and fix what fails",
                      "assistant_response": "All done.", "conversation_history": [],
                      "model": "fake-model", "platform": "cli"},
    "pre_verify": {"platform": "cli", "model": "fake-model", "coding": True, "attempt": 0,
                   "final_response": "Fixed the failing test.", "changed_paths": ["app.py"]},
    "on_session_end": {"task_id": "{task}", "turn_id": TURN, "completed": True,
                       "interrupted": False, "model": "fake-model", "platform": "cli"},
}  # fmt: skip

TOOL_EVENTS = ("pre_tool_call", "post_tool_call")
DEFAULT_TOOL = "terminal"

#: A harmless input per tool, and its result (a JSON string, as Hermes passes it).
TOOLS: dict[str, tuple[dict[str, Any], Any]] = {
    "terminal": ({"command": "git status"},
                 '{"output": "nothing to commit, working tree clean", "exit_code": 0, '
                 '"error": null}'),
    "read_file": ({"path": "{cwd}/README.md"}, '{"content": "# Project\\n"}'),
    "write_file": ({"path": "{cwd}/NOTES.md", "content": "notes\n"},
                   '{"bytes_written": 6}'),
    "delegate_task": ({"goal": "List the test files"},
                      '{"results": [{"task_index": 0, "status": "completed", '
                      '"summary": "tests/ holds test_app.py."}]}'),
}  # fmt: skip


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The envelope of ``native`` (one of :data:`EXTRA`) as Hermes 0.19.0 sends it."""
    digest = hashlib.sha256(session_id.encode()).hexdigest()
    names = {"cwd": cwd, "session": session_id, "task": f"{digest[:8]}-{digest[8:12]}",
             "child": f"20261201_171643_{digest[12:18]}"}  # fmt: skip
    extra = filled(EXTRA[native], names)
    name = args = None
    if native in TOOL_EVENTS:
        name = tool or DEFAULT_TOOL
        args, result = sample_tool(TOOLS, name, tool_input, names)
        if native == "post_tool_call":
            extra["result"] = result
    return {"hook_event_name": native, "tool_name": name, "tool_input": args,
            "session_id": session_id, "cwd": cwd, "extra": {**extra, **TELEMETRY}}  # fmt: skip
