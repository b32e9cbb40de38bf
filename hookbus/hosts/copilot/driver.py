"""The GitHub Copilot CLI driver: Copilot's two hook dialects, decoded and answered.

Contract (``@github/copilot@1.0.102``: the runtime's settings schema, the hooks
reference, and real runs of 1.0.102 offline, logs in ``tests/golden/copilot/real``):

- camelCase hooks (``.github/hooks/*.json``, events ``preToolUse`` ...) get a payload
  that does not name its event (only ``permissionRequest`` carries ``hookName``), so the
  manifest passes ``--event``. Fields are camelCase; ``timestamp`` is Unix milliseconds;
  ``toolArgs`` is an object in 1.0.102 and a JSON-encoded string in older builds.
- PascalCase hooks (``PreToolUse`` ..., and every hook of ``.claude/settings.json``,
  which Copilot also runs) get ``hook_event_name`` and snake_case fields, with an
  ISO-8601 ``timestamp``: that is how a Copilot payload reaching a Claude install is
  told from Claude's own (``hookbus.hosts``, the claude host's dialects).

Replies are flat JSON on stdout with exit 0: a ``permissionDecision: "deny"`` blocks the
tool; a bare ``decision: "deny"`` is ignored, and so is Claude's nested
``hookSpecificOutput`` in a camelCase hook (real runs). A Claude-named event's payload
may be Claude Code's own (a ``timestamp`` is all that tells them apart), so its reply is
Claude's with the flat keys over it, which both hosts act on (:func:`_for_both`). A hook
that exits 1 *blocks* (``Denied by preToolUse hook (hook errored)``), one past its
timeout is dropped and the tool runs; so hookbus never exits non-zero here.
"""

from typing import Any, ClassVar

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.errors import DecodeError
from hookbus.bus.host import Capabilities, Encoded
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import DENIED, Reply
from hookbus.hosts.copilot.facts import FACTS
from hookbus.hosts.shared.driver import BaseDriver, Drops, as_text, iso_seconds, json_object
from hookbus.hosts.shared.names import COPILOT_EVENTS

# -- native events ---------------------------------------------------------------------

#: camelCase event -> its PascalCase alias (the runtime's two name lists).
ALIASES = COPILOT_EVENTS
#: PascalCase -> camelCase: encode answers both the same way.
CAMEL = {pascal: camel for camel, pascal in ALIASES.items()}
ALL_EVENTS = tuple(ALIASES)

KIND_OF: dict[str, str] = {
    "sessionStart": "session-start",
    "userPromptSubmitted": "prompt-submit",
    "preToolUse": "before-tool",
    "postToolUse": "after-tool",
    "postToolUseFailure": "after-tool",
    "agentStop": "stop",
    "subagentStart": "subagent-start",
    "subagentStop": "subagent-stop",
    "preCompact": "pre-compact",
    "sessionEnd": "session-end",
}
TOOL_EVENTS = {"preToolUse", "permissionRequest", "postToolUse", "postToolUseFailure"}


def camel(native: str) -> str:
    """The camelCase name of either spelling of an event."""
    return CAMEL.get(native, native)


class Camel(msgspec.Struct, kw_only=True, rename="camel"):
    """A camelCase payload (``sessionId`` ...: the fields are named as in :class:`Snake`,
    and spelled in camelCase); every event's own fields defaulted, unknown keys ignored."""

    session_id: str
    cwd: str
    timestamp: float | None = None
    transcript_path: str | None = None
    source: str = "startup"
    prompt: str = ""
    tool_name: str | None = None
    tool_args: Any = None
    tool_input: Any = None  # permissionRequest spells it so
    tool_result: Any = None
    error: Any = None
    # Spelled so in camelCase payloads too (real runs).
    stop_hook_active: bool = msgspec.field(default=False, name="stop_hook_active")
    agent_id: str | None = None
    agent_type: str | None = None
    agent_name: str | None = None
    parent_agent_id: str | None = None
    response: str | None = None
    stop_reason: str | None = None
    trigger: str = "auto"
    custom_instructions: str | None = None
    reason: str = "other"


class Snake(msgspec.Struct, kw_only=True):
    """A PascalCase-dialect payload: ``hook_event_name`` and snake_case fields."""

    #: Only in camelCase payloads.
    tool_args: ClassVar[None] = None
    parent_agent_id: ClassVar[None] = None
    response: ClassVar[None] = None

    hook_event_name: str | None = None
    session_id: str
    cwd: str
    timestamp: str | float | None = None
    transcript_path: str | None = None
    source: str = "startup"
    prompt: str = ""
    tool_name: str | None = None
    tool_input: Any = None
    tool_result: Any = None
    error: Any = None
    stop_hook_active: bool = False
    agent_id: str | None = None
    agent_type: str | None = None
    agent_name: str | None = None
    stop_reason: str | None = None
    trigger: str = "auto"
    custom_instructions: str | None = None
    reason: str = "other"


class Head(msgspec.Struct):
    hook_event_name: str | None = None
    hookName: str | None = None


_HEAD = msgspec.json.Decoder(Head)
_CAMEL = msgspec.json.Decoder(Camel)
_SNAKE = msgspec.json.Decoder(Snake)

# -- tools -----------------------------------------------------------------------------

#: Copilot's tool names, and every one of Claude's (a "Claude-format" config sees those,
#: and a Claude payload with a timestamp is decoded here: a Claude tool of no kind here
#: would slip past a guard on its kind; tests hold the two tables together).
TOOLS: dict[str, ev.ToolKind] = {
    **dict.fromkeys(("bash", "powershell", "shell", "Bash", "PowerShell"), "shell"),
    **dict.fromkeys(("edit", "create", "str_replace_editor", "Edit", "Write", "MultiEdit",
                     "NotebookEdit"), "edit"),
    **dict.fromkeys(("view", "glob", "grep", "Read", "Glob", "Grep", "LS", "LSP", "NotebookRead",
                     "ToolSearch", "ListMcpResourcesTool", "ReadMcpResourceTool",
                     "ReadMcpResourceDirTool"), "read"),
    **dict.fromkeys(("web_fetch", "WebFetch", "WebSearch"), "web"),
    **dict.fromkeys(("task", "Task", "Agent"), "agent"),
}  # fmt: skip


def tool_call(name: str, data: dict[str, Any]) -> ev.ToolCall:
    kind: ev.ToolKind = TOOLS.get(name, "other")
    server = None
    if name.startswith("mcp__"):
        kind, server = "mcp", name.split("__")[1]
    path = as_text(data.get("path")) or as_text(data.get("file_path"))
    spawns: tuple[ev.Spawn, ...] = ()
    if kind == "agent":
        kind_of = as_text(data.get("agent_type")) or as_text(data.get("subagent_type"))
        spawns = (ev.Spawn(agent_type=kind_of, model=as_text(data.get("model")),
                           prompt=as_text(data.get("prompt")),
                           description=as_text(data.get("description"))),)  # fmt: skip
    return ev.ToolCall(
        name=name, kind=kind, mcp_server=server, input=data,
        command=as_text(data.get("command")) if kind == "shell" else None,
        paths=(path,) if path and kind in ("edit", "read") else (), spawns=spawns,
    )  # fmt: skip


def _result(value: object) -> tuple[str | None, str | None]:
    """(the text the model read, the failure) of a ``toolResult``/``tool_result``."""
    if not isinstance(value, dict):
        return None, None
    text = as_text(value.get("textResultForLlm")) or as_text(value.get("text_result_for_llm"))
    kind = value.get("resultType") or value.get("result_type")
    return ev.head(text), ev.head(text) if kind not in (None, "success") else None


def _seconds(value: object) -> float | None:
    if isinstance(value, int | float):
        return value / 1000  # camelCase: Unix milliseconds
    return iso_seconds(value) if isinstance(value, str) else None


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    head = _HEAD.decode(data)
    name = head.hook_event_name or head.hookName or native
    if not name:
        raise DecodeError("copilot", "no hook_event_name and no --event given")
    p = _SNAKE.decode(data) if head.hook_event_name is not None else _CAMEL.decode(data)
    key = camel(name)
    kind = KIND_OF.get(key, "other")
    if key in TOOL_EVENTS and not p.tool_name:
        raise DecodeError("copilot", f"{name} without a tool name", "toolName")
    # toolArgs is an object in 1.0.102, JSON-encoded in a string in older builds.
    args = json_object(p.tool_args if p.tool_args is not None else p.tool_input)
    # A subagent's own events carry its agentId (and its id as sessionId).
    child = ev.Agent(role="subagent", id=p.agent_id, type=p.agent_type or p.agent_name,
                     parent_id=p.parent_agent_id)  # fmt: skip
    in_child = bool(p.agent_id) and kind not in ("subagent-start", "subagent-stop")
    common: dict[str, Any] = {
        "host": "copilot", "native": name, "session_id": p.session_id, "cwd": p.cwd,
        "transcript_path": p.transcript_path, "timestamp": _seconds(p.timestamp),
        "agent": child if in_child else ev.MAIN,
        "raw": msgspec.Raw(data),
    }  # fmt: skip
    if kind == "session-start":
        return ev.SessionStart(**common, source=p.source)
    if kind == "prompt-submit":
        return ev.PromptSubmit(**common, prompt=p.prompt)
    if kind == "before-tool":
        return ev.BeforeTool(**common, tool=tool_call(p.tool_name or "", args))
    if kind == "after-tool":
        output, failed = _result(p.tool_result)
        failure = as_text(p.error) or failed if key == "postToolUseFailure" else failed
        response = msgspec.Raw(msgspec.json.encode(p.tool_result))
        return ev.AfterTool(**common, tool=tool_call(p.tool_name or "", args), output=output,
                            error=failure, response=response)  # fmt: skip
    if kind == "stop":
        return ev.Stop(**common, stop_hook_active=p.stop_hook_active)
    if kind == "subagent-start":
        return ev.SubagentStart(**common, child=child)
    if kind == "subagent-stop":
        return ev.SubagentStop(**common, child=child, final_text=ev.tail(p.response),
                               stop_hook_active=p.stop_hook_active)  # fmt: skip
    if kind == "pre-compact":
        return ev.PreCompact(**common, trigger=p.trigger, instructions=p.custom_instructions)
    if kind == "session-end":
        return ev.SessionEnd(**common, reason=p.reason)
    return ev.Other(**common)


# -- encode: what each event reads, one set per reply part -------------------------------

#: A flat ``permissionDecision`` acts here (any deny blocks; ask is a deny in autopilot).
DECIDES = {"preToolUse"}
#: ``decision: "block"`` + ``reason`` keeps the agent working (the reason is the prompt).
STOPS = {"agentStop", "subagentStop"}
CONTEXT = {"sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse",
           "postToolUseFailure", "subagentStart"}  # fmt: skip


def encode(name: str, reply: Reply) -> Encoded:
    flat = _flat(name, reply)
    return flat if name in ALIASES else _for_both(name, reply, flat)


def _for_both(name: str, reply: Reply, flat: Encoded) -> Encoded:
    """The reply to a Claude-named payload (``PreToolUse`` ..., what Copilot gives the
    hooks of ``.claude/settings.json``), which may be Claude Code's own: Copilot's ISO
    ``timestamp`` is its only mark, a key Claude may add one day. So it is Claude's reply
    with Copilot's flat keys over it, one object both hosts act on alike (real runs of
    Copilot CLI 1.0.102 and Claude Code 2.1.332, ``docs/hosts/copilot.md``): each ignores
    the other's keys, both block a PreToolUse on either's deny and a UserPromptSubmit on
    ``decision: "block"``. A part is dropped only when neither form carries it."""
    # Claude's driver, asked of the registry by name (a host's folder imports no other
    # host's), here: only a Claude-named event pays for loading it.
    from hookbus.hosts import driver

    theirs = driver("claude").encode(name, reply)
    out = {**_fields(theirs), **_fields(flat)}
    unsent = {d.field for d in theirs.dropped}
    stdout = msgspec.json.encode(out) + b"\n" if out else b""
    return Encoded(output=HookOutput(stdout=stdout),
                   dropped=tuple(d for d in flat.dropped if d.field in unsent))  # fmt: skip


def _fields(encoded: Encoded) -> dict[str, Any]:
    stdout = encoded.output.stdout
    return msgspec.json.decode(stdout, type=dict[str, Any]) if stdout else {}


def _flat(name: str, reply: Reply) -> Encoded:
    """``reply`` in Copilot's own flat form."""
    key = camel(name)
    out: dict[str, Any] = {}
    drop = Drops("copilot", name)

    decision, reason = reply.decision, reply.reason.strip() or DENIED
    if decision and key in DECIDES:
        out["permissionDecision"] = decision
        if decision != "allow" or reply.reason.strip():
            out["permissionDecisionReason"] = reason
    elif decision in ("allow", "deny") and key == "permissionRequest":
        out["behavior"] = decision
        if decision == "deny":
            out["message"] = reason
    elif decision == "deny" and key == "userPromptSubmitted":
        # No block here: answering the prompt ends it with the reason instead.
        out["handled"], out["responseContent"] = True, reason
    elif decision:
        drop("decision", f"{decision} has no effect on this event")
    if reply.updated_input is not None:
        if key == "preToolUse" and decision != "deny":
            out["modifiedArgs"] = reply.updated_input
        else:
            drop("updated_input", "only preToolUse input can be rewritten, and not in a deny")
    if reply.keep_working is not None:
        if key in STOPS:
            out["decision"], out["reason"] = "block", reply.keep_working.strip() or DENIED
        else:
            drop("keep_working", "only agentStop and subagentStop can keep working")
    if reply.context:
        if key in CONTEXT:
            out["additionalContext"] = reply.context
        else:
            drop("context", "Copilot adds no context here")
    if reply.message:
        drop("message", "Copilot shows hook output to nobody")
    if reply.halt is not None:
        if key == "permissionRequest" and out.get("behavior") == "deny":
            out["interrupt"] = True
        else:
            drop("halt", "Copilot stops the agent only with a permissionRequest deny")
    stdout = msgspec.json.encode(out) + b"\n" if out else b""
    return Encoded(output=HookOutput(stdout=stdout), dropped=drop.parts)


def capabilities(native: str) -> Capabilities:
    key = camel(native)
    return Capabilities(
        decide=key in DECIDES or key in ("permissionRequest", "userPromptSubmitted"),
        rewrite_input=key == "preToolUse",
        context=key in CONTEXT,
        keep_working=key in STOPS,
        halt=key == "permissionRequest",
    )


class CopilotDriver(BaseDriver):
    name = "copilot"
    facts = FACTS
    events = ALL_EVENTS
    kinds: ClassVar[dict[str, str]] = {**KIND_OF, **{ALIASES[k]: v for k, v in KIND_OF.items()}}
    tools = TOOLS
    mcp_prefix = "mcp__"
    samples = "hookbus.hosts.copilot.samples"
    after_edit_from = ("postToolUse", "PostToolUse")

    def natives(self, kind: str, named: tuple[str, ...] = ()) -> tuple[str, ...]:
        # The PascalCase spelling is routed too: .claude/settings.json hooks reach the
        # Copilot driver as PreToolUse, Stop ... (a real 1.0.102 run). Manifests still
        # write only the camelCase events.
        found = super().natives(kind, tuple(camel(n) for n in named))
        return (*found, *(ALIASES[n] for n in found if n in ALIASES))

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)


driver = CopilotDriver()
