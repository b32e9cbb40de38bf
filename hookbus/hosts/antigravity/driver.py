"""The Google Antigravity driver: the ``agy`` CLI (and desktop app) command hooks of
``.agents/hooks.json``.

Contract (no vendor package or schema exists; assembled from live hook captures of agy
1.3.1 and a probe of 1.2.17 in ``ajms/orchestrator``, the 1.1.20 binary's
``exa.hooks_pb`` descriptors in ``ChingFuHan/htsave`` ``docs/agy-contract.md``, the strict
result contract in ``nicsuzor/academicOps``, and the issues cited in
``docs/hosts/antigravity.md``; verified against the contract suite, not the program):

- stdin is one camelCase object that does **not** name its event: the manifest passes
  ``--event``. PreInvocation and PostInvocation have the same keys. Tool arguments are
  the model's own, in PascalCase (``CommandLine``, ``TargetFile``), plus two UI keys
  (``toolAction``, ``toolSummary``) on every tool.
- The hook runs with its cwd in the folder holding ``hooks.json`` (``.agents/``), so the
  project is ``workspacePaths[0]``.
- Every reply is parsed with strict protojson against the event's result message: an
  unknown field rejects the whole reply, and on PreInvocation aborts the turn (the CLI
  exits 1, synara#1143). So each event gets only the fields its message has.
- PreToolUse fails **closed**: ``{}``, empty output, a crash or a reply it cannot parse
  denies the tool (agentmemory#1146, uxnan#245, the orchestrator probe). Its no-opinion
  is ``{"decision": "ask"}`` (agy's own policy decides); every other event's is ``{}``.

There is no prompt-submit or session-start event. The first model call of a turn
(PreInvocation with ``invocationNum`` 0) is the only sign of a prompt, and of a new
conversation when nothing is in its trajectory yet (``initialNumSteps`` 0): that one is
a session-start, from which the turn's prompt-submit is derived. A subagent
(``invoke_subagent``) runs as a conversation of its own whose hooks fire with its own
``conversationId`` and no parent id, so no event tells a child from its parent: every
event's agent is ``unknown``.
"""

from typing import Any

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.errors import DecodeError
from hookbus.bus.host import Capabilities, Encoded
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import BLOCKED, DENIED, Reply
from hookbus.hosts.antigravity.facts import FACTS
from hookbus.hosts.shared.driver import BaseDriver, Drops, absolute, as_text, decoder

# -- native events ---------------------------------------------------------------------

#: In the order a turn fires them (orchestrator probe of 1.2.17). SessionStart, named by
#: the 1.1.20 binary, did not fire on 1.2.17 and is left out (docs/hosts/antigravity.md).
ALL_EVENTS = ("PreInvocation", "PreToolUse", "PostToolUse", "PostInvocation", "Stop")

KIND_OF: dict[str, str] = {
    "PreInvocation": "session-start",
    "PreToolUse": "before-tool",
    "PostToolUse": "after-tool",
    "Stop": "stop",
}
#: Events whose first invocation also stands for the prompt (see the module docstring).
PROMPT_EVENTS = ("PreInvocation",)


class ToolCallData(msgspec.Struct):
    name: str = ""
    args: dict[str, Any] = {}


class Native(msgspec.Struct, kw_only=True):
    """Every event's fields, defaulted (unknown keys ignored): the common ones, then
    the tool events', the invocations' and Stop's."""

    conversationId: str
    workspacePaths: list[str] = []
    transcriptPath: str | None = None
    artifactDirectoryPath: str | None = None
    modelName: str | None = None
    stepIdx: int | None = None
    #: Absent from one live subagent PostToolUse capture: optional.
    toolCall: ToolCallData | None = None
    error: str = ""
    invocationNum: int = 0
    initialNumSteps: int = 0
    executionNum: int | None = None
    terminationReason: str | None = None
    fullyIdle: bool = True
    #: Named by the 1.1.20 descriptors; absent from 1.3.1 captures.
    finalModelOutput: str | None = None


# -- tools -----------------------------------------------------------------------------

#: Tool names -> kinds: live captures (run_command, view_file, write_to_file,
#: invoke_subagent, send_message), transcripts and adapters (the rest; the edit names
#: past write_to_file are the orchestrator's guard list, kept so that a guard on edits
#: errs towards covering a tool).
TOOLS: dict[str, ev.ToolKind] = {
    **dict.fromkeys(("run_command", "send_command_input"), "shell"),
    **dict.fromkeys((
        "write_to_file", "replace_file_content", "multi_replace_file_content", "edit_file",
        "write_file", "create_file", "delete_file", "edit_notebook",
    ), "edit"),
    **dict.fromkeys(("view_file", "list_dir", "grep_search", "find_by_name",
                     "codebase_search"), "read"),
    **dict.fromkeys(("read_url_content", "search_web", "open_browser_url"), "web"),
    "invoke_subagent": "agent",
}  # fmt: skip
#: ``mcp_<server>_<tool>``, a ``-`` in a server name written ``_`` (orchestrator, reported).
MCP_PREFIX = "mcp_"
#: Where an edit or read tool names its file.
PATH_KEYS = ("TargetFile", "AbsolutePath", "FilePath", "File", "NotebookPath", "SearchPath")


def _spawns(value: object) -> tuple[ev.Spawn, ...]:
    """``invoke_subagent``'s ``Subagents``: ``[{Prompt, Role, TypeName, Model, Workspace}]``
    (live 1.3.1); ``Model`` is ``inherit`` or a tier (``flash_lite``, ``flash``, ``pro``)."""
    items = value if isinstance(value, list) else []
    return tuple(
        ev.Spawn(agent_type=as_text(s.get("TypeName")), prompt=as_text(s.get("Prompt")),
                 model=None if s.get("Model") == "inherit" else as_text(s.get("Model")),
                 description=as_text(s.get("Role")))
        for s in items if isinstance(s, dict)
    )  # fmt: skip


def tool_call(call: ToolCallData | None, step: int | None, cwd: str) -> ev.ToolCall:
    name, data = (call.name, call.args) if call is not None else ("", {})
    kind: ev.ToolKind = TOOLS.get(name, "other")
    server = None
    if name.startswith(MCP_PREFIX):
        kind, server = "mcp", name[len(MCP_PREFIX) :].partition("_")[0]
    paths: tuple[str, ...] = ()
    if kind in ("edit", "read"):
        paths = tuple(absolute(cwd, p) for k in PATH_KEYS if (p := as_text(data.get(k))))
    return ev.ToolCall(
        name=name, kind=kind, mcp_server=server, input=data,
        call_id=str(step) if step is not None else None,
        command=as_text(data.get("CommandLine")) if kind == "shell" else None,
        paths=paths, spawns=_spawns(data.get("Subagents")) if kind == "agent" else (),
    )  # fmt: skip


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    if not native:
        raise DecodeError("antigravity", "the payload names no event and no --event given")
    n = decoder(Native).decode(data)
    cwd = next(iter(n.workspacePaths), "")
    common: dict[str, Any] = {
        "host": "antigravity", "native": native, "session_id": n.conversationId, "cwd": cwd,
        "transcript_path": n.transcriptPath or None, "agent": ev.UNKNOWN,
        "model": n.modelName or None, "raw": msgspec.Raw(data),
    }  # fmt: skip
    kind = KIND_OF.get(native, "other")
    if kind == "session-start" and n.invocationNum == 0:
        if n.initialNumSteps == 0:
            return ev.SessionStart(**common, source="startup")
        return ev.PromptSubmit(**common)
    if kind == "before-tool":
        return ev.BeforeTool(**common, tool=tool_call(n.toolCall, n.stepIdx, cwd))
    if kind == "after-tool":
        tool = tool_call(n.toolCall, n.stepIdx, cwd)
        error = n.error or None
        changes = tuple(ev.FileChange(action="delete" if tool.name == "delete_file" else "update",
                                      path=p)
                        for p in tool.paths if tool.kind == "edit" and error is None)  # fmt: skip
        return ev.AfterTool(**common, tool=tool, error=error, changes=changes)
    if kind == "stop":
        return ev.Stop(**common, last_message=n.finalModelOutput or None)
    return ev.Other(**common)


# -- encode: the fields of each event's result message -----------------------------------

#: ``PreToolHookResult.decision``: ask is agy's own policy (the no-opinion), force_ask
#: always prompts, so a handler's ask is force_ask (uxnan#245, safe-chains on 1.1.2).
DECISION = {"allow": "allow", "deny": "deny", "ask": "force_ask"}
NO_OPINION_DECISION = "ask"
#: ``HookInjectedStep.ephemeralMessage`` (works live, antigravity-cli#728).
CONTEXT = {"PreInvocation"}
#: ``{"decision": "continue", "reason"}`` feeds the reason back and goes on (htsave;
#: agents-can-communicate#171). agy marks no stop as hook-driven (no stop_hook_active),
#: so the merge's loop guard never fires here: docs/hosts/antigravity.md.
STOPS = {"Stop"}
EMPTY = b"{}\n"


def _pre_tool(reply: Reply, out: dict[str, Any], drop: Drops) -> None:
    """PreToolUse always carries a decision: without one agy denies the tool."""
    decision, reason = reply.decision, reply.reason.strip()
    if reply.halt is not None:
        if decision != "deny":
            decision, reason = "deny", reply.halt.strip()
        drop("halt", "agy cannot stop the agent from a hook; the tool is denied instead")
    out["decision"] = DECISION[decision] if decision else NO_OPINION_DECISION
    if decision == "deny" or (decision and reason):
        out["reason"] = reason or DENIED
    if reply.updated_input is not None:
        # ``overwrite`` is in the 1.1.20 descriptor, its effect on current builds unknown.
        drop("updated_input", "agy's overwrite is unconfirmed; the input was not rewritten")


def encode(name: str, reply: Reply) -> Encoded:
    out: dict[str, Any] = {}
    drop = Drops("antigravity", name)

    if name == "PreToolUse":
        _pre_tool(reply, out, drop)
    else:
        if reply.decision:
            drop("decision", f"{reply.decision} has no effect on this event")
        if reply.updated_input is not None:
            drop("updated_input", "only a tool call's input could be rewritten")
        if reply.halt is not None:
            drop("halt", "agy cannot stop the agent from a hook")
    if reply.context:
        if name in CONTEXT:
            out["injectSteps"] = [{"ephemeralMessage": reply.context}]
        else:
            drop("context", "agy adds context only before a model call (PreInvocation)")
    if reply.keep_working is not None:
        if name in STOPS and reply.halt is None:
            out["decision"], out["reason"] = "continue", reply.keep_working.strip() or BLOCKED
        else:
            drop("keep_working", "only Stop can keep the agent working, and not in a halt")
    if reply.message:
        drop("message", "agy shows hook output to nobody")
    stdout = msgspec.json.encode(out) + b"\n" if out else EMPTY
    return Encoded(output=HookOutput(stdout=stdout), dropped=drop.parts)


def capabilities(native: str) -> Capabilities:
    return Capabilities(
        decide=native == "PreToolUse",
        ask=native == "PreToolUse",
        context=native in CONTEXT,
        keep_working=native in STOPS,
    )


class AntigravityDriver(BaseDriver):
    name = "antigravity"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    mcp_prefix = MCP_PREFIX
    samples = "hookbus.hosts.antigravity.samples"
    after_edit_from = ("PostToolUse",)
    #: Fires after every model call: a hook process each, to opt into (``natives=``).
    opt_in = ("PostInvocation",)

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)

    def natives(self, kind: str, named: tuple[str, ...] = ()) -> tuple[str, ...]:
        # A prompt is seen only as the first PreInvocation of a turn.
        if kind == "prompt-submit":
            return tuple(n for n in PROMPT_EVENTS if not named or n in named)
        return super().natives(kind, named)

    def derive(self, event: ev.Event) -> tuple[ev.Event, ...]:
        # A new conversation's first model call is its first prompt too.
        if isinstance(event, ev.SessionStart):
            common = {f: getattr(event, f) for f in ev.Event.__struct_fields__}
            return (ev.PromptSubmit(**common),)
        return super().derive(event)

    def mcp_tool_prefix(self, server: str) -> str:
        return f"{MCP_PREFIX}{server.replace('-', '_')}_"


driver = AntigravityDriver()
