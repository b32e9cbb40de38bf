"""Realistic goose payloads, one per native event, for ``hookbus try``.

The shape is ``HookContext``'s (block/goose ``crates/goose/src/hooks/mod.rs``@0825b570,
serialised in field order, optional fields left out where they do not apply):
``event``, ``session_id``, ``matcher_context`` (always written, null where the event
has no matcher target), then the event's own fields. A tool event carries the tool asked
for, else a harmless ``developer__shell`` ``git status``; the extension events carry the
call they repeat. Loaded only by :meth:`hookbus.hosts.shared.driver.BaseDriver.sample`, never
on a hook's path.
"""

from __future__ import annotations

import hashlib
from typing import Any

from hookbus.hosts.shared.driver import filled

#: Events that carry a tool call (the shell and file events repeat one).
TOOL_EVENTS = ("PreToolUse", "PreToolUseResult", "PostToolUse", "PostToolUseFailure",
               "BeforeReadFile", "AfterFileEdit", "BeforeShellExecution",
               "AfterShellExecution")  # fmt: skip
#: The tool each extension event repeats, and the input key its matcher target is read from.
ECHOED: dict[str, tuple[str, str]] = {
    "BeforeReadFile": ("developer__tree", "path"),
    "AfterFileEdit": ("developer__edit", "path"),
    "BeforeShellExecution": ("developer__shell", "command"),
    "AfterShellExecution": ("developer__shell", "command"),
}
DEFAULT_TOOL = "developer__shell"
#: A harmless input per tool, and what it gave back.
TOOLS: dict[str, tuple[dict[str, Any], Any]] = {
    "developer__shell": ({"command": "git status"},
                         [{"type": "text", "text": "nothing to commit, working tree clean"}]),
    "developer__edit": ({"path": "{cwd}/README.md", "before": "# Project",
                         "after": "# The project"},
                        [{"type": "text", "text": "Edited {cwd}/README.md"}]),
    "developer__tree": ({"path": "{cwd}", "depth": 2}, [{"type": "text", "text": "README.md"}]),
}  # fmt: skip
OWN: dict[str, dict[str, Any]] = {
    "UserPromptSubmit": {"message": "Run the tests and fix what fails"},
    "Stop": {"last_assistant_message": "Done. I updated the file and ran the tests."},
    "PreToolUseResult": {"decision": "allow", "policy_evaluated": True},
}


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` as goose sends it, in folder ``cwd``."""
    names = {"cwd": cwd}
    data: dict[str, Any] = {"event": native, "session_id": session_id, "matcher_context": None}
    if native in TOOL_EVENTS:
        echoed = ECHOED.get(native)
        name = tool or (echoed[0] if echoed else DEFAULT_TOOL)
        default_input, output = TOOLS.get(name, ({}, [{"type": "text", "text": "done"}]))
        given = dict(tool_input) if tool_input is not None else filled(default_input, names)
        target = given.get(echoed[1]) if echoed else name
        data["matcher_context"] = target if isinstance(target, str) else name
        if not echoed:
            digest = hashlib.sha256(session_id.encode()).hexdigest()
            data["tool_call_id"] = f"call_{digest[:24]}"
        data["tool_name"], data["tool_input"] = name, given
        if native in ("PostToolUse", "PostToolUseFailure"):
            data["tool_output"] = filled(output, names)
        data["working_dir"] = cwd
    if native == "UserPromptSubmit":
        data["matcher_context"] = OWN[native]["message"]
    data.update(OWN.get(native, {}))
    return data
