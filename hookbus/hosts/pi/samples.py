"""Realistic payloads of hookbus's Pi extension (Pi 0.73.1), one per native event, for
``hookbus try``.

The shape and key order are those of real runs (``tests/golden/pi/real``): the
extension's envelope (``event``, ``sessionId``, ``sessionFile``, ``cwd``, ``model``)
around Pi's event object, as the extension slims it. A tool event carries the tool asked
for, else a harmless ``bash`` ``git status``. Loaded only by
:meth:`hookbus.hosts.shared.driver.BaseDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

from typing import Any

from hookbus.hosts.shared.driver import filled, sample_tool

ASSISTANT = {
    "role": "assistant", "content": [{"type": "text", "text": "All done."}],
    "api": "openai-completions", "provider": "openai", "model": "gpt-5",
    "stopReason": "stop", "timestamp": 1796145635350,
}  # fmt: skip

#: Native event -> Pi's event object (the extension adds ``type``).
EVENTS: dict[str, dict[str, Any]] = {
    "session_start": {"reason": "startup"},
    "before_agent_start": {"prompt": "Run the tests and fix what fails",
                           "systemPrompt": "You are an expert coding assistant."},
    "tool_call": {},
    "tool_result": {},
    "agent_end": {"messages": [ASSISTANT]},
    "session_before_compact": {"preparation": {"firstKeptEntryId": "a1b2c3d4",
                               "tokensBefore": 120345, "isSplitTurn": False}},
    "session_shutdown": {"reason": "quit"},
}  # fmt: skip

TOOL_EVENTS = ("tool_call", "tool_result")
DEFAULT_TOOL = "bash"

#: A harmless input per tool, and its result's content.
TOOLS: dict[str, tuple[dict[str, Any], Any]] = {
    "bash": ({"command": "git status"},
             [{"type": "text", "text": "On branch main\nnothing to commit, working tree clean\n"}]),
    "read": ({"path": "README.md"}, [{"type": "text", "text": "# Project\n"}]),
    "edit": ({"path": "README.md", "edits": [{"oldText": "# Project", "newText": "# The project"}]},
             [{"type": "text", "text": "Successfully replaced 1 block(s) in README.md."}]),
    "subagent": ({"agent": "scout", "task": "List the test files of this project."},
                 [{"type": "text", "text": "tests/ holds test_app.py."}]),
}  # fmt: skip


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` (one of :data:`EVENTS`) as hookbus's extension sends it."""
    names = {"cwd": cwd}
    event: dict[str, Any] = {"type": native, **filled(EVENTS[native], names)}
    if native in TOOL_EVENTS:
        name = tool or DEFAULT_TOOL
        given, content = sample_tool(TOOLS, name, tool_input, names)
        event.update(toolName=name, toolCallId="call_" + session_id[:8], input=given)
        if native == "tool_result":
            event.update(content=content if isinstance(content, list) else
                         [{"type": "text", "text": str(content)}], isError=False)  # fmt: skip
    slug = "--" + cwd.strip("/").replace("/", "-") + "--"
    name = f"2026-12-01T10-12-03-025Z_{session_id}.jsonl"
    return {
        "event": native,
        "sessionId": session_id,
        "sessionFile": f"/home/dev/.pi/agent/sessions/{slug}/{name}",
        "cwd": cwd,
        "model": "openai/gpt-5",
        "payload": event,
    }
