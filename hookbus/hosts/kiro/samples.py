"""Realistic Kiro payloads, one per native event, for ``hookbus try``.

camelCase events are the CLI's agent-config hooks (kiro.dev/docs/cli/hooks:
``hook_event_name``, ``cwd``, ``prompt``, ``tool_name``, ``tool_input``, ``tool_response``
as ``{success, result}``); PascalCase ones are the hook files' (IDE 1.x captures in
awslabs/aidlc-workflows: ``session_id`` first, ``tool_response`` a string of prose). The
CLI documents no session id: its samples carry one so that ``hookbus try`` can name the
session asked for, which a real CLI payload may lack (it then decodes with none). A tool
event carries the tool asked for, else a harmless shell ``git status``. Loaded only by
:meth:`hookbus.hosts.shared.driver.BaseDriver.sample`, never on a hook's path.
"""

from __future__ import annotations

from typing import Any

from hookbus.hosts.shared.driver import filled

TOOL_EVENTS = ("preToolUse", "postToolUse", "PreToolUse", "PostToolUse")
PROMPT = "Run the tests and fix the failing checkout test."

#: A harmless input per tool, and the text its result reads.
TOOLS: dict[str, tuple[dict[str, Any], str]] = {
    "execute_bash": ({"command": "git status"}, "On branch main\nnothing to commit"),
    "fs_write": ({"command": "str_replace", "path": "{cwd}/README.md", "old_str": "# Project",
                  "new_str": "# The project"}, "Replaced text in {cwd}/README.md"),
    "fs_read": ({"operations": [{"mode": "Line", "path": "{cwd}/README.md"}]}, "# Project\n"),
}  # fmt: skip


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` as Kiro sends it (see the module docstring)."""
    cli = native[0].islower()
    head = {"hook_event_name": native, "cwd": cwd}
    # The IDE writes session_id first; the CLI's (undocumented) one goes last.
    data: dict[str, Any] = {**head, "session_id": session_id} if cli else {
        "session_id": session_id, **head}  # fmt: skip
    if native in ("userPromptSubmit", "UserPromptSubmit"):
        data["prompt"] = PROMPT
    if native not in TOOL_EVENTS:
        return data
    name = tool or "execute_bash"
    default_input, output = TOOLS.get(name, ({}, "done"))
    names = {"cwd": cwd}
    data["tool_name"] = name
    data["tool_input"] = (
        dict(tool_input) if tool_input is not None else filled(default_input, names)
    )
    if native.lower() == "posttooluse":
        text = filled(output, names)
        data["tool_response"] = {"success": True, "result": [text]} if cli else text
    return data
