"""Realistic OpenHands payloads, one per native event, for ``hookbus try``.

The shape is ``HookEvent.model_dump_json()`` (``OpenHands/software-agent-sdk@611629e``
``openhands-sdk/openhands/sdk/hooks/types.py``): every field, in its order, ``null``
where unset. A tool's input is its Action model dumped, defaults included
(``TerminalAction``: ``command``, ``is_input``, ``timeout``, ``reset``;
``FileEditorAction``: ``command``, ``path``, ``file_text``, ``old_str``, ``new_str``,
``insert_line``, ``view_range``). A tool event carries the tool asked for, else a
harmless ``terminal`` ``git status``. The texts are illustrative.

Loaded only by :meth:`hookbus.hosts.openhands.driver.OpenHandsDriver.sample`, never on a
hook's path.
"""

from __future__ import annotations

from typing import Any

from hookbus.hosts.shared.driver import filled

TOOL_EVENTS = ("PreToolUse", "PostToolUse")
DEFAULT_TOOL = "terminal"

#: A harmless input per tool, and the observation it gave back.
TOOLS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "terminal": ({"command": "git status", "is_input": False, "timeout": None, "reset": False},
                 {"content": [{"type": "text", "text": "nothing to commit, working tree clean"}],
                  "is_error": False, "command": "git status", "exit_code": 0}),
    "file_editor": ({"command": "str_replace", "path": "{cwd}/README.md", "file_text": None,
                     "old_str": "# Project", "new_str": "# The project", "insert_line": None,
                     "view_range": None},
                    {"content": [{"type": "text", "text": "The file has been edited."}],
                     "is_error": False, "command": "str_replace", "path": "{cwd}/README.md"}),
}  # fmt: skip


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` as OpenHands writes it to a hook's stdin."""
    name = tool or DEFAULT_TOOL
    default, response = TOOLS.get(name, ({}, {"content": [], "is_error": False}))
    args = dict(tool_input) if tool_input is not None else filled(default, {"cwd": cwd})
    data: dict[str, Any] = {"event_type": native, "tool_name": None, "tool_input": None,
                            "tool_response": None, "message": None, "session_id": session_id,
                            "working_dir": cwd, "metadata": {}}  # fmt: skip
    if native in TOOL_EVENTS:
        data["tool_name"], data["tool_input"] = name, args
    if native == "PostToolUse":
        data["tool_response"] = filled(response, {"cwd": cwd})
    if native == "UserPromptSubmit":
        data["message"] = "Run the tests and fix what fails"
    if native == "Stop":
        data["metadata"] = {"reason": "finish"}
    return data
