"""Qoder (Alibaba's Qoder CLI, ``qodercli``): command hooks in ``.qoder/settings.json``,
Claude-style.

Contract (verified from Qoder's published docs, not in the real program): the CLI hooks
page (https://docs.qoder.com/en/cli/hooks: files, entry fields, matchers, the common
input fields, exit codes 0 and 2) and the Qoder Agent SDK reference
(https://docs.qoder.com/zh/cli/sdk/references, "Hooks Reference": each event's input
and ``HookJSONOutput``). stdin is one JSON object named by ``hook_event_name``, with
``session_id``, ``transcript_path``, ``cwd``, and, "when available",
``permission_mode``, ``agent_id`` and ``agent_type``. Replies are Claude's: exit 0 with
JSON on stdout (plain stdout of UserPromptSubmit and SessionStart is context), exit 2
blocks "only for events that support" it. "When multiple hooks return conflicting
decision values, deny/block wins." Other exit codes, a crash, a timeout: UNCONFIRMED,
presumed fail-open. This driver only ever answers with exit 0 and JSON; "no opinion" is
nothing printed.
"""

from typing import Any

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.host import Capabilities, Encoded
from hookbus.bus.replies import BLOCKED, DENIED, Reply
from hookbus.hosts.qoder.facts import FACTS
from hookbus.hosts.shared import claude_style as cs
from hookbus.hosts.shared.driver import BaseDriver, Drops, as_text, decoder, event_name

# -- native events ---------------------------------------------------------------------

#: The SDK reference's ``HookEvent`` (the events whose input and reply it documents), in
#: the order a session fires them. The CLI lists 12 more names (Notification,
#: StopFailure, ConfigChange, WorktreeCreate, ...) without their shapes: those decode as
#: ``other`` and are not registered.
ALL_EVENTS = (
    "SessionStart", "InstructionsLoaded", "UserPromptSubmit", "PreToolUse",
    "PermissionRequest", "PostToolUse", "PostToolUseFailure", "FileChanged", "CwdChanged",
    "SubagentStart", "SubagentStop", "Stop", "PreCompact", "PostCompact", "SessionEnd",
)  # fmt: skip
KIND_OF: dict[str, str] = {**cs.KIND_OF, "PostToolUseFailure": "after-tool"}


class PostCompact(cs.Native, kw_only=True):
    trigger: str = "auto"
    compact_summary: str | None = None


NATIVE_TYPES: dict[str, type[cs.Native]] = {
    **cs.NATIVE_TYPES,
    "PermissionRequest": cs.ToolInput,
    "PostCompact": PostCompact,
}


# -- tools -----------------------------------------------------------------------------

#: The SDK reference's built-in tools ("内置工具列表", the names permissions and hooks
#: see). The subagent tool is ``Agent``; ``Mcp`` is a generic MCP call naming its server.
TOOLS: dict[str, ev.ToolKind] = {
    "Bash": "shell",
    **dict.fromkeys(("Edit", "Write", "NotebookEdit"), "edit"),
    **dict.fromkeys(("Read", "Glob", "Grep", "ListMcpResources", "ReadMcpResource"), "read"),
    **dict.fromkeys(("WebFetch", "WebSearch"), "web"),
    "Agent": "agent",
    "Mcp": "mcp",
}
MCP_PREFIX = "mcp__"
#: FileEditInput/FileWriteInput/FileReadInput: ``file_path``; NotebookEditInput:
#: ``notebook_path``; Glob and Grep: ``path``.
_PATH_KEYS = ("file_path", "notebook_path", "path")


def tool_call(native: cs.ToolInput) -> ev.ToolCall:
    name, data = native.tool_name, native.tool_input
    kind: ev.ToolKind = TOOLS.get(name, "other")
    server = as_text(data.get("server_name")) if kind == "mcp" else None
    if name.startswith(MCP_PREFIX):
        kind, server = "mcp", name[len(MCP_PREFIX) :].partition("__")[0]
    # AgentInput: prompt, and the agent to run (its type), if not the default one.
    spawn = ev.Spawn(agent_type=as_text(data.get("agent")), prompt=as_text(data.get("prompt")))
    return ev.ToolCall(
        name=name, kind=kind, mcp_server=server, input=data, call_id=native.tool_use_id,
        command=as_text(data.get("command")) if kind == "shell" else None,
        paths=tuple(p for k in _PATH_KEYS if isinstance(p := data.get(k), str))
        if kind != "shell" else (),
        spawns=(spawn,) if kind == "agent" else (),
    )  # fmt: skip


class WriteResult(msgspec.Struct):
    """FileEditOutput/FileWriteOutput/NotebookEditOutput: whether the edit took."""

    success: bool = True
    error: str | None = None


_WRITE = msgspec.json.Decoder(WriteResult)
_ANY = msgspec.json.Decoder()


def _output(response: msgspec.Raw) -> str | None:
    """The result as text: Bash's stdout and stderr, Agent's ``result``, a string as it
    is, anything else as its JSON."""
    try:
        value = _ANY.decode(response)
    except (msgspec.DecodeError, RecursionError):
        return None
    if value is None or isinstance(value, str):
        return ev.head(value)
    if isinstance(value, dict) and isinstance(value.get("stdout"), str):
        return ev.head("\n".join(p for p in (value["stdout"], value.get("stderr")) if p))
    if isinstance(value, dict) and isinstance(value.get("result"), str):
        return ev.head(value["result"])
    return ev.head(msgspec.json.encode(value).decode())


def _failure(tool: ev.ToolCall, response: msgspec.Raw) -> str | None:
    """Why an edit tool's output says ``success: false`` (it changed nothing), else None."""
    if tool.kind != "edit":
        return None
    try:
        result = _WRITE.decode(response)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    return None if result.success else result.error or "failed"


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    name = event_name("qoder", data, native)
    n: Any = decoder(NATIVE_TYPES.get(name, cs.Native)).decode(data)
    # agent_type without agent_id: the main thread runs as a named agent.
    common = cs.common("qoder", name, n, data, main=ev.Agent(type=n.agent_type))
    if name == "PostToolUse":
        tool = tool_call(n)
        # The outputs do not say whether Write created the file: "update" either way.
        error = _failure(tool, n.tool_response)
        edited = tool.paths if tool.kind == "edit" and not error else ()
        return ev.AfterTool(**common, tool=tool, response=n.tool_response, error=error,
                            output=_output(n.tool_response),
                            changes=tuple(ev.FileChange(action="update", path=p)
                                          for p in edited))  # fmt: skip
    return cs.event(KIND_OF.get(name, "other"), common, n, tool_call)


# -- encode ----------------------------------------------------------------------------

#: A top-level ``decision: "block"`` acts here (PostToolUse: "stops the agent from
#: processing the tool result further"); on Stop it is "keep working".
BLOCKABLE = {"UserPromptSubmit", "PostToolUse"}
CONTEXT = {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"}
#: ``continue: false`` is "only effective for" these.
HALT = {"PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop",
        "SubagentStop"}  # fmt: skip


def _decision(name: str, reply: Reply, out: dict[str, Any], hso: dict[str, Any],
              drop: Drops) -> None:  # fmt: skip
    decision, reason = reply.decision, reply.reason
    if decision is None:
        return
    if name == "PreToolUse":
        # An allow skips Qoder's permission prompt; deny still wins over it.
        hso["permissionDecision"] = decision
        if reason or decision == "deny":
            hso["permissionDecisionReason"] = reason or DENIED
    elif name == "PermissionRequest":
        if decision == "ask":
            drop("decision", "ask is what the permission request does anyway")
            return
        verdict: dict[str, str] = {"behavior": decision}
        if decision == "deny":
            verdict["message"] = reason or DENIED
        hso["decision"] = verdict
    elif decision == "allow":
        pass  # going on is the default everywhere else
    elif name in BLOCKABLE:
        if decision == "ask":
            drop("decision", "no ask here; blocked instead")
        out["decision"], out["reason"] = "block", reason or BLOCKED
    else:
        drop("decision", f"{decision} has no effect on this event")


RULES = cs.Rules(host="qoder", title="Qoder", context=CONTEXT, silent=frozenset(ALL_EVENTS),
                 halt=HALT, stops=frozenset({"Stop"}),
                 unread_message="Qoder documents no systemMessage (UNCONFIRMED)",
                 unread_halt="Qoder reads continue on tool, prompt, stop events only")  # fmt: skip


def encode(name: str, reply: Reply) -> Encoded:
    return cs.encode(RULES, name, reply, _decision)


# -- host facts ------------------------------------------------------------------------


def capabilities(native: str) -> Capabilities:
    return Capabilities(
        decide=native in BLOCKABLE or native in ("PreToolUse", "PermissionRequest"),
        ask=native == "PreToolUse",
        rewrite_input=native == "PreToolUse",
        context=native in CONTEXT,
        user_message=False,
        keep_working=native == "Stop",
        halt=native in HALT,
    )


class QoderDriver(BaseDriver):
    name = "qoder"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    mcp_prefix = MCP_PREFIX
    samples = "hookbus.hosts.qoder.samples"
    after_edit_from = ("PostToolUse",)  # PostToolUseFailure changed nothing

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)


driver = QoderDriver()
