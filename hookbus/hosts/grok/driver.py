"""The xAI Grok Build driver: Grok's hook envelope decoded, its two reply vocabularies
answered.

Contract (``xai-org/grok-build@19d42e3``: ``crates/codegen/xai-grok-hooks/src/event.rs``,
``runner/mod.rs``, ``runner/command.rs``, ``config.rs`` and the bundled user guide
``xai-grok-pager/docs/user-guide/10-hooks.md``; verified against that source, not the
real program):

- stdin is one camelCase object (``sessionId``, ``toolName``, ``toolInput``,
  ``toolResult``, ...) whose ``hookEventName`` is the snake_case event
  (``"pre_tool_use"``, ``HookEventName`` is serialised ``rename_all = "snake_case"``);
  configuration keys accept that spelling too, so hookbus uses it everywhere;
- a subagent's own events carry ``subagentType`` (no id); ``subagent_start`` and
  ``subagent_stop`` name the child by ``subagentId`` and ``subagentType``;
- only two events are gates. ``pre_tool_use`` reads ``{"decision": "deny", "reason"}``
  (on any exit code), ``{"decision": "allow"}`` and
  ``hookSpecificOutput.updatedInput`` (a whole new input); any other decision word is
  an "unknown decision value" failure, which fails *open*, so an ask is sent as a deny.
  ``stop``/``subagent_stop`` read ``{"decision": "block", "reason"}`` (keep working),
  ``hookSpecificOutput.additionalContext`` (keep working, as feedback) and
  ``{"continue": false, "stopReason"}`` (end the turn); a ``deny`` there is again an
  unknown word. Every other event ignores stdout and exit code alike;
- exit 0 with nothing printed is every event's no-opinion; timeouts, crashes and
  malformed output fail open, so hookbus never needs another exit code.
"""

from typing import Any

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.host import Capabilities, Encoded
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import BLOCKED, DENIED, Reply
from hookbus.hosts.grok.facts import FACTS
from hookbus.hosts.shared.driver import BaseDriver, Drops, absolute, as_text, iso_seconds

# -- native events ---------------------------------------------------------------------

#: ``HookEventName`` in event.rs table order (``SubagentEnd`` is an alias of
#: ``subagent_stop`` and is sent as it).
KIND_OF: dict[str, str] = {
    "session_start": "session-start",
    "user_prompt_submit": "prompt-submit",
    "pre_tool_use": "before-tool",
    "post_tool_use": "after-tool",
    "post_tool_use_failure": "after-tool",
    "permission_denied": "other",
    "stop": "stop",
    "stop_failure": "other",
    "stop_cancelled": "other",
    "notification": "other",
    "subagent_start": "subagent-start",
    "subagent_stop": "subagent-stop",
    "pre_compact": "pre-compact",
    "post_compact": "other",
    "session_end": "session-end",
}
ALL_EVENTS = tuple(KIND_OF)
TOOL_EVENTS = ("pre_tool_use", "post_tool_use", "post_tool_use_failure", "permission_denied")
#: The stop gates (``GateKind::Stop``), and the name their hookSpecificOutput carries.
STOPS = {"stop": "Stop", "subagent_stop": "SubagentStop"}


class Native(msgspec.Struct, kw_only=True, rename="camel"):
    """Grok's envelope (``HookEventEnvelope``, its ``HookPayload`` flattened into it):
    the common fields, then every event's own, defaulted; unknown keys are ignored."""

    hook_event_name: str
    session_id: str
    cwd: str
    workspace_root: str | None = None
    timestamp: str | None = None
    transcript_path: str | None = None
    prompt_id: str | None = None
    permission_mode: str | None = None
    source: str = "startup"
    model_id: str | None = None
    agent_type: str | None = None
    reason: str | None = None
    prompt: str = ""
    tool_name: str | None = None
    tool_use_id: str | None = None
    #: An object, or a string when it was cut at 128 KB (``toolInputTruncated``).
    tool_input: Any = None
    tool_result: Any = None
    duration_ms: float | None = None
    #: ``post_tool_use_failure``: the failure's text.
    error: Any = None
    stop_hook_active: bool | None = None
    last_assistant_message: str | None = None
    subagent_type: str | None = None
    subagent_id: str | None = None


_NATIVE = msgspec.json.Decoder(Native)

# -- tools -----------------------------------------------------------------------------

#: Grok's own tool ids (``xai-grok-tools``; ``types/claude_alias.rs`` maps Claude's names
#: onto them, and ``task/mod.rs is_task_tool_id`` accepts the spawn tool's three names).
_READ_TOOLS = ("read_file", "hashline_read", "grep", "hashline_grep", "list_dir", "lsp",
               "search_tool")  # fmt: skip
TOOLS: dict[str, ev.ToolKind] = {
    "run_terminal_command": "shell",
    **dict.fromkeys(("search_replace", "hashline_edit", "write"), "edit"),
    **dict.fromkeys(_READ_TOOLS, "read"),
    **dict.fromkeys(("web_search", "web_fetch"), "web"),
    **dict.fromkeys(("task", "Task", "spawn_subagent"), "agent"),
}
#: Where each file tool names its file: ``SearchReplaceInput``, ``HashlineEditInput`` and
#: the write tool say ``file_path``; ``ReadFileInput`` renames ``path`` to ``target_file``.
_PATH_KEYS = ("file_path", "target_file", "path")
#: MCP tools reach hooks as ``server__tool`` (no fixed prefix; built-in ids have no ``__``).
MCP_SEPARATOR = "__"


def tool_call(n: Native) -> ev.ToolCall:
    """The call of a tool event; a relative file path is the workspace's (the tools take
    "a relative path in the workspace or an absolute path", ``ReadFileInput``)."""
    name = n.tool_name or ""
    data: dict[str, Any] = n.tool_input if isinstance(n.tool_input, dict) else {}
    kind: ev.ToolKind = TOOLS.get(name, "other")
    server = None
    if kind == "other" and MCP_SEPARATOR in name.strip("_"):
        kind, server = "mcp", name.split(MCP_SEPARATOR, 1)[0]
    root = n.workspace_root or n.cwd
    paths = tuple(absolute(root, p) for k in _PATH_KEYS if isinstance(p := data.get(k), str))
    spawns: tuple[ev.Spawn, ...] = ()
    if kind == "agent":
        spawns = (ev.Spawn(agent_type=as_text(data.get("subagent_type")),
                           model=as_text(data.get("model")), prompt=as_text(data.get("prompt")),
                           description=as_text(data.get("description"))),)  # fmt: skip
    return ev.ToolCall(
        name=name, kind=kind, mcp_server=server, input=data, call_id=n.tool_use_id,
        command=as_text(data.get("command")) if kind == "shell" else None,
        paths=paths if kind in ("edit", "read") else (), spawns=spawns,
    )  # fmt: skip


def _text(value: object) -> str | None:
    """A ``toolResult`` as the text the model read: a string as it is, else its JSON."""
    if value is None or isinstance(value, str):
        return ev.head(value)
    return ev.head(msgspec.json.encode(value).decode())


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    n = _NATIVE.decode(data)
    name = n.hook_event_name
    kind = KIND_OF.get(name, "other")
    if name in TOOL_EVENTS and not n.tool_name:
        from hookbus.bus.errors import DecodeError

        raise DecodeError("grok", f"{name} without a tool name", "toolName")
    # Inside a subagent, events carry its type and no id; session_start names the main
    # thread's agent type (it never fires for a subagent's own session).
    agent = ev.Agent(role="subagent", type=n.subagent_type) if n.subagent_type else (
        ev.Agent(type=n.agent_type))  # fmt: skip
    common: dict[str, Any] = {
        "host": "grok", "native": name, "session_id": n.session_id, "cwd": n.cwd,
        "transcript_path": n.transcript_path, "agent": agent, "model": n.model_id,
        "timestamp": iso_seconds(n.timestamp), "turn_id": n.prompt_id,
        "raw": msgspec.Raw(data),
    }  # fmt: skip
    if kind == "session-start":
        return ev.SessionStart(**common, source=n.source)
    if kind == "prompt-submit":
        return ev.PromptSubmit(**common, prompt=n.prompt)
    if kind == "before-tool":
        return ev.BeforeTool(**common, tool=tool_call(n))
    if kind == "after-tool":
        failed = name == "post_tool_use_failure"
        return ev.AfterTool(**common, tool=tool_call(n), output=_text(n.tool_result),
                            response=msgspec.Raw(msgspec.json.encode(n.tool_result)),
                            error=(as_text(n.error) or "failed") if failed else None,
                            duration_ms=n.duration_ms)  # fmt: skip
    if kind == "stop":
        return ev.Stop(**common, stop_hook_active=bool(n.stop_hook_active),
                       last_message=n.last_assistant_message)  # fmt: skip
    if kind in ("subagent-start", "subagent-stop"):
        # The child is named by the payload; the event is about it, not inside it.
        child = ev.Agent(role="subagent", id=n.subagent_id, type=n.subagent_type)
        common["agent"] = ev.MAIN
        if kind == "subagent-start":
            return ev.SubagentStart(**common, child=child)
        return ev.SubagentStop(**common, child=child, stop_hook_active=bool(n.stop_hook_active),
                               final_text=ev.tail(n.last_assistant_message))  # fmt: skip
    if kind == "pre-compact":
        return ev.PreCompact(**common, trigger=n.source)
    if kind == "session-end":
        return ev.SessionEnd(**common, reason=n.reason or "other")
    return ev.Other(**common)


# -- encode ----------------------------------------------------------------------------


def _pre_tool(reply: Reply, out: dict[str, Any], drop: Drops) -> None:
    decision = reply.decision
    if decision == "ask":
        # No ask in Grok, and an unknown decision word fails open: a deny is what holds.
        drop("decision", "Grok has no ask; denied instead")
        decision = "deny"
    if decision == "deny":
        out["decision"], out["reason"] = "deny", reply.reason.strip() or DENIED
    elif decision == "allow":
        out["decision"] = "allow"  # Grok reads a reason only with a deny
    if reply.updated_input is not None:
        if decision == "deny":
            drop("updated_input", "a deny discards the rewrite")
        else:
            out["hookSpecificOutput"] = {"hookEventName": "PreToolUse",
                                         "updatedInput": reply.updated_input}  # fmt: skip


def _stop(name: str, reply: Reply, out: dict[str, Any], drop: Drops) -> None:
    if reply.decision in ("deny", "ask"):
        drop("decision", f"{reply.decision} is not a stop decision (Grok would fail open)")
    if reply.keep_working is not None:
        out["decision"], out["reason"] = "block", reply.keep_working.strip() or BLOCKED
    if reply.context:
        # Read here, and it keeps the agent working as a block does (10-hooks.md).
        out["hookSpecificOutput"] = {"hookEventName": STOPS[name],
                                     "additionalContext": reply.context}  # fmt: skip
    if reply.halt is not None:
        out["continue"], out["stopReason"] = False, reply.halt


def encode(name: str, reply: Reply) -> Encoded:
    out: dict[str, Any] = {}
    drop = Drops("grok", name)
    if name == "pre_tool_use":
        _pre_tool(reply, out, drop)
    elif name in STOPS:
        _stop(name, reply, out, drop)
    elif reply.decision in ("deny", "ask"):
        # Passive: Grok records the output and ignores it (user_prompt_submit too: "grok
        # ignores its exit code and its stdout").
        drop("decision", "Grok cannot block this event")
    if reply.updated_input is not None and name != "pre_tool_use":
        drop("updated_input", "only pre_tool_use input can be rewritten")
    if name not in STOPS:
        if reply.context:
            drop("context", "Grok adds no context here")
        if reply.keep_working is not None:
            drop("keep_working", "only stop and subagent_stop can keep working")
        if reply.halt is not None:
            drop("halt", "Grok ends a turn only from a stop gate")
    if reply.message:
        drop("message", "Grok shows hook output to nobody")
    stdout = msgspec.json.encode(out) + b"\n" if out else b""
    return Encoded(output=HookOutput(stdout=stdout), dropped=drop.parts)


def capabilities(native: str) -> Capabilities:
    return Capabilities(
        decide=native == "pre_tool_use",
        rewrite_input=native == "pre_tool_use",
        context=native in STOPS,
        keep_working=native in STOPS,
        halt=native in STOPS,
    )


class GrokDriver(BaseDriver):
    name = "grok"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    mcp_prefix = ""
    samples = "hookbus.hosts.grok.samples"
    after_edit_from = ("post_tool_use",)  # a failure changed nothing

    def mcp_tool_prefix(self, server: str) -> str:
        return f"{server}{MCP_SEPARATOR}"

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)


driver = GrokDriver()
