"""Qwen Code: command hooks configured in ``.qwen/settings.json``, Claude-style.

Contract (Qwen Code 0.24.4: ``packages/core/src/hooks`` — ``types.ts``, ``hookRunner.ts``
— checked against real runs offline): Qwen is a Gemini CLI descendant whose hooks took
Claude Code's names and shapes. stdin is one JSON object named by ``hook_event_name``,
with ``session_id``, ``transcript_path``, ``cwd``, an ISO ``timestamp`` and
``permission_mode``; tool events add ``tool_use_id`` and ``prompt_id``, and a subagent's
events ``agent_id``. Exit 0 with no output is "no opinion"; exit 2 blocks with stderr as
the reason; so do ``{"decision": "deny"}``, ``{"decision": "block"}`` and a PreToolUse
``hookSpecificOutput.permissionDecision: "deny"``. This driver only ever answers with
exit 0 and JSON, Claude's forms, so the reason reaches the model as the tool's result.

Qwen fires UserPromptSubmit again, with an empty ``prompt`` and no ``submitted_prompt``,
when it sends tool results back to the model (seen in every real run): that call is no
prompt the user submitted, so it decodes as ``other``. Hooks of one event run in parallel.
"""

from typing import Any

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.host import Capabilities, Encoded
from hookbus.bus.replies import BLOCKED, DENIED, Reply
from hookbus.hosts.qwen.facts import FACTS
from hookbus.hosts.shared import claude_style as cs
from hookbus.hosts.shared.driver import BaseDriver, Drops, as_text, decoder, event_name, iso_seconds

# -- native events ---------------------------------------------------------------------

#: The command-hook events of 0.24.4 that hookbus registers, in the order a session
#: fires them (``HookEventName`` in ``hooks/types.ts``).
ALL_EVENTS = (
    "SessionStart", "Notification", "UserPromptSubmit", "PreToolUse", "PermissionRequest",
    "PostToolUse", "PostToolUseFailure", "SubagentStart", "SubagentStop", "Stop",
    "PreCompact", "SessionEnd",
)  # fmt: skip

KIND_OF: dict[str, str] = {**cs.KIND_OF, "PostToolUseFailure": "after-tool"}


class Stamp(msgspec.Struct):
    """What every Qwen input adds to Claude's shapes (``HookInput``): an ISO timestamp."""

    timestamp: str | None = None


class UserPromptSubmit(cs.UserPromptSubmit, kw_only=True):
    #: Present only on a prompt the user submitted (see the module docstring).
    submitted_prompt: str | None = None


class ToolResponse(msgspec.Struct):
    """``{llmContent, returnDisplay}``, Gemini's tool result, passed on as it is."""

    llmContent: msgspec.Raw = msgspec.Raw(b"null")


#: Claude's shapes, and a PermissionRequest that names its tool.
NATIVE_TYPES: dict[str, type[cs.Native]] = {
    **cs.NATIVE_TYPES,
    "UserPromptSubmit": UserPromptSubmit,
    "PermissionRequest": cs.ToolInput,
}
_STAMP = msgspec.json.Decoder(Stamp)
_RESPONSE = msgspec.json.Decoder(ToolResponse | str | None)
_ANY = msgspec.json.Decoder()


# -- tools -----------------------------------------------------------------------------

#: Built-in tool names of 0.24.4 (the ``tools`` list of its ``system/init`` message);
#: MCP tools are ``mcp__<server>__<tool>``, as in Claude.
TOOLS: dict[str, ev.ToolKind] = {
    "run_shell_command": "shell",
    **dict.fromkeys(("edit", "write_file", "notebook_edit"), "edit"),
    **dict.fromkeys(
        ("read_file", "grep_search", "glob", "read_mcp_resource", "tool_search", "list_agents"),
        "read",
    ),
    "web_fetch": "web",
    "agent": "agent",
}
MCP_PREFIX = "mcp__"
_PATH_KEYS = ("file_path", "notebook_path", "path")


def tool_call(native: cs.ToolInput) -> ev.ToolCall:
    name, data = native.tool_name, native.tool_input
    kind: ev.ToolKind = TOOLS.get(name, "other")
    server = None
    if name.startswith(MCP_PREFIX):
        kind, server = "mcp", name[len(MCP_PREFIX) :].partition("__")[0]
    command = data.get("command") if kind == "shell" else None
    keys = _PATH_KEYS if kind != "shell" else ()
    paths = tuple(p for k in keys if isinstance(p := data.get(k), str))
    # The agent tool's input: subagent_type, description, prompt.
    spawn = ev.Spawn(agent_type=as_text(data.get("subagent_type")),
                     prompt=as_text(data.get("prompt")),
                     description=as_text(data.get("description")))  # fmt: skip
    return ev.ToolCall(name=name, kind=kind, mcp_server=server, input=data,
                       call_id=native.tool_use_id, command=as_text(command), paths=paths,
                       spawns=(spawn,) if kind == "agent" else ())  # fmt: skip


def _output(response: msgspec.Raw) -> str | None:
    """``llmContent`` as the text the model reads (a string, or a list of text parts)."""
    try:
        found = _RESPONSE.decode(response)
        value = _ANY.decode(found.llmContent) if isinstance(found, ToolResponse) else found
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return ev.head(bytes(response).decode(errors="replace"))
    if value is None or isinstance(value, str):
        return ev.head(value)
    parts = value if isinstance(value, list) else [value]
    texts = [t for p in parts if isinstance(p, dict) and isinstance(t := p.get("text"), str)]
    return ev.head("\n".join(texts)) if texts else ev.head(msgspec.json.encode(value).decode())


def _changes(tool: ev.ToolCall) -> tuple[ev.FileChange, ...]:
    # The result does not say whether write_file created the file: "update" either way.
    if tool.kind != "edit":
        return ()
    return tuple(ev.FileChange(action="update", path=p) for p in tool.paths)


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    name = event_name("qwen", data, native)
    n: Any = decoder(NATIVE_TYPES.get(name, cs.Native)).decode(data)
    common = cs.common("qwen", name, n, data, main=ev.MAIN)
    common["timestamp"] = iso_seconds(_STAMP.decode(data).timestamp)
    kind = KIND_OF.get(name, "other")
    if kind == "prompt-submit" and n.submitted_prompt is None and not n.prompt:
        kind = "other"  # tool results going back to the model (see the module docstring)
    if name == "PostToolUse":
        tool = tool_call(n)
        return ev.AfterTool(**common, tool=tool, response=n.tool_response,
                            output=_output(n.tool_response), duration_ms=n.duration_ms,
                            changes=_changes(tool))  # fmt: skip
    return cs.event(kind, common, n, tool_call)


# -- encode ----------------------------------------------------------------------------

#: A top-level ``decision: "block"`` acts here (``isBlockingDecision``); on Stop and
#: SubagentStop it is "keep working".
BLOCKABLE = {"UserPromptSubmit", "PostToolUse", "PostToolUseFailure"}
#: ``hookSpecificOutput.additionalContext`` is read.
CONTEXT = {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
           "PostToolUseFailure", "SubagentStart"}  # fmt: skip
#: Advisory events: nothing in their output acts.
SILENT = {"Notification", "SessionEnd", "PreCompact"}


def _decision(name: str, reply: Reply, out: dict[str, Any], hso: dict[str, Any],
              drop: Drops) -> None:  # fmt: skip
    decision, reason = reply.decision, reply.reason
    if decision is None or decision == "allow":
        return  # going on is the default; "allow" would also skip nothing in yolo mode
    if name == "PreToolUse":
        hso["permissionDecision"] = decision
        if reason or decision == "deny":
            hso["permissionDecisionReason"] = reason or DENIED
    elif name == "PermissionRequest":
        if decision == "ask":
            drop("decision", "ask is what the permission dialog does anyway")
            return
        hso["decision"] = {"behavior": "deny", "message": reason or DENIED}
    elif name in BLOCKABLE:
        if decision == "ask":
            drop("decision", "no ask here; blocked instead")
        out["decision"], out["reason"] = "block", reason or BLOCKED
    else:
        drop("decision", f"{decision} has no effect on this event")


RULES = cs.Rules(host="qwen", title="Qwen", context=CONTEXT, silent=SILENT,
                 unread_message="Qwen ignores this event's output",
                 unread_halt="Qwen ignores this event's output")  # fmt: skip


def encode(name: str, reply: Reply) -> Encoded:
    return cs.encode(RULES, name, reply, _decision)


# -- host facts ------------------------------------------------------------------------


def capabilities(native: str) -> Capabilities:
    return Capabilities(
        decide=native in BLOCKABLE or native in ("PreToolUse", "PermissionRequest"),
        ask=native == "PreToolUse",
        rewrite_input=native == "PreToolUse",
        context=native in CONTEXT,
        user_message=native not in SILENT,
        keep_working=native in cs.STOPS,
        halt=native not in SILENT,
    )


class QwenDriver(BaseDriver):
    name = "qwen"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    mcp_prefix = MCP_PREFIX
    samples = "hookbus.hosts.qwen.samples"
    after_edit_from = ("PostToolUse",)  # PostToolUseFailure changed nothing

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)


driver = QwenDriver()
