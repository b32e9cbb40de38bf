"""Kimi Code CLI (MoonshotAI/kimi-cli): command hooks in ``[[hooks]]`` tables of
``~/.kimi/config.toml``.

Contract (verified from the contract, not in the real program): kimi-cli 1.49.0's own
source, ``MoonshotAI/kimi-cli@4a550ef`` — ``src/kimi_cli/hooks/{config,events,runner,
engine}.py`` and the call sites in ``soul/toolset.py``, ``soul/kimisoul.py`` and
``subagents/runner.py``. stdin is one JSON object named by ``hook_event_name``, with
``session_id`` and ``cwd`` and the event's own snake_case fields (13 events).

Replies are block-only. A hook blocks with exit 2 (stderr the reason) or with exit 0 and
``hookSpecificOutput.permissionDecision: "deny"`` (``permissionDecisionReason`` the
reason); anything else, a timeout or a crash included, lets the call through. Only
three events act on a block: PreToolUse (the tool's result is the reason, as an error),
UserPromptSubmit (the turn ends, the reason shown as the assistant's text) and Stop
(one more turn, the reason as the user's message; ignored without a reason). Nothing
else in the output is read: no ask, no rewrite, no context, no message. This driver
answers exit 0 with the JSON deny, or nothing.
"""

from typing import Any, ClassVar

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.host import Capabilities, Encoded
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import BLOCKED, DENIED, Reply
from hookbus.hosts.kimi.facts import FACTS
from hookbus.hosts.shared import claude_style as cs
from hookbus.hosts.shared.driver import BaseDriver, Drops, as_text, decoder, event_name

# -- native events ---------------------------------------------------------------------

#: ``HookEventType`` of ``hooks/config.py``: a name outside it makes config.toml invalid.
ALL_EVENTS = (
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop",
    "StopFailure", "SessionStart", "SessionEnd", "SubagentStart", "SubagentStop",
    "PreCompact", "PostCompact", "Notification",
)  # fmt: skip
KIND_OF: dict[str, str] = {
    **{name: kind for name, kind in cs.KIND_OF.items() if name in ALL_EVENTS},
    "PostToolUseFailure": "after-tool",
}
#: Where a block acts (the call sites that read ``HookResult.action``).
BLOCKS = ("PreToolUse", "UserPromptSubmit")


class Payload(cs.Native, kw_only=True):
    """Any Kimi hook input (``hooks/events.py``): ``hook_event_name``, ``session_id``,
    ``cwd``, and every event's own fields, defaulted; unknown keys are ignored."""

    #: Claude-style fields Kimi never sends (read by :mod:`claude_style`).
    last_assistant_message: ClassVar[None] = None
    agent_transcript_path: ClassVar[None] = None
    custom_instructions: ClassVar[None] = None

    tool_name: str = ""
    tool_input: dict[str, Any] = msgspec.field(default_factory=dict)
    tool_call_id: str | None = None
    #: ``str(result)``, cut at 2000 characters.
    tool_output: str | None = None
    error: str = ""
    prompt: str = ""
    stop_hook_active: bool = False
    source: str = "startup"  # startup or resume
    reason: str = "other"
    #: The subagent's type (SubagentStart, SubagentStop), and its reply's first 500
    #: characters (SubagentStop).
    agent_name: str | None = None
    response: str | None = None
    trigger: str = "auto"


# -- tools -----------------------------------------------------------------------------

#: The built-in tools (``name`` of each class in ``src/kimi_cli/tools``). An MCP tool
#: keeps its server's own name, with no prefix (``MCPTool`` in ``soul/toolset.py``): it
#: cannot be told from the others, and is ``other``.
TOOLS: dict[str, ev.ToolKind] = {
    "Shell": "shell",
    **dict.fromkeys(("WriteFile", "StrReplaceFile"), "edit"),
    **dict.fromkeys(("ReadFile", "ReadMediaFile", "Glob", "Grep"), "read"),
    **dict.fromkeys(("FetchURL", "SearchWeb"), "web"),
    "Agent": "agent",
}
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")


def tool_call(native: Payload) -> ev.ToolCall:
    name, data = native.tool_name, native.tool_input
    kind: ev.ToolKind = TOOLS.get(name, "other")
    # The file tools name their file ``path`` (not ``file_path``); Glob its ``directory``.
    path = as_text(data.get("path")) or as_text(data.get("directory"))
    spawn = ev.Spawn(agent_type=as_text(data.get("subagent_type")),
                     model=as_text(data.get("model")), prompt=as_text(data.get("prompt")),
                     description=as_text(data.get("description")))  # fmt: skip
    return ev.ToolCall(name=name, kind=kind, input=data, call_id=native.tool_call_id or None,
                       command=as_text(data.get("command")) if kind == "shell" else None,
                       paths=(path,) if path and kind in ("edit", "read") else (),
                       spawns=(spawn,) if kind == "agent" else ())  # fmt: skip


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    name = event_name("kimi", data, native)
    n = decoder(Payload).decode(data)
    kind = KIND_OF.get(name, "other")
    # A subagent runs with its parent's hooks and session id, and its events carry no
    # mark of it: but for the session's own, an event's agent is not known.
    known = kind in ("session-start", "session-end", "subagent-start", "subagent-stop")
    common = cs.common("kimi", name, n, data, main=ev.MAIN if known else ev.Agent(role="unknown"))
    if kind in ("subagent-start", "subagent-stop"):
        child = ev.Agent(role="subagent", type=n.agent_name)
        if kind == "subagent-start":
            return ev.SubagentStart(**common, child=child)
        return ev.SubagentStop(**common, child=child, final_text=ev.tail(n.response))
    if name == "PostToolUse":
        tool = tool_call(n)
        changes = tuple(ev.FileChange(action="update", path=p) for p in tool.paths
                        if tool.kind == "edit")  # fmt: skip
        return ev.AfterTool(**common, tool=tool, output=ev.head(n.tool_output),
                            response=msgspec.Raw(msgspec.json.encode(n.tool_output)),
                            changes=changes)  # fmt: skip
    if name == "PostToolUseFailure":
        return ev.AfterTool(**common, tool=tool_call(n), error=n.error or "failed")
    return cs.event(kind, common, n, tool_call)


# -- encode ----------------------------------------------------------------------------


def _deny(name: str, reason: str) -> bytes:
    hso = {"hookEventName": name, "permissionDecision": "deny", "permissionDecisionReason": reason}
    return msgspec.json.encode({"hookSpecificOutput": hso}) + b"\n"


def encode(name: str, reply: Reply) -> Encoded:
    drop = Drops("kimi", name)
    stdout = b""
    decision = reply.decision
    if decision in ("deny", "ask") and name in BLOCKS:
        if decision == "ask":
            drop("decision", "Kimi has no ask; denied instead")
        stdout = _deny(name, reply.reason.strip() or (DENIED if name == "PreToolUse" else BLOCKED))
    elif decision in ("deny", "ask"):
        drop("decision", f"{decision} has no effect on this event")
    if reply.keep_working is not None:
        if name == "Stop":
            # Kimi ignores a Stop block without a reason: one is always sent.
            stdout = _deny(name, reply.keep_working.strip() or BLOCKED)
        else:
            drop("keep_working", "only Stop can keep working")
    for field, value, why in (
        ("updated_input", reply.updated_input, "Kimi cannot rewrite a tool's input"),
        ("context", reply.context, "Kimi reads no context from a hook"),
        ("message", reply.message, "Kimi shows a hook's output to nobody"),
        ("halt", reply.halt, "Kimi cannot stop the agent from a hook"),
    ):
        if value not in (None, ""):
            drop(field, why)
    return Encoded(output=HookOutput(stdout=stdout), dropped=drop.parts)


def capabilities(native: str) -> Capabilities:
    return Capabilities(decide=native in BLOCKS, keep_working=native == "Stop")


class KimiDriver(BaseDriver):
    name = "kimi"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    samples = "hookbus.hosts.kimi.samples"
    after_edit_from = ("PostToolUse",)  # PostToolUseFailure changed nothing

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)


driver = KimiDriver()
