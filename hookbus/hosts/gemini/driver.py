"""Gemini CLI: command hooks configured in ``.gemini/settings.json``.

Contract (Gemini CLI 0.61.0: ``docs/hooks/reference.md`` and the bundled source of
``packages/core/src/hooks``, checked against real runs offline): stdin is one JSON object
named by ``hook_event_name`` (11 events), with ``session_id``, ``transcript_path``,
``cwd`` and an ISO ``timestamp``. Gemini parses ``stdout.trim()`` (``stderr`` when stdout
is empty) as JSON whatever the exit code; text that is not JSON becomes a deny when the
exit code is 2 or more (a missing interpreter's exit 127 blocks the tool). So this driver
always prints one JSON object and exits 0: ``{}`` is "no opinion", and it also keeps a
stray line on stderr from ever being read. The one exception is BeforeToolSelection,
where any output at all (``{}`` included) rewrites the request's tool config to mode
AUTO with no names (``hookAggregator.mergeToolSelectionOutputs``): nothing is written
there.

Gemini has no subagent or stop events: an ``invoke_agent`` tool call is the spawn, and
``AfterAgent`` is the stop. The subagent's own tool calls run the same BeforeTool and
AfterTool hooks with the parent's session and no field telling them apart, so every
tool event's agent is ``unknown`` (as are the model events, which fire in subagent chats
too). Hooks of one event run in parallel.
"""

import contextlib
from typing import Any, Literal

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.host import Capabilities, Encoded
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import DENIED, Reply
from hookbus.hosts.gemini.facts import FACTS
from hookbus.hosts.shared.driver import BaseDriver, Drops, as_text, decoder, event_name, iso_seconds

# -- native events ---------------------------------------------------------------------

#: The ``HookEventName`` enum, in the order a session fires them.
ALL_EVENTS = (
    "SessionStart", "BeforeAgent", "BeforeModel", "BeforeToolSelection", "AfterModel",
    "BeforeTool", "AfterTool", "AfterAgent", "PreCompress", "Notification", "SessionEnd",
)  # fmt: skip

KIND_OF: dict[str, str] = {
    "SessionStart": "session-start",
    "BeforeAgent": "prompt-submit",
    "BeforeTool": "before-tool",
    "AfterTool": "after-tool",
    "AfterAgent": "stop",
    "PreCompress": "pre-compact",
    "SessionEnd": "session-end",
}
#: Events that also fire inside subagents, which nothing in the payload marks.
UNMARKED = {"BeforeTool", "AfterTool", "BeforeModel", "AfterModel", "BeforeToolSelection"}
#: What AfterAgent says when the turn produced no text (``client.ts``).
NO_RESPONSE = "[no response text]"


class Native(msgspec.Struct, kw_only=True):
    """Fields every Gemini hook input carries (``createBaseInput``); unknown keys ignored."""

    session_id: str
    cwd: str
    transcript_path: str | None = None
    hook_event_name: str | None = None
    timestamp: str | None = None


class McpContext(msgspec.Struct):
    server_name: str | None = None


class ToolInput(Native, kw_only=True):
    tool_name: str
    tool_input: dict[str, Any] = msgspec.field(default_factory=dict)
    mcp_context: McpContext | None = None


class ToolError(msgspec.Struct):
    message: str = ""


class ToolResponse(msgspec.Struct):
    """``{llmContent, returnDisplay, error}``; ``error`` only when the tool itself failed
    (a shell command's non-zero exit is not one: it is in ``llmContent``)."""

    llmContent: msgspec.Raw = msgspec.Raw(b"null")
    returnDisplay: msgspec.Raw = msgspec.Raw(b"null")
    error: ToolError | None = None


class FileDiff(msgspec.Struct):
    """An edit tool's ``returnDisplay`` (``tools/write-file.ts``, ``tools/edit.ts``)."""

    isNewFile: bool = False


class AfterTool(ToolInput, kw_only=True):
    tool_response: msgspec.Raw = msgspec.Raw(b"null")


class SessionStart(Native, kw_only=True):
    source: str = "startup"


class BeforeAgent(Native, kw_only=True):
    prompt: str = ""


class AfterAgent(Native, kw_only=True):
    prompt_response: str | None = None
    stop_hook_active: bool = False


class PreCompress(Native, kw_only=True):
    trigger: str = "auto"


class SessionEnd(Native, kw_only=True):
    reason: str = "other"


NATIVE_TYPES: dict[str, type[Native]] = {
    "SessionStart": SessionStart,
    "BeforeAgent": BeforeAgent,
    "BeforeTool": ToolInput,
    "AfterTool": AfterTool,
    "AfterAgent": AfterAgent,
    "PreCompress": PreCompress,
    "SessionEnd": SessionEnd,
}
_RESPONSE = msgspec.json.Decoder(ToolResponse | None)
_DIFF = msgspec.json.Decoder(FileDiff | str | None)
_ANY = msgspec.json.Decoder()


# -- tools -----------------------------------------------------------------------------

#: Built-in tool names of 0.61.0 (``tools/tool-names.ts``); MCP tools are
#: ``mcp_<server>_<tool>`` (``tools/mcp-tool.ts``).
TOOLS: dict[str, ev.ToolKind] = {
    "run_shell_command": "shell",
    **dict.fromkeys(("write_file", "replace"), "edit"),
    **dict.fromkeys((
        "read_file", "read_many_files", "list_directory", "glob", "grep_search",
        "search_file_content",  # the legacy name of grep_search
        "read_mcp_resource", "list_mcp_resources", "get_internal_docs",
        "list_background_processes", "read_background_output",
    ), "read"),
    **dict.fromkeys(("web_fetch", "google_web_search"), "web"),
    "invoke_agent": "agent",
}  # fmt: skip
MCP_PREFIX = "mcp_"
#: Where the input names a path; a shell's ``dir_path`` is where it runs, not a target.
_PATH_KEYS = ("file_path", "dir_path", "path")


def tool_call(native: ToolInput) -> ev.ToolCall:
    name, data = native.tool_name, native.tool_input
    kind: ev.ToolKind = TOOLS.get(name, "other")
    server = None
    if name.startswith(MCP_PREFIX):
        kind = "mcp"
        # The payload's own server name first: the tool name cannot say where a server
        # name with an underscore ends (mcp-tool.ts parses it as ``^([^_]+)_``).
        context = native.mcp_context
        server = (context.server_name if context else None) or name[4:].partition("_")[0]
    command = data.get("command") if kind == "shell" else None
    keys = _PATH_KEYS if kind != "shell" else ()
    paths = tuple(p for k in keys if isinstance(p := data.get(k), str))
    # invoke_agent's input (agents/agent-tool.ts): agent_name, prompt.
    spawn = ev.Spawn(agent_type=as_text(data.get("agent_name")), prompt=as_text(data.get("prompt")))
    return ev.ToolCall(name=name, kind=kind, mcp_server=server, input=data,
                       command=command if isinstance(command, str) else None, paths=paths,
                       spawns=(spawn,) if kind == "agent" else ())  # fmt: skip


def _output(content: msgspec.Raw) -> str | None:
    """``llmContent`` as the text the model reads: a string as it is, the text of a list
    of parts, anything else as its JSON."""
    with contextlib.suppress(msgspec.DecodeError, RecursionError):
        value = _ANY.decode(content)
        if value is None or isinstance(value, str):
            return ev.head(value)
        parts = value if isinstance(value, list) else [value]
        texts = [p.get("text") for p in parts if isinstance(p, dict)]
        if any(isinstance(t, str) for t in texts):
            return ev.head("\n".join(t for t in texts if isinstance(t, str)))
        return ev.head(bytes(content).decode(errors="replace"))
    return None


def _changes(tool: ev.ToolCall, response: ToolResponse) -> tuple[ev.FileChange, ...]:
    if tool.kind != "edit":
        return ()
    action: Literal["add", "update"] = "update"
    with contextlib.suppress(msgspec.DecodeError):
        diff = _DIFF.decode(response.returnDisplay)
        action = "add" if isinstance(diff, FileDiff) and diff.isNewFile else "update"
    return tuple(ev.FileChange(action=action, path=p) for p in tool.paths)


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    name = event_name("gemini", data, native)
    n: Any = decoder(NATIVE_TYPES.get(name, Native)).decode(data)
    common: dict[str, Any] = {
        "host": "gemini",
        "native": name,
        "session_id": n.session_id,
        "cwd": n.cwd,
        # "" when chat recording is off.
        "transcript_path": n.transcript_path or None,
        "agent": ev.UNKNOWN if name in UNMARKED else ev.MAIN,
        "timestamp": iso_seconds(n.timestamp),
        "raw": msgspec.Raw(data),
    }
    kind = KIND_OF.get(name, "other")
    if kind == "session-start":
        return ev.SessionStart(**common, source=n.source)
    if kind == "prompt-submit":
        return ev.PromptSubmit(**common, prompt=n.prompt)
    if kind == "before-tool":
        return ev.BeforeTool(**common, tool=tool_call(n))
    if kind == "after-tool":
        tool = tool_call(n)
        response = _RESPONSE.decode(n.tool_response) or ToolResponse()
        error = (response.error.message or "failed") if response.error else None
        changes = _changes(tool, response) if error is None else ()
        return ev.AfterTool(**common, tool=tool, response=n.tool_response,
                            output=_output(response.llmContent), error=error,
                            changes=changes)  # fmt: skip
    if kind == "stop":
        last = n.prompt_response if n.prompt_response != NO_RESPONSE else None
        return ev.Stop(**common, stop_hook_active=n.stop_hook_active, last_message=last)
    if kind == "pre-compact":
        return ev.PreCompact(**common, trigger=n.trigger)
    if kind == "session-end":
        return ev.SessionEnd(**common, reason=n.reason)
    return ev.Other(**common)


# -- encode ----------------------------------------------------------------------------

#: Events a ``decision: "deny"`` acts on (``getBlockingError`` call sites): BeforeTool
#: blocks the call, AfterTool replaces its result with the reason, BeforeAgent drops the
#: prompt, the model events abort the turn. On AfterAgent it is "keep working".
DENY = {"BeforeTool", "AfterTool", "BeforeAgent", "BeforeModel", "AfterModel"}
#: ``hookSpecificOutput.additionalContext`` is read (wrapped in ``<hook_context>``).
CONTEXT = {"SessionStart", "BeforeAgent", "AfterTool"}
#: ``continue: false`` stops the agent loop; SessionStart and the advisory events ignore it.
HALT = {"BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "BeforeModel", "AfterModel"}
#: Takes no reply at all (any output rewrites the tool config, see the module docstring).
SILENT = {"BeforeToolSelection"}


def _decision(name: str, reply: Reply, out: dict[str, Any], drop: Drops) -> None:
    decision, reason = reply.decision, reply.reason
    if decision == "allow" or decision is None:
        return  # "allow" never skips Gemini's own confirmation: going on is the default
    if decision == "ask" and name == "BeforeTool":
        out["decision"] = "ask"
        if reason:
            # The confirmation dialog shows systemMessage, not the reason.
            out["reason"] = reason
            out.setdefault("systemMessage", reason)
    elif name in DENY:
        if decision == "ask":
            drop("decision", "no ask here; denied instead")
        out["decision"], out["reason"] = "deny", reason or DENIED
    else:
        drop("decision", f"{decision} has no effect on this event")


def encode(name: str, reply: Reply) -> Encoded:
    out: dict[str, Any] = {}
    hso: dict[str, Any] = {}
    drop = Drops("gemini", name)

    if name in SILENT:
        for field in ("decision", "updated_input", "keep_working", "context", "message", "halt"):
            if getattr(reply, field) not in (None, ""):
                drop(field, "Gemini takes no reply here")
        return Encoded(output=HookOutput(), dropped=drop.parts)
    if reply.message:
        out["systemMessage"] = reply.message
    _decision(name, reply, out, drop)
    if reply.updated_input is not None:
        if name == "BeforeTool":
            hso["tool_input"] = reply.updated_input  # replaces the arguments (0.61 scheduler)
        else:
            drop("updated_input", "only BeforeTool input can be rewritten")
    if reply.keep_working is not None:
        if name == "AfterAgent":
            out["decision"], out["reason"] = "deny", reply.keep_working
        else:
            drop("keep_working", "only AfterAgent can keep working")
    if reply.context:
        if name in CONTEXT:
            hso["additionalContext"] = reply.context
        else:
            drop("context", "Gemini adds no context here")
    if reply.halt is not None:
        if name in HALT:
            out["continue"], out["stopReason"] = False, reply.halt
        else:
            drop("halt", "Gemini ignores continue here")
    if hso:
        out["hookSpecificOutput"] = hso
    return Encoded(output=HookOutput(stdout=msgspec.json.encode(out) + b"\n"),
                   dropped=drop.parts)  # fmt: skip


# -- host facts ------------------------------------------------------------------------


def capabilities(native: str) -> Capabilities:
    return Capabilities(
        decide=native in DENY,
        ask=native == "BeforeTool",
        rewrite_input=native == "BeforeTool",
        rewrite_mode="replace",
        context=native in CONTEXT,
        user_message=native not in SILENT,
        keep_working=native == "AfterAgent",
        halt=native in HALT,
    )


class GeminiDriver(BaseDriver):
    name = "gemini"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    mcp_prefix = MCP_PREFIX
    samples = "hookbus.hosts.gemini.samples"
    after_edit_from = ("AfterTool",)
    #: The model events fire per request (AfterModel per streamed chunk): a hook process
    #: each is a cost to opt into (``natives=``).
    opt_in = ("BeforeModel", "AfterModel", "BeforeToolSelection")

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)

    def mcp_tool_prefix(self, server: str) -> str:
        return f"{MCP_PREFIX}{server}_"


driver = GeminiDriver()
