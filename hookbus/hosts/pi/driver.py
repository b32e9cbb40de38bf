"""The Pi driver: Pi's coding agent 0.73.1 (``@mariozechner/pi-coding-agent``), through
the extension hookbus installs (``hookbus/hosts/pi/extension.ts``).

Pi has no hook commands: extensions run inside it (``dist/core/extensions/runner.js``),
awaited with no time limit. hookbus's extension forwards each event an enabled handler
wants to ``hookbus run --host pi --event NATIVE`` and applies the reply. Both sides are
written together, so the JSON between them is our own, kept minimal:

- in (stdin): ``{"event", "sessionId", "sessionFile", "cwd", "model", "payload"}``, the
  session's facts from the extension context (``ctx.sessionManager``, ``ctx.cwd``,
  ``ctx.model``) beside Pi's event object. The extension leaves out what cannot be
  sent (the compaction's ``signal``) and what may be huge: ``agent_end`` carries only
  the last message, ``session_before_compact`` the preparation's counts;
- out (stdout): one object, ``{}`` for no opinion, else any of ``result`` (what the
  extension's handler returns to Pi, in Pi's own shape), ``input`` (``tool_call``
  only: the new tool input, which the extension writes into ``event.input`` *in place*:
  Pi reads the same object and does not validate it again) and ``append`` (``tool_result``
  only: content parts added after the tool's own, returned as the patched ``content``).

What Pi reads of a handler's result (``types.d.ts``):

- ``tool_call``: ``{block, reason}``. The model gets ``reason`` as the tool's error
  result. A handler that *throws* blocks too, so the extension catches everything;
- ``tool_result``: ``{content?, details?, isError?}``, a patch chained over handlers;
- ``before_agent_start``: ``{message: {customType, content, display}}``, a custom
  message the model reads as user text (``convertToLlm``); context goes there;
- ``session_before_compact``: ``{cancel}``; a deny cancels the compaction;
- every other event's result is ignored.

Pi has no subagents of its own. Its example extension ``examples/extensions/subagent``
registers the ``subagent`` tool (``agent``+``task``, or ``tasks``, or ``chain``), which
runs each child as a separate ``pi --mode json -p --no-session``: its ``tool_call`` is
also a subagent start per child, its ``tool_result`` a subagent stop per result in
``details.results`` (agent name, model, exit code, messages). The child's model is the
agent file's (``model:`` front matter), never the call's: a guard can record it, not
change it.
"""

from typing import Any

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.host import Capabilities, Encoded, SpawnRules
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import BLOCKED, DENIED, Reply
from hookbus.hosts.pi.facts import FACTS
from hookbus.hosts.shared.driver import BaseDriver, Drops, absolute, as_text

# -- native events: those the extension forwards, in the order Pi fires them ---------------

ALL_EVENTS = (
    "session_start", "before_agent_start", "tool_call", "tool_result", "agent_end",
    "session_before_compact", "session_shutdown",
)  # fmt: skip

KIND_OF: dict[str, str] = {
    "session_start": "session-start",
    "before_agent_start": "prompt-submit",
    "tool_call": "before-tool",
    "tool_result": "after-tool",
    "agent_end": "stop",
    "session_before_compact": "pre-compact",
    "session_shutdown": "session-end",
}

#: The example extension's spawn tool: its call starts the children, its result ends them.
SPAWN_TOOL = "subagent"
SUBAGENT_NATIVES: dict[str, str] = {"subagent-start": "tool_call", "subagent-stop": "tool_result"}

#: Pi's built-in tools (``dist/core/tools``) and the example's spawn tool.
TOOLS: dict[str, ev.ToolKind] = {
    "bash": "shell", "read": "read", "grep": "read", "find": "read", "ls": "read",
    "edit": "edit", "write": "edit", SPAWN_TOOL: "agent",
}  # fmt: skip


class Payload(msgspec.Struct):
    """The fields of Pi's event objects that hookbus reads; unknown keys are ignored."""

    reason: str | None = None
    prompt: str | None = None
    toolName: str | None = None
    toolCallId: str | None = None
    input: Any = None
    content: Any = None
    details: Any = None
    isError: bool = False
    messages: list[Any] = []
    customInstructions: str | None = None


class Native(msgspec.Struct, kw_only=True):
    """What the extension sends: the session's facts and Pi's event."""

    event: str
    sessionId: str = ""
    sessionFile: str | None = None
    cwd: str = ""
    model: str | None = None
    payload: Payload = msgspec.field(default_factory=Payload)


_DECODER = msgspec.json.Decoder(Native)


def _texts(parts: object) -> str | None:
    """The text of Pi content (a string, or parts ``{type: "text", text}``), one part a
    line, as Pi's OpenAI-compatible provider sends a tool's result to the model."""
    if isinstance(parts, str):
        return parts
    if not isinstance(parts, list):
        return None
    texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n".join(texts) if texts else None


def _final_text(messages: object) -> str | None:
    """The first text part of the last assistant message (the example's ``getFinalOutput``)."""
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "assistant":
            for part in message.get("content") or []:
                if isinstance(part, dict) and part.get("type") == "text":
                    return as_text(part.get("text"))
    return None


def _children(data: dict[str, Any]) -> list[tuple[str | None, str | None]]:
    """(agent, task) per child a ``subagent`` call asks for, in its one mode."""
    for mode in ("tasks", "chain"):
        items = data.get(mode)
        if isinstance(items, list) and items:
            return [(as_text(i.get("agent")), as_text(i.get("task")))
                    for i in items if isinstance(i, dict)]  # fmt: skip
    if data.get("agent") is not None or data.get("task") is not None:
        return [(as_text(data.get("agent")), as_text(data.get("task")))]
    return []


def tool_call(name: str, data: dict[str, Any], call_id: str | None, cwd: str) -> ev.ToolCall:
    kind: ev.ToolKind = TOOLS.get(name, "other")
    command = as_text(data.get("command")) if kind == "shell" else None
    path = as_text(data.get("path"))
    paths = (absolute(cwd, path),) if path and kind in ("edit", "read") else ()
    spawns: tuple[ev.Spawn, ...] = ()
    if kind == "agent":  # no model: the agent file names it
        spawns = tuple(ev.Spawn(agent_type=a, prompt=t) for a, t in _children(data))
    return ev.ToolCall(name=name, kind=kind, input=data, call_id=call_id, command=command,
                       paths=paths, spawns=spawns)  # fmt: skip


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    n = _DECODER.decode(data)
    p = n.payload
    name = n.event or native or ""
    common: dict[str, Any] = {
        "host": "pi", "native": name, "session_id": n.sessionId, "cwd": n.cwd,
        "transcript_path": n.sessionFile, "model": n.model, "raw": msgspec.Raw(data),
    }  # fmt: skip
    kind = KIND_OF.get(name, "other")
    if kind == "session-start":
        # startup, reload, new (a cleared session), resume, fork
        return ev.SessionStart(
            **common, source="clear" if p.reason == "new" else p.reason or "startup"
        )
    if kind == "prompt-submit":
        return ev.PromptSubmit(**common, prompt=p.prompt or "")
    if kind in ("before-tool", "after-tool"):
        given = p.input if isinstance(p.input, dict) else {}
        tool = tool_call(p.toolName or "", given, p.toolCallId, n.cwd)
        if kind == "before-tool":
            return ev.BeforeTool(**common, tool=tool)
        text = _texts(p.content)
        changes = tuple(ev.FileChange(action="update", path=f) for f in tool.paths
                        if tool.kind == "edit" and not p.isError)  # fmt: skip
        response = msgspec.Raw(msgspec.json.encode(p.content))
        return ev.AfterTool(**common, tool=tool, response=response, output=ev.head(text),
                            error=(text or "failed") if p.isError else None,
                            changes=changes)  # fmt: skip
    if kind == "stop":
        return ev.Stop(**common, last_message=_final_text(p.messages))
    if kind == "pre-compact":
        return ev.PreCompact(**common, trigger="auto", instructions=p.customInstructions)
    if kind == "session-end":
        return ev.SessionEnd(**common, reason=p.reason or "other")
    return ev.Other(**common)


def _results(details: object) -> list[dict[str, Any]]:
    found = details.get("results") if isinstance(details, dict) else None
    return [r for r in found if isinstance(r, dict)] if isinstance(found, list) else []


def _usage(found: object) -> ev.Usage | None:
    """A child's token counts (the example's ``UsageStats``)."""
    if not isinstance(found, dict):
        return None
    counts = {ours: found[theirs] for ours, theirs in (
        ("input_tokens", "input"), ("output_tokens", "output"),
        ("cache_read_tokens", "cacheRead"), ("cache_write_tokens", "cacheWrite"),
    ) if isinstance(found.get(theirs), int)}  # fmt: skip
    return ev.Usage(**counts)


def derive(event: ev.Event) -> tuple[ev.Event, ...]:
    """A ``subagent`` call is a subagent start per child; its result a stop per child."""
    if not isinstance(event, (ev.BeforeTool, ev.AfterTool)) or event.tool.name != SPAWN_TOOL:
        return ()
    common = {f: getattr(event, f) for f in ev.Event.__struct_fields__}
    call = event.tool.call_id
    if isinstance(event, ev.BeforeTool):
        return tuple(ev.SubagentStart(**common, call_id=call,
                                      child=ev.Agent(role="subagent", type=s.agent_type))
                     for s in event.tool.spawns)  # fmt: skip
    details = _DECODER.decode(event.raw).payload.details
    stops = []
    for result in _results(details):
        code = result.get("exitCode")
        status = None if not isinstance(code, int) else "completed" if code == 0 else f"exit {code}"
        stops.append(ev.SubagentStop(
            **common, call_id=call, final_text=ev.tail(_final_text(result.get("messages"))),
            child=ev.Agent(role="subagent", type=as_text(result.get("agent"))),
            status=status, usage=_usage(result.get("usage")),
        ))  # fmt: skip
    return tuple(stops)


# -- encode ----------------------------------------------------------------------------

#: Where context can go: a custom message before the prompt, content after a tool's.
CONTEXT = {"before_agent_start", "tool_result"}


def encode(name: str, reply: Reply) -> Encoded:
    out: dict[str, Any] = {}
    drop = Drops("pi", name)
    reason, context = reply.reason.strip() or DENIED, reply.context
    if name == "tool_call":
        if reply.decision in ("deny", "ask") or reply.halt is not None:
            said = reason if reply.decision in ("deny", "ask") else (reply.halt or "").strip()
            out["result"] = {"block": True, "reason": said or BLOCKED}
            if reply.decision == "ask":
                drop("decision", "Pi cannot ask the user from a hook: the call was blocked")
            if reply.halt is not None:
                drop("halt", "Pi cannot stop the agent from a hook: the call was blocked")
        elif reply.updated_input is not None:
            out["input"] = reply.updated_input
        elif reply.decision == "allow":
            drop("decision", "Pi hooks cannot grant: an allow is no opinion")
        if reply.updated_input is not None and "input" not in out:
            drop("updated_input", "the call is blocked")
    else:
        if name == "session_before_compact" and reply.decision == "deny":
            out["result"] = {"cancel": True}
        elif name == "tool_result" and reply.decision == "deny":
            context = "\n\n".join(t for t in (reason, context) if t)
            drop("decision", "a result cannot be refused; the reason was added to it")
        elif reply.decision:
            drop("decision", "Pi reads no decision from this event")
        if reply.updated_input is not None:
            drop("updated_input", "only tool_call input can be rewritten")
        if reply.halt is not None:
            drop("halt", "Pi cannot stop the agent from a hook")
    if context and name == "tool_result":
        out["append"] = [{"type": "text", "text": context}]
    elif context and name == "before_agent_start":
        out["result"] = {"message": {"customType": "hookbus", "content": context, "display": False}}
    elif context:
        drop("context", "Pi reads no context from this event")
    if reply.message:
        drop("message", "Pi shows hook output to no one")
    if reply.keep_working is not None:
        drop("keep_working", "Pi hooks cannot keep the agent working")
    return Encoded(output=HookOutput(msgspec.json.encode(out) + b"\n"), dropped=drop.parts)


#: Pi's subagent tools take {agent, task} and never the child's model: record only.
SPAWN_RULES = (SpawnRules(correction="none"),)


def capabilities(native: str) -> Capabilities:
    return Capabilities(
        decide=native in ("tool_call", "session_before_compact"),
        rewrite_input=native == "tool_call",
        context=native in CONTEXT,
        spawn_rules=SPAWN_RULES,
        spawn_knows_parent=True,  # its spawns are only recorded
    )


class PiDriver(BaseDriver):
    name = "pi"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    samples = "hookbus.hosts.pi.samples"
    after_edit_from = ("tool_result",)
    subagent_natives = SUBAGENT_NATIVES

    def derive(self, event: ev.Event) -> tuple[ev.Event, ...]:
        return (*super().derive(event), *derive(event))

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)


driver = PiDriver()
