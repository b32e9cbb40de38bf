"""OpenCode's plugin API, as the driver of OpenCode and of Kilo CLI, its descendant: plugin
API v1 (``@opencode-ai/plugin`` 1.18.33, runtime ``opencode-ai`` 1.18.33) and the v2
contract. Kilo CLI 7.7.7 keeps API v1 unchanged (the same hooks, inputs, outputs and tool
names in real runs, ``tests/golden/kilo``) and runs the same shim, so each host's driver
(:mod:`hookbus.hosts.opencode.driver`, :mod:`hookbus.hosts.kilo.driver`) is
:class:`OpenCodeApiDriver` with its own name, facts and samples.

OpenCode has no command hooks: plugins run in its own process. hookbus's plugin, the shim
``hookbus/hosts/shared/opencode.js`` that ``hookbus install --host opencode`` writes, hands each
wanted hook to ``hookbus run --host opencode --event NATIVE`` as ONE JSON object on stdin,
and applies the ONE JSON object hookbus prints. Both shapes are ours (the shim and hookbus
are installed together):

stdin::

    {"hook": NATIVE, "api": 1, "directory": ctx.directory,
     "input": <the hook's input>, "output": <the hook's output, where it has one>,
     "parentID": <the parent session, when the shim saw this session created as a child>,
     "agent": <that child's agent name>}

NATIVE is the hook's key (``tool.execute.before``, ``tool.execute.after``,
``chat.message``, ``experimental.session.compacting``) or, for the ``event`` hook, the
bus event's type (``session.created``, ``session.idle``, ``session.compacted``,
``file.edited``; ``input`` is then ``{"event": {type, properties}}``). With ``"api": 2``
(OpenCode 2.0's ``ctx.tool.hook("execute.before" | "execute.after")``, from the contract:
no v2 runtime is published) the tool hooks' ``input`` is the v2 event object, whose own
``input`` holds the arguments, and tools are renamed (``shell``, ``subagent``).

stdout: ``{}`` is the no-opinion (change nothing). Otherwise any of:

- ``"block": REASON``: the shim throws ``new Error(REASON)``: OpenCode fails the tool call
  and the model reads the message (``tool.execute.before`` only);
- ``"args": {...}``: the call's whole new input; the shim edits ``output.args`` IN PLACE
  (a new object assigned to ``output.args`` has no effect in v1);
- ``"context": TEXT``: after a tool, appended to ``output.output`` (what the model reads);
  before a compaction, pushed onto ``output.context``.

Identity: OpenCode's tool hooks carry the session but not whether it is a subagent's; a
``task`` child's ``session.created`` carries ``info.parentID`` (real 1.18.33 runs), which
the shim remembers and adds as ``parentID`` to the child's later hooks.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.errors import DecodeError
from hookbus.bus.host import Capabilities, Encoded, SpawnRules
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import DENIED, Reply
from hookbus.hosts.shared.driver import BaseDriver, Drops, absolute, as_text, decoder

# -- native events -------------------------------------------------------------------------

#: The hooks and bus events the shim can forward, in the order a session meets them.
ALL_EVENTS = (
    "session.created", "chat.message", "tool.execute.before", "tool.execute.after",
    "file.edited", "experimental.session.compacting", "session.compacted", "session.idle",
)  # fmt: skip
#: The natives the shim receives through the ``event`` hook (the rest are hook keys).
BUS_EVENTS = ("session.created", "file.edited", "session.compacted", "session.idle")

KIND_OF: dict[str, str] = {
    "session.created": "session-start",
    "chat.message": "prompt-submit",
    "tool.execute.before": "before-tool",
    "tool.execute.after": "after-tool",
    "file.edited": "after-edit",
    "experimental.session.compacting": "pre-compact",
    "session.idle": "stop",
}

#: A child session's own created and idle events are its start and its stop.
SUBAGENT_NATIVES: dict[str, str] = {
    "subagent-start": "session.created",
    "subagent-stop": "session.idle",
}

#: v1 built-in tools (the plugin package's tool registry, 1.18.33) and v2's renames.
TOOLS: dict[str, ev.ToolKind] = {
    "bash": "shell", "read": "read", "glob": "read", "grep": "read", "list": "read",
    "write": "edit", "edit": "edit", "apply_patch": "edit", "multiedit": "edit",
    "patch": "edit", "webfetch": "web", "websearch": "web", "codesearch": "web",
    "task": "agent",
    # v2 (OpenCode 2.0's contract): bash is shell, task is subagent.
    "shell": "shell", "subagent": "agent",
}  # fmt: skip

# -- the shim's payload ----------------------------------------------------------------------


class ModelRef(msgspec.Struct):
    providerID: str | None = None
    modelID: str | None = None


class SessionInfo(msgspec.Struct):
    id: str = ""
    parentID: str | None = None
    agent: str | None = None
    directory: str | None = None
    title: str | None = None


class Properties(msgspec.Struct):
    sessionID: str | None = None
    info: SessionInfo | None = None
    file: str | None = None


class BusEvent(msgspec.Struct):
    type: str = ""
    properties: Properties = msgspec.field(default_factory=Properties)


class Input(msgspec.Struct, kw_only=True):
    """Every hook's input, both APIs: unknown keys are ignored."""

    tool: str | None = None
    sessionID: str = ""
    callID: str | None = None
    toolCallID: str | None = None  # v2, some beta commits
    agent: str | None = None
    model: ModelRef | None = None
    args: dict[str, Any] | None = None  # v1 after
    input: dict[str, Any] | None = None  # v2: the call's arguments
    result: Any = None  # v2 after: {type: json|text|error|content, value}
    event: BusEvent | None = None


class Part(msgspec.Struct):
    type: str = ""
    text: str | None = None
    synthetic: bool = False


class Message(msgspec.Struct):
    """``chat.message``'s user message: its ``model`` is the one the turn runs on."""

    model: ModelRef | None = None


class Output(msgspec.Struct, kw_only=True):
    args: dict[str, Any] | None = None
    message: Message | None = None
    title: str | None = None
    output: Any = None
    metadata: dict[str, Any] = {}
    parts: list[Part] = []
    context: list[Any] = []


class Native(msgspec.Struct, kw_only=True):
    hook: str
    api: int = 1
    directory: str = ""
    input: Input = msgspec.field(default_factory=Input)
    output: Output | None = None
    parentID: str | None = None
    agent: str | None = None


# -- tools ---------------------------------------------------------------------------------

#: apply_patch's file headers (``*** Update File: src/a.py``).
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)


def tool_call(name: str, data: dict[str, Any], call_id: str | None, cwd: str) -> ev.ToolCall:
    kind: ev.ToolKind = TOOLS.get(name, "other")
    command = as_text(data.get("command")) if kind == "shell" else None
    paths: tuple[str, ...] = ()
    if kind in ("edit", "read"):
        found = [as_text(data.get("filePath")) or as_text(data.get("path"))]
        patch = as_text(data.get("patchText"))
        if patch:
            found = [m.strip() for m in _PATCH_FILE.findall(patch)]
        paths = tuple(absolute(cwd, p) for p in found if p)
    spawns: tuple[ev.Spawn, ...] = ()
    if kind == "agent":
        agent = as_text(data.get("subagent_type")) or as_text(data.get("agent"))
        # v1's task takes no model (the agent's definition names it); v2's subagent does.
        model = as_text(data.get("model")) if name == "subagent" else None
        spawns = (ev.Spawn(agent_type=agent, model=model, prompt=as_text(data.get("prompt")),
                           description=as_text(data.get("description"))),)  # fmt: skip
    return ev.ToolCall(name=name, kind=kind, input=data, call_id=call_id, command=command,
                       paths=paths, spawns=spawns)  # fmt: skip


def _text(value: Any) -> str | None:
    """A tool output or a v2 result as text (v2 results are ``{type, value}``)."""
    if isinstance(value, dict) and "value" in value:
        value = value["value"]
    if value is None or isinstance(value, str):
        return value
    return msgspec.json.encode(value).decode()


# -- decode --------------------------------------------------------------------------------


def decode(host: str, data: bytes, native: str | None) -> ev.Event:
    n = decoder(Native).decode(data)
    name = n.hook or native or ""
    if not name:
        raise DecodeError(host, "no hook and no --event given")
    bus = n.input.event
    props = bus.properties if bus is not None else Properties()
    info = props.info
    session = n.input.sessionID or props.sessionID or (info.id if info else "")
    cwd = n.directory or (info.directory if info and info.directory else "")
    parent = n.parentID or (info.parentID if info and name == "session.created" else None)
    child = ev.Agent(role="subagent", id=session, type=n.agent or (info.agent if info else None),
                     parent_id=parent)  # fmt: skip
    model = n.input.model.modelID if n.input.model else None
    if model is None and n.output is not None and n.output.message and n.output.message.model:
        # ``opencode run`` without --model (1.18.33, session/prompt.ts) passes chat.message
        # an input of the session id alone; the model is on the message it created.
        model = n.output.message.model.modelID
    common: dict[str, Any] = {
        "host": host, "native": name, "session_id": session, "cwd": cwd,
        "agent": child if parent else ev.MAIN, "model": model, "raw": msgspec.Raw(data),
    }  # fmt: skip
    if parent and name in ("session.created", "session.idle"):
        # The child's own event, seen from its parent's session (which may itself be a
        # child: OpenCode says who spawned it, not that agent's role).
        common.update(session_id=parent, agent=ev.Agent(role="unknown", id=parent))
        if name == "session.created":
            return ev.SubagentStart(**common, child=child)
        return ev.SubagentStop(**common, child=child)
    kind = KIND_OF.get(name, "other")
    if kind == "session-start":
        return ev.SessionStart(**common, source="startup")
    if kind == "prompt-submit":
        parts = n.output.parts if n.output else []
        text = "\n".join(p.text for p in parts if p.type == "text" and p.text and not p.synthetic)
        return ev.PromptSubmit(**common, prompt=text)
    if kind in ("before-tool", "after-tool"):
        return _tool_event(host, n, common, cwd)
    if kind == "after-edit":
        path = absolute(cwd, props.file) if props.file else None
        changes = (ev.FileChange(action="update", path=path),) if path else ()
        return ev.AfterEdit(**common, changes=changes)
    if kind == "pre-compact":
        return ev.PreCompact(**common, trigger="auto")
    if kind == "stop":
        return ev.Stop(**common)
    return ev.Other(**common)


def _tool_event(host: str, n: Native, common: dict[str, Any], cwd: str) -> ev.Event:
    i = n.input
    if not i.tool:
        raise DecodeError(host, f"{n.hook} without input.tool")
    if n.api >= 2:
        data = i.input or {}
    else:
        data = (n.output.args if n.output and n.hook == "tool.execute.before" else i.args) or {}
    tool = tool_call(i.tool, data, i.callID or i.toolCallID, cwd)
    if n.hook == "tool.execute.before":
        return ev.BeforeTool(**common, tool=tool)
    out = n.output or Output()
    error = None
    if n.api >= 2:
        result = i.result if isinstance(i.result, dict) else {}
        output = _text(result)
        if result.get("type") == "error":
            error = output or "failed"
        response = msgspec.json.encode(i.result)
    else:
        output = _text(out.output)
        response = msgspec.json.encode({"title": out.title, "output": out.output,
                                        "metadata": out.metadata})  # fmt: skip
    # task's metadata names the child session it ran (real 1.18.33 runs).
    child = as_text(out.metadata.get("sessionId")) if tool.kind == "agent" else None
    changes = tuple(ev.FileChange(action="update", path=p) for p in tool.paths
                    if tool.kind == "edit" and error is None)  # fmt: skip
    return ev.AfterTool(**common, tool=tool, response=msgspec.Raw(response),
                        output=ev.head(output), error=error, changes=changes,
                        child_ids=(child,) if child else ())  # fmt: skip


# -- encode --------------------------------------------------------------------------------


def encode(host: str, name: str, reply: Reply) -> Encoded:
    out: dict[str, Any] = {}
    drop = Drops(host, name)
    reason = reply.reason.strip() or DENIED
    context = [reply.context] if reply.context else []
    before = name == "tool.execute.before"
    if reply.decision in ("deny", "ask") and before:
        out["block"] = reason
        if reply.decision == "ask":
            drop("decision", "a plugin cannot ask the user: ask became a block")
    elif reply.decision == "deny" and name == "tool.execute.after":
        context.insert(0, reason)
        drop("decision", "a result cannot be refused; the reason was added to what the model reads")
    elif reply.decision and reply.decision != "allow":
        drop("decision", "only tool.execute.before can refuse")
    if reply.halt is not None:
        if before and "block" not in out:
            out["block"] = reply.halt.strip() or DENIED
            drop("halt", "a plugin cannot stop the agent: the call was blocked instead")
        else:
            drop("halt", "a plugin cannot stop the agent")
    if reply.updated_input is not None:
        if before and "block" not in out:
            out["args"] = reply.updated_input
        else:
            drop("updated_input", "only tool.execute.before input can be rewritten, not in a block")
    if context:
        if name in ("tool.execute.after", "experimental.session.compacting"):
            out["context"] = "\n\n".join(context)
        else:
            drop("context", "this hook has nowhere to add context")
    if reply.message:
        drop("message", "a plugin hook has no message channel to the user")
    if reply.keep_working is not None:
        drop("keep_working", "a plugin cannot keep the agent working")
    return Encoded(output=HookOutput(msgspec.json.encode(out) + b"\n"), dropped=drop.parts)


#: OpenCode 1's task tool takes no model: a child is moved onto the parent by running it
#: as the parent profile (args are edited in place). OpenCode 2's subagent tool takes a
#: model: an over-ceiling child is moved onto the parent's exact model, nothing refused.
SPAWN_RULES = (
    SpawnRules(correction="switch", tool="task"),
    SpawnRules(correction="rewrite", tool="subagent"),
)


def capabilities(native: str) -> Capabilities:
    return Capabilities(
        decide=native == "tool.execute.before",
        rewrite_input=native == "tool.execute.before",
        context=native in ("tool.execute.after", "experimental.session.compacting"),
        spawn_rules=SPAWN_RULES,
        # session.created names no model; chat.message does.
        model_on_prompt=True,
        subtask_command=True,
    )


class OpenCodeApiDriver(BaseDriver):
    """The driver of a host of OpenCode's plugin API; a host's own names it (``name``),
    binds its facts and its samples."""

    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    # file.edited (real 1.18.33 runs: after each write and edit, before the tool's after
    # hook) names the file alone, no session and no tool: after-edit is derived from the
    # tool's after hook, which has both, and file.edited is registered only when a
    # handler names it.
    after_edit_from = ("tool.execute.after",)
    subagent_natives = SUBAGENT_NATIVES

    def natives(self, kind: str, named: tuple[str, ...] = ()) -> tuple[str, ...]:
        found = super().natives(kind, named)
        if kind == "after-edit" and "file.edited" in named:
            found = (*found, "file.edited")
        return found

    def decode_payload(self, data: bytes, native: str | None) -> ev.Event:
        return decode(self.name, data, native)

    def encode(self, native: str, reply: Reply, /) -> Encoded:
        return encode(self.name, native, reply)

    capabilities = staticmethod(capabilities)
