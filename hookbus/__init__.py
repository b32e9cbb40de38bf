"""hookbus: one typed event model and one async bus for the hooks of AI coding agents.

Public names are imported lazily: a hook process that answers "no opinion" must not pay
for msgspec or anyio.
"""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.bus.context import Context
    from hookbus.bus.dispatch import Bus, Dispatch, Handler, HandlerSettings, Outcome
    from hookbus.bus.errors import ConfigError, DecodeError, HandlerError, HookbusError
    from hookbus.bus.events import (
        AfterEdit,
        AfterTool,
        Agent,
        BeforeTool,
        Event,
        FileChange,
        ModelSwitch,
        Other,
        PreCompact,
        PromptSubmit,
        SessionEnd,
        SessionStart,
        Spawn,
        Stop,
        SubagentStart,
        SubagentStop,
        ToolCall,
        Usage,
    )
    from hookbus.bus.host import Capabilities, TranscriptFacts
    from hookbus.bus.marks import Group, Subscription, group, handler
    from hookbus.bus.replies import Reply

_LAZY = {
    "Context": "hookbus.bus.context",
    "Bus": "hookbus.bus.dispatch",
    "Dispatch": "hookbus.bus.dispatch",
    "Handler": "hookbus.bus.dispatch",
    "HandlerSettings": "hookbus.bus.dispatch",
    "Outcome": "hookbus.bus.dispatch",
    **dict.fromkeys(
        (
            "Agent",
            "AfterEdit",
            "AfterTool",
            "BeforeTool",
            "Event",
            "FileChange",
            "ModelSwitch",
            "Other",
            "PreCompact",
            "PromptSubmit",
            "SessionEnd",
            "SessionStart",
            "Spawn",
            "Stop",
            "SubagentStart",
            "SubagentStop",
            "ToolCall",
            "Usage",
        ),
        "hookbus.bus.events",
    ),
    **dict.fromkeys(("Group", "Subscription", "group", "handler"), "hookbus.bus.marks"),
    "Reply": "hookbus.bus.replies",
    **dict.fromkeys(
        ("ConfigError", "DecodeError", "HandlerError", "HookbusError"), "hookbus.bus.errors"
    ),
    "Capabilities": "hookbus.bus.host",
    "TranscriptFacts": "hookbus.bus.host",
}

__all__ = [
    "AfterEdit",
    "AfterTool",
    "Agent",
    "BeforeTool",
    "Bus",
    "Capabilities",
    "ConfigError",
    "Context",
    "DecodeError",
    "Dispatch",
    "Event",
    "FileChange",
    "Group",
    "Handler",
    "HandlerError",
    "HandlerSettings",
    "HookbusError",
    "ModelSwitch",
    "Other",
    "Outcome",
    "PreCompact",
    "PromptSubmit",
    "Reply",
    "SessionEnd",
    "SessionStart",
    "Spawn",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "Subscription",
    "ToolCall",
    "TranscriptFacts",
    "Usage",
    "group",
    "handler",
]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'hookbus' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
