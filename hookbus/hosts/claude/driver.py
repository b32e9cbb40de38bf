"""Claude Code: command hooks configured in ``.claude/settings.json``.

Contract (Claude Code 2.1.x hooks reference, Agent SDK ``sdk.d.ts``, and real runs of
2.1.332 offline): stdin is one JSON object named by ``hook_event_name`` (34 events);
stdout is parsed as JSON when its first non-blank character is ``{``; exit 0 with no
output means "no opinion". Exit 2 blocks too, but then Claude ignores the JSON, so this
driver only ever answers with exit 0 and JSON. Hooks of one event run in parallel.
"""

import contextlib
from typing import Any, ClassVar, Literal

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.host import Capabilities, Encoded, SpawnRules
from hookbus.bus.replies import BLOCKED, DENIED, Reply
from hookbus.hosts.claude.facts import FACTS
from hookbus.hosts.shared import claude_style as cs
from hookbus.hosts.shared.driver import BaseDriver, Drops, as_text, decoder, event_name
from hookbus.hosts.shared.names import CLAUDE_EVENTS

# -- native events ---------------------------------------------------------------------

ALL_EVENTS = CLAUDE_EVENTS

KIND_OF: dict[str, str] = {
    **cs.KIND_OF,
    # A shell command embedded in a skill, about to run: a shell guard must see it too.
    "PreSkillShellCommand": "before-tool",
    "PostToolUseFailure": "after-tool",
    "PostModelSwitch": "model-switch",
}


class SkillShellCommand(cs.ToolInput, kw_only=True):
    # Newer than the Claude Code the e2e suite pins; sdk.d.ts 0.3.332 types tool_name, but
    # a payload without it must still reach shell guards.
    tool_name: str = "Bash"


class PostModelSwitch(cs.Native, kw_only=True):
    from_model: str | None = None
    to_model: str | None = None


class WriteResponse(msgspec.Struct):
    type: str = "update"


#: The shapes of Claude's events: the Claude-style ones, plus Claude's own.
NATIVE_TYPES: dict[str, type[cs.Native]] = {
    **cs.NATIVE_TYPES,
    "PreSkillShellCommand": SkillShellCommand,
    "PostModelSwitch": PostModelSwitch,
}
_WRITE = msgspec.json.Decoder(WriteResponse)


# -- tools -----------------------------------------------------------------------------

_READ_TOOLS = (
    "Read", "Glob", "Grep", "LS", "LSP", "NotebookRead", "ToolSearch",
    "ListMcpResourcesTool", "ReadMcpResourceTool", "ReadMcpResourceDirTool",
)  # fmt: skip
TOOLS: dict[str, ev.ToolKind] = {
    **dict.fromkeys(("Bash", "PowerShell"), "shell"),
    **dict.fromkeys(("Edit", "Write", "NotebookEdit", "MultiEdit"), "edit"),
    **dict.fromkeys(_READ_TOOLS, "read"),
    **dict.fromkeys(("WebFetch", "WebSearch"), "web"),
    **dict.fromkeys(("Agent", "Task"), "agent"),  # Task is the legacy name of Agent
}
_PATH_KEYS = ("file_path", "notebook_path", "path")


def tool_call(native: cs.ToolInput) -> ev.ToolCall:
    name, data = native.tool_name, native.tool_input
    kind: ev.ToolKind = TOOLS.get(name, "other")
    server = native.mcp_server.name if native.mcp_server else None
    if name.startswith("mcp__"):
        kind = "mcp"
        server = server or name.split("__")[1]
    command = data.get("command") if kind == "shell" else None
    paths = tuple(p for k in _PATH_KEYS if isinstance(p := data.get(k), str))
    return ev.ToolCall(
        name=name,
        kind=kind,
        mcp_server=server,
        input=data,
        call_id=native.tool_use_id,
        command=command if isinstance(command, str) else None,
        paths=paths,
        spawns=(_spawn(data),) if kind == "agent" else (),
    )


def _spawn(data: dict[str, Any]) -> ev.Spawn:
    # Agent tool input (sdk.d.ts AgentInput): subagent_type, model, prompt, description.
    return ev.Spawn(
        agent_type=as_text(data.get("subagent_type")),
        model=as_text(data.get("model")),
        prompt=as_text(data.get("prompt")),
        description=as_text(data.get("description")),
    )


class AgentResponse(msgspec.Struct):
    agentId: str | None = None


_AGENT_RESPONSE = msgspec.json.Decoder(AgentResponse)
_ANY = msgspec.json.Decoder()


def _output(response: msgspec.Raw) -> str | None:
    """The tool's result as the text the model reads: Bash's stdout and stderr, an Agent's
    text content, a string as it is, anything else as its JSON."""
    try:
        value = _ANY.decode(response)
    except (msgspec.DecodeError, RecursionError):
        return None
    if value is None or isinstance(value, str):
        return ev.head(value)
    if isinstance(value, dict):
        if isinstance(value.get("stdout"), str):
            parts = [value["stdout"], value.get("stderr") or ""]
            return ev.head("\n".join(p for p in parts if isinstance(p, str) and p))
        content = value.get("content")
        if isinstance(content, list):
            texts = [c.get("text") for c in content if isinstance(c, dict)]
            return ev.head("\n".join(t for t in texts if isinstance(t, str)))
    return ev.head(bytes(response).decode(errors="replace"))


def _child_ids(tool: ev.ToolCall, response: msgspec.Raw) -> tuple[str, ...]:
    if tool.kind != "agent":
        return ()
    with contextlib.suppress(msgspec.DecodeError):
        child = _AGENT_RESPONSE.decode(response).agentId
        return (child,) if child else ()
    return ()


def _changes(tool: ev.ToolCall, response: msgspec.Raw) -> tuple[ev.FileChange, ...]:
    if tool.kind != "edit":
        return ()
    action: Literal["add", "update"] = "update"
    if tool.name == "Write":
        with contextlib.suppress(msgspec.DecodeError):
            action = "add" if _WRITE.decode(response).type == "create" else "update"
    return tuple(ev.FileChange(action=action, path=p) for p in tool.paths)


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    name = event_name("claude", data, native)
    n: Any = decoder(NATIVE_TYPES.get(name, cs.Native)).decode(data)
    # agent_type without agent_id: the main thread runs as a named agent (--agent).
    common = cs.common("claude", name, n, data, main=ev.Agent(type=n.agent_type))
    if name == "PostToolUse":
        tool = tool_call(n)
        return ev.AfterTool(
            **common,
            tool=tool,
            response=n.tool_response,
            output=_output(n.tool_response),
            duration_ms=n.duration_ms,
            changes=_changes(tool, n.tool_response),
            child_ids=_child_ids(tool, n.tool_response),
        )
    if name == "PostModelSwitch":
        return ev.ModelSwitch(**{**common, "model": n.to_model}, from_model=n.from_model)
    return cs.event(KIND_OF.get(name, "other"), common, n, tool_call)


# -- encode ----------------------------------------------------------------------------

#: Events whose hookSpecificOutput takes permissionDecision (allow/deny/ask).
PERMISSION = {"PreToolUse", "PreModelSwitch", "PreSkillShellCommand"}
#: Events a top-level ``decision: "block"`` acts on (Stop/SubagentStop: keep working).
BLOCKABLE = {
    "UserPromptSubmit", "UserPromptExpansion", "PostToolUse", "PostToolUseFailure",
    "PostToolBatch", "ConfigChange", "PreCompact", "TaskCreated", "TaskCompleted",
    "TeammateIdle",
}  # fmt: skip
CONTEXT = {
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification",
    "Setup", "SubagentStart", "PostModelSwitch", "UserPromptSubmit", "UserPromptExpansion",
    "SessionStart", "Stop", "SubagentStop",
}  # fmt: skip
#: Events whose output Claude discards (systemMessage, continue included).
SILENT = {"SessionEnd", "StopFailure", "PostCompact", "Notification", "PreCompact"}


def _decision(
    name: str, reply: Reply, out: dict[str, Any], hso: dict[str, Any], drop: Drops
) -> None:
    decision, reason = reply.decision, reply.reason
    if decision and name in PERMISSION:
        if decision == "ask" and name != "PreToolUse":
            decision = "deny"
            drop("decision", "no ask here; denied instead")
        hso["permissionDecision"] = decision
        if reason or decision == "deny":
            hso["permissionDecisionReason"] = reason or DENIED
    elif decision == "ask" and name == "PermissionRequest":
        drop("decision", "ask is what the permission dialog does anyway")
    elif decision and name == "PermissionRequest":
        verdict: dict[str, str] = {"behavior": decision}
        if decision == "deny":
            verdict["message"] = reason or DENIED
        hso["decision"] = verdict
    elif decision == "allow":
        pass  # no opinion beyond "go on", which is the default everywhere else
    elif decision and name in BLOCKABLE:
        if decision == "ask":
            drop("decision", "no ask here; blocked instead")
        out["decision"], out["reason"] = "block", reason or BLOCKED
    elif decision:
        drop("decision", f"{decision} has no effect on this event")


RULES = cs.Rules(host="claude", title="Claude", context=CONTEXT, silent=SILENT,
                 unread_message="Claude discards systemMessage here",
                 unread_halt="Claude ignores continue here")  # fmt: skip


def encode(name: str, reply: Reply) -> Encoded:
    return cs.encode(RULES, name, reply, _decision)


# -- host facts ------------------------------------------------------------------------


#: Claude Code's built-in agents that inherit the parent's model when the call names none
#: (general-purpose and claude name no model; Explore and Plan are ``inherit``).
INHERITING = frozenset({"general-purpose", "claude", "Explore", "Plan"})
#: The built-ins that run on ``CLAUDE_CODE_SUBAGENT_MODEL`` when it is set: their
#: definitions name no model, and ``inherit`` (Explore, Plan) outranks the setting.
SETTING_AGENTS = frozenset({"general-purpose", "claude"})
#: PreToolUse updatedInput sets the Agent's model without granting permission; the Agent
#: tool takes the family aliases (the seed's live verification).
SPAWN_RULES = (
    SpawnRules(correction="rewrite", inherits=INHERITING, alias="family", setting_applies=True,
               setting_agents=SETTING_AGENTS),
)  # fmt: skip


def capabilities(native: str) -> Capabilities:
    return Capabilities(
        decide=native in PERMISSION or native in BLOCKABLE or native == "PermissionRequest",
        ask=native == "PreToolUse",
        rewrite_input=native == "PreToolUse",
        spawn_model=native == "PreToolUse",  # updatedInput may set the Agent's model
        context=native in CONTEXT,
        user_message=native not in SILENT,
        keep_working=native in cs.STOPS,
        halt=native not in SILENT,
        text_limit=10_000,  # longer additionalContext/systemMessage is spilled to a file
        spawn_rules=SPAWN_RULES,
        # The plugin's agent.spawn module (hookbus install --plugin) decides spawns itself.
        spawn_module=True,
    )


class ClaudeDriver(BaseDriver):
    name = "claude"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    mcp_prefix = "mcp__"
    samples = "hookbus.hosts.claude.samples"
    after_edit_from = ("PostToolUse",)  # PostToolUseFailure changed nothing
    #: One hook process per displayed message is a cost to opt into (``natives=``).
    opt_in = ("MessageDisplay",)
    #: A WorktreeCreate command hook *replaces* Claude's worktree creation and must print
    #: the new path, which no portable reply can say.
    never = ("WorktreeCreate",)
    event_tools: ClassVar[dict[str, tuple[str, ...]]] = {
        "PreSkillShellCommand": ("Bash", "PowerShell")
    }
    #: ``~/.claude/projects/<slug>/<session>.jsonl`` (see :mod:`hookbus.hosts.shared.transcript`).
    transcript_format = "claude"

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)


driver = ClaudeDriver()
