"""Toy payloads, one per native event, for ``hookbus try`` and the contract suite.
Loaded only by :meth:`hookbus.hosts.shared.driver.BaseDriver.sample`, never on a hook's
path."""

from __future__ import annotations

from typing import Any

#: Events that carry a tool call.
TOOL_EVENTS = ("BeforeCall", "AfterCall")


def payload(
    native: str,
    tool: str | None,
    tool_input: dict[str, object] | None,
    *,
    cwd: str,
    session_id: str,
) -> dict[str, Any]:
    """The payload of ``native`` as the toy sends it, in folder ``cwd`` (a harmless
    ``sh ls`` when a tool event is asked for no tool)."""
    data: dict[str, Any] = {"session": session_id, "roots": [cwd]}
    if native in TOOL_EVENTS:
        args = tool_input if tool_input is not None else {"cmd": "ls"}
        call: dict[str, Any] = {"tool": {"name": tool or "sh", "args": args}, "id": "call-1"}
        if native == "AfterCall":
            call["result"] = "done"
        data["call"] = call
    return data
