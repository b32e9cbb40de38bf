"""The Cursor driver: the hooks of Cursor's agent (IDE and ``cursor-agent`` CLI), decoded
and answered.

Contract (cursor.com/docs/hooks as of 2026-08, with the older cursor.com/docs/agent/hooks;
verified against the contract suite, not a running Cursor):

- Every payload names its event in ``hook_event_name`` (camelCase) and carries
  ``conversation_id``, ``generation_id``, ``model``, ``cursor_version``,
  ``workspace_roots``, ``user_email`` and ``transcript_path``; snake_case fields.
- ``postToolUse.tool_output``, ``beforeMCPExecution.tool_input`` and
  ``afterMCPExecution.result_json`` are JSON *strings*, decoded here.
- Shell commands fire both ``preToolUse`` (tool ``Shell``) and ``beforeShellExecution``;
  MCP calls ``preToolUse`` and ``beforeMCPExecution``; reads ``preToolUse`` and
  ``beforeReadFile``. The portable before-tool/after-tool kinds register ``preToolUse``
  and ``postToolUse``/``postToolUseFailure`` only, so a handler runs once per call; the
  specific events are registered for a handler that names them (``natives=``).

Replies are one JSON object on stdout with exit 0, per event: ``permission`` (allow,
deny, ask) with ``user_message`` and ``agent_message`` on the permission events,
``updated_input`` on ``preToolUse``, ``continue`` on ``beforeSubmitPrompt``,
``followup_message`` on ``stop``/``subagentStop`` (``loop_count`` is the loop guard),
``additional_context`` on ``sessionStart``/``postToolUse``. A permission hook whose
output is not JSON has failed (a block under ``failClosed``), so every answer, the
no-opinion included, is valid JSON; ``subagentStart`` always says allow or deny.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.errors import DecodeError
from hookbus.bus.host import Capabilities, Encoded, SpawnRules
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import DENIED, Reply
from hookbus.hosts.cursor.facts import FACTS
from hookbus.hosts.shared.driver import BaseDriver, Drops, as_text, decoder, event_name, json_object
from hookbus.hosts.shared.names import CURSOR_EVENTS

# -- native events ---------------------------------------------------------------------

#: Every event of the docs' table, in its order (manifests write them in this order).
ALL_EVENTS = (
    "sessionStart", "sessionEnd", "beforeSubmitPrompt", "preToolUse", "postToolUse",
    "postToolUseFailure", "subagentStart", "subagentStop", "beforeShellExecution",
    "afterShellExecution", "beforeMCPExecution", "afterMCPExecution", "beforeReadFile",
    "afterFileEdit", "preCompact", "stop", "afterAgentResponse", "afterAgentThought",
    "beforeTabFileRead", "afterTabFileEdit",
)  # fmt: skip
KIND_OF: dict[str, str] = {
    "sessionStart": "session-start", "sessionEnd": "session-end",
    "beforeSubmitPrompt": "prompt-submit", "subagentStart": "subagent-start",
    "subagentStop": "subagent-stop", "afterFileEdit": "after-edit", "preCompact": "pre-compact",
    "stop": "stop",
    **dict.fromkeys(("preToolUse", "beforeShellExecution", "beforeMCPExecution",
                     "beforeReadFile"), "before-tool"),
    **dict.fromkeys(("postToolUse", "postToolUseFailure", "afterShellExecution",
                     "afterMCPExecution"), "after-tool"),
}  # fmt: skip
#: The second event of a call ``preToolUse``/``postToolUse`` already covers: registered
#: only for a handler that names it.
SPECIFIC = ("beforeShellExecution", "afterShellExecution", "beforeMCPExecution",
            "afterMCPExecution", "beforeReadFile")  # fmt: skip
#: Tab completions (not the agent) and the agent's replies and thoughts: kind ``other``,
#: registered only on request (a Tab hook runs per completion). The app's workspaceOpen
#: is left out: it has no conversation, and its one reply (pluginPaths) loads plugins.
OPT_IN = ("afterAgentResponse", "afterAgentThought", "beforeTabFileRead", "afterTabFileEdit")
#: The tool each event of one tool stands for (the docs' matcher values); such an event
#: has the call's input at its top level (command, cwd, sandbox; file_path, content).
EVENT_TOOL = {"beforeShellExecution": "Shell", "afterShellExecution": "Shell",
              "beforeReadFile": "Read", "beforeTabFileRead": "TabRead",
              "afterFileEdit": "Write", "afterTabFileEdit": "TabWrite"}  # fmt: skip
MCP_EVENTS = {"beforeMCPExecution", "afterMCPExecution"}
#: The fields every payload has: the rest of a one-tool event's is the call's input.
COMMON = frozenset(("conversation_id", "generation_id", "model", "model_id", "model_params",
                    "hook_event_name", "cursor_version", "workspace_roots", "user_email",
                    "transcript_path"))  # fmt: skip
#: What an after event adds to the call's input: its result.
RESULT = frozenset(("output", "duration"))


def own(native: str) -> str:
    """Cursor's name of an event, also when a ``.claude/settings.json`` hook names it."""
    return CURSOR_EVENTS.get(native, native)


class Payload(msgspec.Struct, kw_only=True):
    """Any Cursor payload: the common fields, and every event's own ones defaulted."""

    hook_event_name: str
    conversation_id: str = ""
    session_id: str = ""
    generation_id: str | None = None
    model: str | None = None
    workspace_roots: list[str] = []
    transcript_path: str | None = None
    cwd: str = ""
    tool_name: str | None = None
    tool_input: Any = None
    tool_output: Any = None
    tool_use_id: str | None = None
    duration: float | None = None
    error_message: str | None = None
    failure_type: str | None = None
    mcp_server_name: str | None = None
    output: str | None = None
    result_json: Any = None
    file_path: str | None = None
    prompt: str = ""
    subagent_id: str | None = None
    subagent_type: str | None = None
    parent_conversation_id: str | None = None
    tool_call_id: str | None = None
    subagent_model: str | None = None
    status: str | None = None
    summary: str | None = None
    agent_transcript_path: str | None = None
    loop_count: int = 0
    trigger: str = "auto"
    reason: str = "other"


# -- tools -----------------------------------------------------------------------------

#: Cursor's tool types (the docs' matcher values); Edit and StrReplace are seen only in
#: third-party configurations.
TOOLS: dict[str, ev.ToolKind] = {
    "Shell": "shell",
    **dict.fromkeys(("Read", "Grep", "Glob", "TabRead"), "read"),
    **dict.fromkeys(("Write", "Edit", "StrReplace", "Delete", "TabWrite"), "edit"),
    "Task": "agent",
}
MCP_PREFIX = "MCP:"


def tool_call(name: str, data: dict[str, Any], call_id: str | None, *, mcp: bool = False,
              server: str | None = None) -> ev.ToolCall:  # fmt: skip
    kind: ev.ToolKind = "mcp" if mcp or name.startswith(MCP_PREFIX) else TOOLS.get(name, "other")
    # Write and Read name file_path; Delete names path (third-party hook tests).
    path = as_text(data.get("file_path")) or as_text(data.get("path"))
    spawns: tuple[ev.Spawn, ...] = ()
    if kind == "agent":
        spawns = (ev.Spawn(agent_type=as_text(data.get("subagent_type")),
                           model=as_text(data.get("model")), prompt=as_text(data.get("prompt")),
                           description=as_text(data.get("description"))),)  # fmt: skip
    return ev.ToolCall(
        name=name, kind=kind, mcp_server=server if kind == "mcp" else None, input=data,
        call_id=call_id, command=as_text(data.get("command")) if kind == "shell" else None,
        paths=(path,) if path and kind in ("edit", "read") else (), spawns=spawns,
    )  # fmt: skip


def _tool(key: str, p: Payload, data: bytes) -> ev.ToolCall:
    """The tool of a tool event: named in the payload, or the one its event stands for,
    whose input is the payload's own fields (``beforeShellExecution``: command, cwd ...)."""
    if key in EVENT_TOOL:
        fields = decoder(dict[str, Any]).decode(data)
        call = {k: v for k, v in fields.items() if k not in COMMON and k not in RESULT}
        return tool_call(EVENT_TOOL[key], call, p.tool_use_id)
    if not p.tool_name:
        # Missing or null: a call no tool filter can match, which a shell guard would
        # let pass as "other" (the gate sends it here, unable to tell); unreadable
        # instead, as on the other hosts, so a fail-closed guard refuses it (a name of
        # another type is msgspec's refusal).
        raise DecodeError("cursor", f"{key} without a tool name", "tool_name")
    # tool_input is a JSON string on the MCP events, an object elsewhere.
    return tool_call(p.tool_name, json_object(p.tool_input), p.tool_use_id,
                     mcp=key in MCP_EVENTS, server=p.mcp_server_name)  # fmt: skip


def _output(value: object) -> tuple[str | None, msgspec.Raw]:
    """A tool's output as text and as JSON: Cursor sends it JSON-encoded in a string."""
    if value is None or isinstance(value, str):
        found = json_object(value)
        return ev.head(value), msgspec.Raw(msgspec.json.encode(found or value))
    return ev.head(msgspec.json.encode(value).decode()), msgspec.Raw(msgspec.json.encode(value))


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    name = event_name("cursor", data, native)
    p = decoder(Payload).decode(data)
    key = own(name)
    kind = KIND_OF.get(key, "other")
    # Cursor says nothing of the agent a tool call runs in: a subagent's calls are not
    # told apart (a filter agents="main" must not take them for the main agent's).
    tools = kind in ("before-tool", "after-tool", "after-edit")
    common: dict[str, Any] = {
        "host": "cursor", "native": name, "session_id": p.conversation_id or p.session_id,
        "cwd": p.cwd or (p.workspace_roots[0] if p.workspace_roots else ""),
        "transcript_path": p.transcript_path, "model": p.model, "turn_id": p.generation_id,
        "agent": ev.UNKNOWN if tools else ev.MAIN, "raw": msgspec.Raw(data),
    }  # fmt: skip
    if kind == "session-start":
        return ev.SessionStart(**common)
    if kind == "session-end":
        return ev.SessionEnd(**common, reason=p.reason)
    if kind == "prompt-submit":
        return ev.PromptSubmit(**common, prompt=p.prompt)
    if kind == "before-tool":
        return ev.BeforeTool(**common, tool=_tool(key, p, data))
    if kind == "after-tool":
        text, response = _output(
            p.output if key == "afterShellExecution" else p.result_json or p.tool_output
        )
        failed = p.error_message or p.failure_type or "failed"
        return ev.AfterTool(**common, tool=_tool(key, p, data), output=text, response=response,
                            error=failed if key == "postToolUseFailure" else None,
                            duration_ms=p.duration)  # fmt: skip
    if kind == "after-edit":
        change = ev.FileChange(action="update", path=p.file_path or "")
        return ev.AfterEdit(**common, tool=_tool(key, p, data), changes=(change,))
    child = ev.Agent(role="subagent", id=p.subagent_id, type=p.subagent_type,
                     parent_id=p.parent_conversation_id)  # fmt: skip
    if kind == "subagent-start":
        return ev.SubagentStart(**common, child=child, call_id=p.tool_call_id,
                                child_model=p.subagent_model)  # fmt: skip
    if kind == "subagent-stop":
        return ev.SubagentStop(**common, child=child, final_text=ev.tail(p.summary),
                               child_transcript_path=p.agent_transcript_path, status=p.status,
                               stop_hook_active=p.loop_count > 0)  # fmt: skip
    if kind == "stop":
        # loop_count counts the follow-ups already sent: past 0, a hook keeps it going.
        return ev.Stop(**common, stop_hook_active=p.loop_count > 0)
    if kind == "pre-compact":
        return ev.PreCompact(**common, trigger=p.trigger)
    return ev.Other(**common)


# -- encode: what each event reads, one set per reply part -------------------------------

#: ``permission`` acts here.
DECIDES = {"preToolUse", "beforeShellExecution", "beforeMCPExecution", "beforeReadFile",
           "beforeTabFileRead", "subagentStart"}  # fmt: skip
#: ``ask`` is honoured only here (preToolUse accepts it unenforced; subagentStart reads
#: it as deny; the read events take allow or deny).
ASKS = {"beforeShellExecution", "beforeMCPExecution"}
AGENT_MESSAGE = {"preToolUse", "beforeShellExecution", "beforeMCPExecution", "subagentStart"}
USER_MESSAGE = {*AGENT_MESSAGE, "beforeReadFile", "beforeSubmitPrompt", "preCompact"}
CONTEXT = {"sessionStart", "postToolUse"}
FOLLOWUP = {"stop", "subagentStop"}


def encode(name: str, reply: Reply) -> Encoded:
    key = own(name)
    out: dict[str, Any] = {}
    drop = Drops("cursor", name)

    decision, reason = reply.decision, reply.reason.strip()
    decides = key in DECIDES or key == "beforeSubmitPrompt"
    if decision == "ask" and decides and key not in ASKS:
        drop("decision", "no ask here; denied instead")
        decision = "deny"
    if decision and key in DECIDES:
        out["permission"] = decision
    elif decision and key == "beforeSubmitPrompt":
        out["continue"] = decision == "allow"
    elif decision:
        drop("decision", f"{decision} has no effect on this event")
    refused = out.get("permission") in ("deny", "ask") or out.get("continue") is False
    told = reason or DENIED if refused else ""
    if key in USER_MESSAGE and (reply.message.strip() or told):
        out["user_message"] = reply.message.strip() or told
    elif reply.message:
        drop("message", "Cursor shows no hook message to the user here")
    if told and key in AGENT_MESSAGE:
        out["agent_message"] = told
    if reply.updated_input is not None:
        if key == "preToolUse" and out.get("permission") in (None, "allow"):
            # Cursor takes a new input as part of an allow (the docs' only example).
            out["permission"], out["updated_input"] = "allow", reply.updated_input
        else:
            drop("updated_input", "only preToolUse input can be rewritten, and not in a deny")
    if reply.keep_working is not None:
        if key in FOLLOWUP:
            out["followup_message"] = reply.keep_working.strip() or "Keep working."
        else:
            drop("keep_working", "only stop and subagentStop can keep working")
    if reply.context:
        if key in CONTEXT:
            out["additional_context"] = reply.context
        else:
            drop("context", "Cursor adds no context here")
    if reply.halt is not None:
        drop("halt", "no Cursor hook stops the agent")
    quiet = FACTS.no_opinion_for(key)
    if not out:
        return Encoded(output=quiet, dropped=drop.parts)
    # What the no-opinion says is owed whatever else is sent (subagentStart's allow,
    # beforeSubmitPrompt's continue), unless the reply says otherwise.
    out = {**decoder(dict[str, Any]).decode(quiet.stdout), **out}
    return Encoded(output=HookOutput(msgspec.json.encode(out) + b"\n"), dropped=drop.parts)


#: subagentStart shows the resolved subagent_model and answers allow or deny; the Task
#: tool takes no model, so a refusal never asks for a model argument.
SPAWN_RULES = (SpawnRules(correction="refuse", retry_model=False),)


def capabilities(native: str) -> Capabilities:
    key = own(native)
    return Capabilities(
        decide=key in DECIDES or key == "beforeSubmitPrompt",
        ask=key in ASKS,
        rewrite_input=key == "preToolUse",
        rewrite_grants_permission=key == "preToolUse",
        context=key in CONTEXT,
        user_message=key in USER_MESSAGE,
        keep_working=key in FOLLOWUP,
        spawn_rules=SPAWN_RULES,
        # A spawn is decided at subagentStart, which names the parent's model too (its
        # Task tool's preToolUse shows neither model).
        spawn_at_start=True,
        spawn_knows_parent=True,
    )


class CursorDriver(BaseDriver):
    name = "cursor"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    mcp_prefix = MCP_PREFIX
    samples = "hookbus.hosts.cursor.samples"
    opt_in = OPT_IN
    native_after_edit = True
    #: The MCP events carry MCP tools only (named bare, without the MCP: of matchers).
    event_tools: ClassVar[dict[str, tuple[str, ...]]] = {
        **{e: (t,) for e, t in EVENT_TOOL.items()},
        **dict.fromkeys(MCP_EVENTS, (MCP_PREFIX,)),
    }

    def natives(self, kind: str, named: tuple[str, ...] = ()) -> tuple[str, ...]:
        found = super().natives(kind, named)
        return found if named else tuple(n for n in found if n not in SPECIFIC)

    def mcp_tool_prefix(self, server: str) -> str:
        # An MCP tool's name (MCP:<tool>) does not say its server: every one is covered.
        return MCP_PREFIX

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)


driver = CursorDriver()
