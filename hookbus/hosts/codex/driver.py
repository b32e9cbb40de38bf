"""OpenAI Codex CLI: command hooks configured in ``hooks.json``.

Contract (the 23 JSON Schemas embedded in the ``@openai/codex@0.171.0`` binary, vendored
in ``tests/codex_schemas``; ``codex-rs/hooks/src/engine/output_parser.rs``; real runs of
0.171.0 offline): stdin is one JSON object named by ``hook_event_name`` (12 events), in
Claude's shape plus ``turn_id`` and ``model``. Exit 0 with empty stdout is "no opinion"
for every event; stdout JSON is checked against the event's output schema, which rejects
unknown keys (the whole reply is then dropped: fail-open), so each event gets exactly its
own shape. Codex refuses a bare ``permissionDecision: "allow"`` or ``"ask"``, and a deny
without a non-empty reason; the only rewrite is allow + ``updatedInput``, which grants
the call too. Hooks run under ``$SHELL -lc``: nothing may print before the JSON.
"""

import contextlib
from typing import Any

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.host import Capabilities, Encoded, SpawnRules
from hookbus.bus.replies import DENIED, Reply
from hookbus.hosts.codex.facts import FACTS
from hookbus.hosts.shared import claude_style as cs
from hookbus.hosts.shared.driver import BaseDriver, Drops, as_text, decoder, event_name
from hookbus.hosts.shared.patches import patch_changes

# -- native events ---------------------------------------------------------------------

ALL_EVENTS = (
    "SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse",
    "PreCompact", "PostCompact", "SubagentStart", "SubagentStop", "Stop", "Interrupt",
    "SessionEnd",
)  # fmt: skip

#: Claude's (Codex has no PostToolUseFailure).
KIND_OF: dict[str, str] = dict(cs.KIND_OF)


class Native(cs.Native, kw_only=True):
    """The fields of every Codex hook input: Claude's plus ``turn_id``, and each event's
    own ones, defaulted; unknown keys are ignored. ``agent_id`` and ``agent_type`` name
    the child on Subagent*, and appear on a turn's other events only inside a
    thread-spawned subagent."""

    turn_id: str | None = None
    source: str = "startup"
    prompt: str = ""
    trigger: str = "auto"
    stop_hook_active: bool = False
    last_assistant_message: str | None = None
    agent_transcript_path: str | None = None
    reason: str = "other"  # SessionEnd's is a constant in 0.171.0


class ToolInput(Native, kw_only=True):
    tool_name: str
    tool_input: Any = None  # "any JSON" in the schemas
    tool_use_id: str | None = None  # PermissionRequest has none
    tool_response: msgspec.Raw = msgspec.Raw(b"null")


TOOL_EVENTS = ("PreToolUse", "PermissionRequest", "PostToolUse")
_ANY = msgspec.json.Decoder()


# -- tools -----------------------------------------------------------------------------

#: Hook tool names (0.171.0): the shell is reported as ``Bash`` whichever tool ran it;
#: a namespaced tool's name is its namespace glued to it (``collaborationspawn_agent``).
TOOLS: dict[str, ev.ToolKind] = {
    **dict.fromkeys(("Bash", "exec_command", "shell", "shell_command", "local_shell"), "shell"),
    "apply_patch": "edit",
    **dict.fromkeys(("spawn_agent", "collaborationspawn_agent"), "agent"),
    **dict.fromkeys(("view_image", "list_mcp_resources", "read_mcp_resource"), "read"),
}


def tool_call(n: ToolInput) -> ev.ToolCall:
    name = n.tool_name
    data: dict[str, Any] = n.tool_input if isinstance(n.tool_input, dict) else {}
    kind: ev.ToolKind = TOOLS.get(name, "other")
    server = None
    if name.startswith("mcp__"):
        kind, server = "mcp", name.split("__")[1]
    command = as_text(data.get("command")) if kind in ("shell", "edit") else None
    changes = patch_changes(command or "", n.cwd) if kind == "edit" else ()
    paths = tuple(p for c in changes for p in (c.path, c.from_path) if p)
    spawns: tuple[ev.Spawn, ...] = ()
    if kind == "agent":  # v1: message, agent_type, model; v2 adds task_name, fork_turns
        spawns = (ev.Spawn(agent_type=as_text(data.get("agent_type")),
                           model=as_text(data.get("model")), prompt=as_text(data.get("message")),
                           description=as_text(data.get("task_name"))),)  # fmt: skip
    return ev.ToolCall(
        name=name, kind=kind, mcp_server=server, input=data, call_id=n.tool_use_id,
        command=command if kind == "shell" else None, paths=paths, spawns=spawns,
    )  # fmt: skip


def _output(response: msgspec.Raw) -> str | None:
    """The tool's result as the model read it: Bash's is already a string."""
    with contextlib.suppress(msgspec.DecodeError, RecursionError):
        value = _ANY.decode(response)
        if value is None or isinstance(value, str):
            return ev.head(value)
    return ev.head(bytes(response).decode(errors="replace"))


def _child_ids(tool: ev.ToolCall, response: msgspec.Raw) -> tuple[str, ...]:
    # spawn_agent answers a JSON *string* holding {"agent_id": ..., "nickname": ...}
    # (real 0.171.0 runs; the schema says only "any JSON").
    if tool.kind != "agent":
        return ()
    with contextlib.suppress(msgspec.DecodeError, RecursionError):
        value = _ANY.decode(response)
        if isinstance(value, str):
            value = _ANY.decode(value)
        if isinstance(value, dict) and isinstance(value.get("agent_id"), str):
            return (value["agent_id"],)
    return ()


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    name = event_name("codex", data, native)
    n: Any = decoder(ToolInput if name in TOOL_EVENTS else Native).decode(data)
    common = {**cs.common("codex", name, n, data, main=ev.MAIN), "turn_id": n.turn_id}
    kind = KIND_OF.get(name, "other")
    if kind == "after-tool":
        tool = tool_call(n)
        patch = as_text(tool.input.get("command")) if tool.kind == "edit" else None
        changes = patch_changes(patch, n.cwd) if patch else ()
        return ev.AfterTool(**common, tool=tool, response=n.tool_response,
                            output=_output(n.tool_response), changes=changes,
                            child_ids=_child_ids(tool, n.tool_response))  # fmt: skip
    if kind == "pre-compact":  # without Claude's custom_instructions
        return ev.PreCompact(**common, trigger=n.trigger)
    return cs.event(kind, common, n, tool_call)


# -- encode: what each event's output schema admits, one set per reply part -------------

#: A top-level ``decision: "block"`` + ``reason`` acts here (a deny blocks the prompt, or
#: replaces a tool's result with the reason); on Stop/SubagentStop it keeps working.
BLOCKABLE = {"UserPromptSubmit", "PostToolUse"}
CONTEXT = {"SessionStart", "SubagentStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"}
#: ``continue: false`` + ``stopReason``: an error on the permission events, outside the
#: schema of Interrupt (systemMessage only) and SessionEnd (no output), and without effect
#: on a subagent's start.
HALT = {"SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "PostCompact",
        "Stop", "SubagentStop"}  # fmt: skip
#: SessionEnd has no output schema in 0.171.0: nothing it prints is read.
SILENT = {"SessionEnd"}


def _decision(
    name: str, reply: Reply, out: dict[str, Any], hso: dict[str, Any], drop: Drops
) -> None:
    decision, reason = reply.decision, reply.reason.strip() or DENIED
    if decision == "ask" and (name == "PreToolUse" or name in BLOCKABLE):
        drop("decision", "Codex has no ask here; denied instead")
        decision = "deny"
    if decision == "deny" and name == "PreToolUse":
        hso["permissionDecision"], hso["permissionDecisionReason"] = "deny", reason
    elif decision == "deny" and name == "PermissionRequest":
        hso["decision"] = {"behavior": "deny", "message": reason}
    elif decision == "allow" and name == "PermissionRequest":
        hso["decision"] = {"behavior": "allow"}
    elif decision == "deny" and name in BLOCKABLE:
        out["decision"], out["reason"] = "block", reason
    elif decision == "ask" and name == "PermissionRequest":
        drop("decision", "ask is what the approval prompt does anyway")
    elif decision == "allow" and name == "PreToolUse" and reply.updated_input is None:
        drop("decision", "Codex refuses a bare allow; its own approval rules decide")
    elif decision and decision != "allow":
        drop("decision", f"{decision} has no effect on this event")


#: The only rewrite is allow + ``updatedInput`` (see the module docstring).
RULES = cs.Rules(host="codex", title="Codex", context=CONTEXT, silent=SILENT, halt=HALT,
                 unread_message="Codex reads no output of SessionEnd",
                 unread_halt="Codex cannot stop the agent from here",
                 unread_rewrite="only PreToolUse input can be rewritten, and not in a deny",
                 rewrite_allows=True, blank_reason=DENIED)  # fmt: skip


def encode(name: str, reply: Reply) -> Encoded:
    return cs.encode(RULES, name, reply, _decision)


#: Codex's rewrite is only "allow with new input", which grants permission: refuse with a
#: precise retry instead (the seed; hooks.md, PreToolUse output).
SPAWN_RULES = (SpawnRules(correction="refuse", inherits=frozenset({"default"})),)


def capabilities(native: str) -> Capabilities:
    return Capabilities(
        decide=native in ("PreToolUse", "PermissionRequest") or native in BLOCKABLE,
        rewrite_input=native == "PreToolUse",
        rewrite_grants_permission=native == "PreToolUse",
        spawn_model=native == "PreToolUse",  # updatedInput may set spawn_agent's model
        context=native in CONTEXT,
        user_message=native not in SILENT,
        keep_working=native in cs.STOPS,
        halt=native in HALT,
        spawn_rules=SPAWN_RULES,
        # Its events name the session's model; a spawn's brief (message) is encrypted.
        spawn_knows_parent=True,
        brief_hidden=True,
    )


class CodexDriver(BaseDriver):
    name = "codex"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    mcp_prefix = "mcp__"
    samples = "hookbus.hosts.codex.samples"
    after_edit_from = ("PostToolUse",)
    #: The session's rollout JSONL (see :mod:`hookbus.hosts.shared.transcript`).
    transcript_format = "codex"

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)


driver = CodexDriver()
