"""Claude Code's hook dialect, written once for the hosts that speak it: Claude Code, and
Qwen Code, a Gemini CLI descendant whose hooks took Claude's names and shapes (Qwen Code
0.24.4 ``packages/core/src/hooks/types.ts``); Codex answers in the same reply shape.

Here: the input Structs of the events every Claude-style host sends alike (Claude's own
shapes, Agent SDK ``sdk.d.ts``), their decode to portable events, and the reply encoder:
``hookSpecificOutput`` (named by ``hookEventName``) takes ``permissionDecision``,
``updatedInput`` and ``additionalContext``; a top-level ``decision: "block"`` with a
``reason`` blocks, or on Stop and SubagentStop keeps the agent working; ``systemMessage``
tells the user; ``continue: false`` with ``stopReason`` stops the agent. Exit 0 with no
output is "no opinion".

What differs stays in each driver: its tool names and tool-call decode, the fields it
adds, which events read which part of a reply (its :class:`Rules`), and its decision
table, where the hosts disagree most.
"""

from __future__ import annotations

from collections.abc import Callable, Set
from typing import Any

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.host import Encoded
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import Reply
from hookbus.hosts.shared.driver import Drops

# -- input -----------------------------------------------------------------------------

#: The portable kind of each event every Claude-style host has, by Claude's name.
KIND_OF: dict[str, str] = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "prompt-submit",
    "PreToolUse": "before-tool",
    "PostToolUse": "after-tool",
    "Stop": "stop",
    "SubagentStart": "subagent-start",
    "SubagentStop": "subagent-stop",
    "PreCompact": "pre-compact",
    "SessionEnd": "session-end",
}


class Native(msgspec.Struct, kw_only=True):
    """Fields every Claude-style hook input carries (``BaseHookInput``); unknown keys are
    ignored."""

    session_id: str
    cwd: str
    transcript_path: str | None = None
    hook_event_name: str | None = None
    permission_mode: str | None = None
    prompt_id: str | None = None
    agent_id: str | None = None
    agent_type: str | None = None
    model: str | None = None


class McpServer(msgspec.Struct):
    name: str


class ToolInput(Native, kw_only=True):
    tool_name: str
    tool_input: dict[str, Any] = msgspec.field(default_factory=dict)
    tool_use_id: str | None = None
    #: Claude names a plugin's MCP server here; Qwen sends none.
    mcp_server: McpServer | None = None


class PostToolUse(ToolInput, kw_only=True):
    tool_response: msgspec.Raw = msgspec.Raw(b"null")
    duration_ms: float | None = None


class PostToolUseFailure(ToolInput, kw_only=True):
    error: str = ""
    duration_ms: float | None = None


class SessionStart(Native, kw_only=True):
    source: str = "startup"


class UserPromptSubmit(Native, kw_only=True):
    prompt: str = ""


class Stop(Native, kw_only=True):
    stop_hook_active: bool = False
    last_assistant_message: str | None = None


class SubagentStop(Stop, kw_only=True):
    agent_transcript_path: str | None = None


class PreCompact(Native, kw_only=True):
    trigger: str = "auto"
    custom_instructions: str | None = None


class SessionEnd(Native, kw_only=True):
    reason: str = "other"


#: The events every Claude-style host sends in these shapes; any other is a ``Native``
#: unless the driver knows better.
NATIVE_TYPES: dict[str, type[Native]] = {
    "SessionStart": SessionStart,
    "UserPromptSubmit": UserPromptSubmit,
    "PreToolUse": ToolInput,
    "PostToolUse": PostToolUse,
    "PostToolUseFailure": PostToolUseFailure,
    "Stop": Stop,
    "SubagentStart": Native,
    "SubagentStop": SubagentStop,
    "PreCompact": PreCompact,
    "SessionEnd": SessionEnd,
}


def common(host: str, name: str, n: Native, data: bytes, *, main: ev.Agent) -> dict[str, Any]:
    """The fields of every portable event from payload ``n`` of native event ``name``:
    ``agent_id`` marks a subagent's own events, ``main`` is the agent of the others."""
    return {
        "host": host,
        "native": name,
        "session_id": n.session_id,
        "cwd": n.cwd,
        "transcript_path": n.transcript_path or None,
        "agent": ev.Agent(role="subagent", id=n.agent_id, type=n.agent_type)
        if n.agent_id
        else main,
        "model": n.model,
        "turn_id": n.prompt_id,
        "raw": msgspec.Raw(data),
    }


def event(kind: str, common: dict[str, Any], n: Any, tool_call: Callable[[Any], ev.ToolCall]
          ) -> ev.Event:  # fmt: skip
    """The portable event of kind ``kind`` from payload ``n`` in the shapes above, its tool
    decoded by ``tool_call``. A successful after-tool is the driver's own (each host's
    result reads differently): here it is only a PostToolUseFailure."""
    if kind == "session-start":
        return ev.SessionStart(**common, source=n.source)
    if kind == "prompt-submit":
        return ev.PromptSubmit(**common, prompt=n.prompt)
    if kind == "before-tool":
        return ev.BeforeTool(**common, tool=tool_call(n))
    if isinstance(n, PostToolUseFailure):
        return ev.AfterTool(**common, tool=tool_call(n), error=n.error or "failed",
                            duration_ms=n.duration_ms)  # fmt: skip
    if kind == "stop":
        return ev.Stop(**common, stop_hook_active=n.stop_hook_active,
                       last_message=n.last_assistant_message)  # fmt: skip
    if kind in ("subagent-start", "subagent-stop"):
        # agent_id/agent_type name the child here; the event runs in its parent.
        child = ev.Agent(role="subagent", id=n.agent_id, type=n.agent_type)
        common["agent"] = ev.MAIN
        if kind == "subagent-start":
            return ev.SubagentStart(**common, child=child)
        return ev.SubagentStop(**common, child=child, final_text=ev.tail(n.last_assistant_message),
                               child_transcript_path=n.agent_transcript_path,
                               stop_hook_active=n.stop_hook_active)  # fmt: skip
    if kind == "pre-compact":
        return ev.PreCompact(**common, trigger=n.trigger, instructions=n.custom_instructions)
    if kind == "session-end":
        return ev.SessionEnd(**common, reason=n.reason)
    return ev.Other(**common)


# -- reply -----------------------------------------------------------------------------

#: The only events whose input a reply rewrites (``hookSpecificOutput.updatedInput``).
REWRITE = frozenset({"PreToolUse"})
#: ``decision: "block"`` + ``reason`` keeps the agent working here.
STOPS = frozenset({"Stop", "SubagentStop"})

#: A host's decision table: writes ``reply.decision`` into the top-level output and the
#: ``hookSpecificOutput`` of native event ``name``, or drops it.
Decide = Callable[[str, Reply, dict[str, Any], dict[str, Any], Drops], None]


class Rules(msgspec.Struct, frozen=True, kw_only=True):
    """Which native events of a host read each part of a Claude-style reply, and what the
    diagnostic of a part dropped elsewhere says."""

    host: str
    #: The host's name in a sentence ("Claude adds no context here").
    title: str
    #: ``hookSpecificOutput.additionalContext`` is read.
    context: Set[str]
    #: ``systemMessage`` (and, unless ``halt`` says otherwise, ``continue``) is not read.
    silent: Set[str]
    #: Where ``continue: false`` stops the agent; None: everywhere outside ``silent``.
    halt: Set[str] | None = None
    #: Why a systemMessage, a continue, an updatedInput went unsent where it is not read.
    unread_message: str
    unread_halt: str
    unread_rewrite: str = "only PreToolUse input can be rewritten"
    #: The rewrite rides on ``permissionDecision: "allow"``, granting the call too
    #: (Codex), so there is none after a decision.
    rewrite_allows: bool = False
    #: What a blank keep-working reason becomes (Codex refuses a block without one);
    #: None: it is sent as it is.
    blank_reason: str | None = None
    #: Where ``decision: "block"`` keeps the agent working (Qoder: Stop only).
    stops: Set[str] = STOPS

    def halts(self, name: str) -> bool:
        return name not in self.silent if self.halt is None else name in self.halt


def encode(rules: Rules, name: str, reply: Reply, decide: Decide) -> Encoded:
    """``reply`` to native event ``name`` as the JSON a Claude-style host reads, its
    decision written by the host's ``decide``."""
    out: dict[str, Any] = {}
    hso: dict[str, Any] = {}
    drop = Drops(rules.host, name)

    decide(name, reply, out, hso, drop)
    if reply.updated_input is not None:
        if name in REWRITE and not (rules.rewrite_allows and "permissionDecision" in hso):
            if rules.rewrite_allows:
                hso["permissionDecision"] = "allow"
            hso["updatedInput"] = reply.updated_input
        else:
            drop("updated_input", rules.unread_rewrite)
    if reply.keep_working is not None:
        if name in rules.stops:
            reason = reply.keep_working
            if rules.blank_reason is not None:
                reason = reason.strip() or rules.blank_reason
            out["decision"], out["reason"] = "block", reason
        else:
            drop("keep_working", f"only {' and '.join(sorted(rules.stops))} can keep working")
    if reply.context:
        if name in rules.context:
            hso["additionalContext"] = reply.context
        else:
            drop("context", f"{rules.title} adds no context here")
    if reply.message:
        if name in rules.silent:
            drop("message", rules.unread_message)
        else:
            out["systemMessage"] = reply.message
    if reply.halt is not None:
        if rules.halts(name):
            out["continue"], out["stopReason"] = False, reply.halt
        else:
            drop("halt", rules.unread_halt)
    if hso:
        out["hookSpecificOutput"] = {"hookEventName": name, **hso}
    stdout = msgspec.json.encode(out) + b"\n" if out else b""
    return Encoded(output=HookOutput(stdout=stdout), dropped=drop.parts)
