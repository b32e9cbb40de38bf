"""The Cline driver: Cline CLI 3.0.65 (``@cline/sdk`` 0.0.86) and the legacy hooks of the
Cline VS Code extension, which run the same files.

Contract (``cline/cline`` ``sdk/packages/core/src/hooks/subprocess.ts``; real 3.0.65 runs
offline, ``tests/golden/cline/real``): Cline runs an executable named after the event
(``.clinerules/hooks/PreToolUse``) with one JSON object on stdin. The file name is the
native event; the payload's ``hookName`` is a wire name (``tool_call``) in the CLI and the
file name itself in the legacy extension, so the manifest's command passes ``--event``.
Only the tool events read a reply: stdout ``{cancel, context, errorMessage,
overrideInput}``, the exit code is not looked at, and anything unparsable is skipped
(fail-open). The lifecycle hooks run detached: nothing they print is read.

There is no per-tool deny. ``cancel: true`` stops the tool **and the whole task**, so a
deny (and an ask, which Cline has no prompt for) becomes a cancel, reported as dropped.

The legacy extension (``src/core/hooks/hook-factory.ts``) sends ``hookName`` = the event,
an epoch-ms *string* ``timestamp``, ``model: {provider, slug}``, and one camelCase data key
(``preToolUse: {toolName, parameters}``, parameters all strings). It is the same host,
the same files and the same reply, so one decoder takes both shapes rather than a dialect.
"""

import contextlib
from typing import Any

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.errors import DecodeError
from hookbus.bus.host import Capabilities, Encoded
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import DENIED, Reply
from hookbus.hosts.cline.facts import FACTS
from hookbus.hosts.shared.driver import BaseDriver, Drops, absolute, as_text, iso_seconds

# -- native events: the hook file names, in the order the CLI documents them -------------

ALL_EVENTS = (
    "TaskStart", "TaskResume", "UserPromptSubmit", "PreToolUse", "PostToolUse",
    "TaskComplete", "TaskError", "TaskCancel", "SessionShutdown", "PreCompact",
    "Notification",
)  # fmt: skip

KIND_OF: dict[str, str] = {
    "TaskStart": "session-start",
    "TaskResume": "session-start",
    "UserPromptSubmit": "prompt-submit",
    "PreToolUse": "before-tool",
    "PostToolUse": "after-tool",
    "TaskComplete": "stop",
    "SessionShutdown": "session-end",
    "PreCompact": "pre-compact",
}

#: A subagent runs the same files as its parent: its own TaskStart and TaskComplete (with
#: ``parent_agent_id`` set; real 3.0.65 ``spawn_agent`` runs) are its start and its stop.
SUBAGENT_NATIVES: dict[str, str] = {"subagent-start": "TaskStart", "subagent-stop": "TaskComplete"}

#: The CLI's wire ``hookName`` -> the file (native event) it runs.
WIRE: dict[str, str] = {
    "agent_start": "TaskStart", "agent_resume": "TaskResume",
    "prompt_submit": "UserPromptSubmit", "tool_call": "PreToolUse",
    "tool_result": "PostToolUse", "agent_end": "TaskComplete", "agent_error": "TaskError",
    "agent_abort": "TaskCancel", "session_shutdown": "SessionShutdown",
    "pre_compact": "PreCompact",
}  # fmt: skip


class Model(msgspec.Struct):
    provider: str | None = None
    slug: str | None = None


class WorkspaceInfo(msgspec.Struct):
    rootPath: str | None = None


class RuntimeTool(msgspec.Struct):
    """The CLI's ``tool_call`` / ``tool_result`` record: the real, typed input."""

    id: str | None = None
    name: str | None = None
    input: Any = None
    output: Any = None
    error: Any = None
    durationMs: float | None = None


class LegacyTool(msgspec.Struct):
    """``preToolUse`` / ``postToolUse``: parameters as strings (JSON-encoded if not)."""

    toolName: str = ""
    parameters: dict[str, Any] = {}
    result: str | None = None
    success: bool = True
    executionTimeMs: float | None = None


class Turn(msgspec.Struct):
    outputText: str | None = None
    status: str | None = None


class SessionContext(msgspec.Struct):
    rootSessionId: str | None = None


class Native(msgspec.Struct, kw_only=True):
    """Every field of both shapes, defaulted; unknown keys are ignored."""

    hookName: str | None = None
    timestamp: str | None = None
    taskId: str = ""
    sessionContext: SessionContext | None = None
    workspaceRoots: list[str] = []
    workspaceInfo: WorkspaceInfo | None = None
    model: Model | None = None
    agent_id: str | None = None
    parent_agent_id: str | None = None
    tool_call: RuntimeTool | None = None
    tool_result: RuntimeTool | None = None
    preToolUse: LegacyTool | None = None
    postToolUse: LegacyTool | None = None
    userPromptSubmit: dict[str, Any] = {}
    turn: Turn | None = None
    reason: str | None = None
    preCompact: dict[str, Any] = {}


_DECODER = msgspec.json.Decoder(Native)
_ANY = msgspec.json.Decoder()

# -- tools -----------------------------------------------------------------------------

TOOLS: dict[str, ev.ToolKind] = {
    # CLI 3.x (DefaultToolNames)
    "run_commands": "shell", "read_files": "read", "search_codebase": "read",
    "editor": "edit", "apply_patch": "edit", "fetch_web_content": "web",
    "spawn_agent": "agent",
    # VS Code extension (ClineDefaultTool)
    "execute_command": "shell", "read_file": "read", "list_files": "read",
    "search_files": "read", "list_code_definition_names": "read",
    "write_to_file": "edit", "replace_in_file": "edit", "web_fetch": "web",
    "web_search": "web", "use_mcp_tool": "mcp", "access_mcp_resource": "mcp",
    "new_task": "agent", "use_subagents": "agent",
}  # fmt: skip


def _commands(value: object) -> str | None:
    """``run_commands``' ``commands``: strings or ``{command, args}`` items, one a line."""
    if isinstance(value, str):  # the legacy string map JSON-encodes the list
        with contextlib.suppress(msgspec.DecodeError, RecursionError):
            value = _ANY.decode(value)
        if isinstance(value, str):
            return value
    if not isinstance(value, list):
        return None
    lines = []
    for item in value:
        line = str(item)
        if isinstance(item, dict):
            args = item.get("args")
            words = [item.get("command"), *(args if isinstance(args, list) else ())]
            line = " ".join(str(w) for w in words if w is not None)
        lines.append(line)
    return "\n".join(lines)


def tool_call(name: str, data: dict[str, Any], call_id: str | None, cwd: str) -> ev.ToolCall:
    kind: ev.ToolKind = TOOLS.get(name, "other")
    command = None
    if kind == "shell":
        command = _commands(data.get("commands", data.get("command", data.get("cmd"))))
    paths: tuple[str, ...] = ()
    if kind in ("edit", "read"):
        found = data.get("path") or data.get("files") or data.get("file_paths") or data.get("paths")
        items = found if isinstance(found, list) else [found]
        paths = tuple(absolute(cwd, p) for p in items if isinstance(p, str) and p)
    spawns: tuple[ev.Spawn, ...] = ()
    if kind == "agent":
        spawns = (ev.Spawn(prompt=as_text(data.get("task")) or as_text(data.get("context")),
                           description=as_text(data.get("systemPrompt"))),)  # fmt: skip
    server = as_text(data.get("server_name")) if kind == "mcp" else None
    return ev.ToolCall(name=name, kind=kind, mcp_server=server, input=data, call_id=call_id,
                       command=command, paths=paths, spawns=spawns)  # fmt: skip


def _timestamp(value: str | None) -> float | None:
    if not value:
        return None
    if value.isascii() and value.isdigit():  # the legacy extension: Date.now().toString()
        try:
            return int(value) / 1000
        except (ValueError, OverflowError):  # past int()'s digit limit, or a float's range
            return None
    return iso_seconds(value.replace("Z", "+00:00"))


def _tool(n: Native, cwd: str) -> tuple[ev.ToolCall, RuntimeTool | None, LegacyTool | None]:
    runtime = n.tool_call or n.tool_result
    legacy = n.preToolUse or n.postToolUse
    if runtime is not None and runtime.name:
        data = runtime.input if isinstance(runtime.input, dict) else {}
        return tool_call(runtime.name, data, runtime.id, cwd), runtime, legacy
    if legacy is None:
        raise DecodeError("cline", "a tool event without tool_call/preToolUse")
    if not legacy.toolName:
        # No tool named: a call no tool filter can match, which a shell guard would let
        # pass as "other"; unreadable instead, so a fail-closed guard refuses it (as the
        # other drivers read a tool event naming no tool).
        raise DecodeError("cline", "a tool event without a tool name")
    return tool_call(legacy.toolName, dict(legacy.parameters), None, cwd), None, legacy


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    n = _DECODER.decode(data)
    name = native or WIRE.get(n.hookName or "", n.hookName or "")
    if not name:
        raise DecodeError("cline", "no hookName and no --event given")
    cwd = (n.workspaceInfo and n.workspaceInfo.rootPath) or next(iter(n.workspaceRoots), "")
    agent = ev.MAIN
    if n.parent_agent_id:
        agent = ev.Agent(role="subagent", id=n.agent_id, parent_id=n.parent_agent_id)
    model = n.model.slug if n.model else None
    # The root session spans the task and its subagents; the legacy extension has only
    # the task.
    session = (n.sessionContext and n.sessionContext.rootSessionId) or n.taskId
    common: dict[str, Any] = {
        "host": "cline", "native": name, "session_id": session, "cwd": cwd, "agent": agent,
        "model": model, "timestamp": _timestamp(n.timestamp), "raw": msgspec.Raw(data),
    }  # fmt: skip
    kind = KIND_OF.get(name, "other")
    if n.parent_agent_id and name in ("TaskStart", "TaskComplete"):
        # The child's own hook. Cline says who spawned it, not whether that agent is the
        # main one (it may be a subagent itself), so the parent is of an unknown role.
        common["agent"] = ev.Agent(role="unknown", id=n.parent_agent_id)
        if name == "TaskStart":
            return ev.SubagentStart(**common, child=agent)
        last = n.turn.outputText if n.turn else None
        return ev.SubagentStop(**common, child=agent, final_text=ev.tail(last),
                               status=n.turn.status if n.turn else None)  # fmt: skip
    if kind == "session-start":
        return ev.SessionStart(**common, source="resume" if name == "TaskResume" else "startup")
    if kind == "prompt-submit":
        return ev.PromptSubmit(**common, prompt=as_text(n.userPromptSubmit.get("prompt")) or "")
    if kind == "before-tool":
        return ev.BeforeTool(**common, tool=_tool(n, cwd)[0])
    if kind == "after-tool":
        tool, runtime, legacy = _tool(n, cwd)
        output = legacy.result if legacy else None
        response = msgspec.json.encode(runtime.output) if runtime else None
        if response is None:
            response = msgspec.json.encode(output)
        error = None
        if runtime is not None and runtime.error is not None:
            error = as_text(runtime.error) or msgspec.json.encode(runtime.error).decode()
        elif legacy is not None and not legacy.success:
            error = output or "failed"
        duration = runtime.durationMs if runtime else None
        if duration is None and legacy is not None:
            duration = legacy.executionTimeMs
        changes = tuple(ev.FileChange(action="update", path=p) for p in tool.paths
                        if tool.kind == "edit" and error is None)  # fmt: skip
        return ev.AfterTool(**common, tool=tool, response=msgspec.Raw(response),
                            output=ev.head(output), error=error, duration_ms=duration,
                            changes=changes)  # fmt: skip
    if kind == "stop":
        return ev.Stop(**common, last_message=n.turn.outputText if n.turn else None)
    if kind == "pre-compact":
        strategy = as_text(n.preCompact.get("compactionStrategy"))
        return ev.PreCompact(**common, trigger="manual" if strategy == "manual" else "auto")
    if kind == "session-end":
        return ev.SessionEnd(**common, reason=n.reason or "other")
    return ev.Other(**common)


# -- encode ----------------------------------------------------------------------------

#: The only events whose stdout Cline reads (the rest run detached).
TOOL_EVENTS = {"PreToolUse", "PostToolUse"}
TASK_WIDE = "Cline cannot refuse one tool: cancel stops the tool and the whole task"


def encode(name: str, reply: Reply) -> Encoded:
    out: dict[str, Any] = {}
    drop = Drops("cline", name)

    if name not in TOOL_EVENTS:
        for field in ("decision", "updated_input", "context", "message", "keep_working",
                      "halt"):  # fmt: skip
            if getattr(reply, field):
                drop(field, "Cline runs this hook detached and reads nothing it prints")
        return Encoded(output=HookOutput(), dropped=drop.parts)
    reason = reply.reason.strip() or DENIED
    context = [reply.context] if reply.context else []
    if reply.decision in ("deny", "ask") and name == "PreToolUse":
        out["cancel"], out["errorMessage"] = True, reason
        drop("decision", f"{reply.decision} became cancel. {TASK_WIDE}")
    elif reply.decision == "deny":  # after the tool ran: tell the model why instead
        context.insert(0, reason)
        drop("decision", "a result cannot be refused; the reason was added as context")
    elif reply.decision:
        drop("decision", f"{reply.decision} has no effect: Cline hooks cannot grant or ask")
    if reply.halt is not None and "cancel" not in out:
        out["cancel"], out["errorMessage"] = True, reply.halt.strip() or DENIED
    if reply.updated_input is not None:
        if name == "PreToolUse" and "cancel" not in out:
            out["overrideInput"] = reply.updated_input
        else:
            drop("updated_input", "only PreToolUse input can be rewritten, and not in a cancel")
    if context:
        out["context"] = "\n\n".join(context)
    if reply.message:
        drop("message", "Cline shows hook output to no one")
    if reply.keep_working is not None:
        drop("keep_working", "Cline hooks cannot keep the agent working")
    stdout = msgspec.json.encode(out) + b"\n" if out else b""
    return Encoded(output=HookOutput(stdout=stdout), dropped=drop.parts)


def capabilities(native: str) -> Capabilities:
    tool = native in TOOL_EVENTS
    return Capabilities(
        decide=native == "PreToolUse",
        rewrite_input=native == "PreToolUse",
        context=tool,
        halt=tool,
    )


class ClineDriver(BaseDriver):
    name = "cline"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    samples = "hookbus.hosts.cline.samples"
    after_edit_from = ("PostToolUse",)
    subagent_natives = SUBAGENT_NATIVES

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)


driver = ClineDriver()
