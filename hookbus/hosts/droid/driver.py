"""Factory Droid: command hooks configured in ``.factory/settings.json``, Claude-style.

Contract (Factory's hooks reference, ``docs/reference/hooks-reference.mdx`` of
github.com/Factory-AI/factory @a80aa7c5, 2026-07-24; verified from those docs, not in
the real program): stdin is one JSON object named by ``hook_event_name`` (9 events),
with ``session_id``, ``transcript_path``, ``cwd`` and ``permission_mode`` (``off``,
``spec``, ``auto-low``, ``auto-medium``, ``auto-high``); there is no ``tool_use_id`` and
no subagent marker. Replies are Claude Code's: exit 0 with JSON on stdout, a PreToolUse
``hookSpecificOutput`` with ``permissionDecision`` (allow/deny/ask) and
``updatedInput``, a top-level ``decision: "block"`` with a ``reason`` elsewhere. Exit 2
blocks too, with stderr as the reason; any other exit code is "a non-blocking error" and
Droid goes on, so a crash fails open. This driver only ever answers with exit 0 and JSON,
and "no opinion" is exit 0 with nothing printed: plain stdout of UserPromptSubmit and
SessionStart would be added to the model's context. Matching hooks run in parallel.
"""

from typing import Any, Literal

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.host import Capabilities, Encoded
from hookbus.bus.replies import BLOCKED, DENIED, Reply
from hookbus.hosts.droid.facts import FACTS
from hookbus.hosts.shared import claude_style as cs
from hookbus.hosts.shared.driver import BaseDriver, Drops, as_text, decoder, event_name
from hookbus.hosts.shared.patches import BEGIN, patch_changes

# -- native events ---------------------------------------------------------------------

#: The reference's nine events, in the order a session fires them. There is no
#: SubagentStart, PostToolUseFailure or PermissionRequest.
ALL_EVENTS = (
    "SessionStart", "UserPromptSubmit", "PreToolUse", "Notification", "PostToolUse",
    "SubagentStop", "Stop", "PreCompact", "SessionEnd",
)  # fmt: skip
KIND_OF: dict[str, str] = {n: k for n, k in cs.KIND_OF.items() if n in ALL_EVENTS}
#: Tool events carry no marker of the agent they run in (no ``agent_id``): a tool call
#: of a sub-droid (a ``Task``) looks like one of the main agent's.
UNMARKED = {"PreToolUse", "PostToolUse"}


# -- tools -----------------------------------------------------------------------------

#: Droid's tool IDs (custom-droids docs, "Tool categories → concrete tools"; the hooks
#: reference's "Common matchers"). ``Bash``, ``Write`` and ``WebFetch`` are the names
#: the reference gave until 2026-03-02 (commit 6a08ed04 "correct audited references"),
#: kept so that a guard never misses a shell or an edit should a build still send them.
TOOLS: dict[str, ev.ToolKind] = {
    **dict.fromkeys(("Execute", "Bash"), "shell"),
    **dict.fromkeys(("Create", "Edit", "ApplyPatch", "Write"), "edit"),
    **dict.fromkeys(("Read", "LS", "Grep", "Glob"), "read"),
    **dict.fromkeys(("FetchUrl", "WebSearch", "WebFetch"), "web"),
    "Task": "agent",
}
MCP_PREFIX = "mcp__"
#: ``file_path`` is the docs' own (the Create sample; every edit guide reads
#: ``tool_input.file_path``); ``path`` and ``notebook_path`` are Claude's, UNCONFIRMED.
_PATH_KEYS = ("file_path", "path", "notebook_path")


def _patch(data: dict[str, Any]) -> str | None:
    """The ``apply_patch`` envelope in an ApplyPatch input, whichever key holds it: the
    docs never show that tool's input (UNCONFIRMED; OpenAI's tool calls it ``input``)."""
    for value in data.values():
        if isinstance(value, str) and value.lstrip().startswith(BEGIN):
            return value
    return None


def _changes(name: str, data: dict[str, Any], cwd: str) -> tuple[ev.FileChange, ...]:
    if name == "ApplyPatch" and (patch := _patch(data)) is not None:
        return patch_changes(patch, cwd)
    # "Create - File creation" (the reference's matchers): a new file.
    action: Literal["add", "update"] = "add" if name == "Create" else "update"
    paths = (p for k in _PATH_KEYS if isinstance(p := data.get(k), str))
    return tuple(ev.FileChange(action=action, path=p) for p in paths)


def tool_call(native: cs.ToolInput) -> ev.ToolCall:
    name, data = native.tool_name, native.tool_input
    kind: ev.ToolKind = TOOLS.get(name, "other")
    server = None
    if name.startswith(MCP_PREFIX):
        kind, server = "mcp", name[len(MCP_PREFIX) :].partition("__")[0]
    if kind == "edit":
        changes = _changes(name, data, native.cwd)
        paths = tuple(p for c in changes for p in (c.path, c.from_path) if p)
    else:  # Read's file_path is the docs' own (its auto-approve example)
        paths = tuple(p for k in _PATH_KEYS if isinstance(p := data.get(k), str))
    # Task (a sub-droid) takes subagent_type, description and prompt (reported by
    # integrations; the docs show no Task input).
    spawn = ev.Spawn(agent_type=as_text(data.get("subagent_type")),
                     prompt=as_text(data.get("prompt")),
                     description=as_text(data.get("description")))  # fmt: skip
    return ev.ToolCall(
        name=name, kind=kind, mcp_server=server, input=data,
        command=as_text(data.get("command")) if kind == "shell" else None,
        paths=paths if kind != "shell" else (),
        spawns=(spawn,) if kind == "agent" else (),
    )  # fmt: skip


_ANY = msgspec.json.Decoder()


def _output(response: msgspec.Raw) -> str | None:
    """The tool's result as text: a string as it is (a Task answers one), anything else
    (``{"filePath": ..., "success": true}`` in the docs) as its JSON."""
    try:
        value = _ANY.decode(response)
    except (msgspec.DecodeError, RecursionError):
        return None
    if value is None or isinstance(value, str):
        return ev.head(value)
    return ev.head(msgspec.json.encode(value).decode())


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    name = event_name("droid", data, native)
    n: Any = decoder(cs.NATIVE_TYPES.get(name, cs.Native)).decode(data)
    common = cs.common("droid", name, n, data,
                       main=ev.UNKNOWN if name in UNMARKED else ev.MAIN)  # fmt: skip
    if name == "PostToolUse":
        tool = tool_call(n)
        changes = _changes(tool.name, tool.input, n.cwd) if tool.kind == "edit" else ()
        return ev.AfterTool(**common, tool=tool, response=n.tool_response,
                            output=_output(n.tool_response), changes=changes)  # fmt: skip
    return cs.event(KIND_OF.get(name, "other"), common, n, tool_call)


# -- encode ----------------------------------------------------------------------------

#: A top-level ``decision: "block"`` with a ``reason`` acts here: PostToolUse prompts
#: Droid with the reason, UserPromptSubmit erases the prompt (the reason goes to the
#: user only). On Stop and SubagentStop it is "keep working" (``cs.STOPS``).
BLOCKABLE = {"PostToolUse", "UserPromptSubmit"}
#: ``hookSpecificOutput.additionalContext`` is documented for these three only.
CONTEXT = {"SessionStart", "UserPromptSubmit", "PostToolUse"}
#: "All hook types can include" systemMessage and continue; stopping a session that is
#: ending anyway means nothing.
HALT = set(ALL_EVENTS) - {"SessionEnd"}


def _decision(name: str, reply: Reply, out: dict[str, Any], hso: dict[str, Any],
              drop: Drops) -> None:  # fmt: skip
    decision, reason = reply.decision, reply.reason
    if decision is None:
        return
    if decision == "allow":
        # Going on is the default. A PreToolUse "allow" would also skip Droid's permission
        # prompt, and Droid merges its hooks' decisions with no deny-over-allow priority
        # (rtk-ai/rtk#2267, review): ours could overrule another hook's deny.
        if name == "PreToolUse":
            drop("decision", "allow is not sent: it could overrule another hook's deny")
        return
    if name == "PreToolUse":
        # A deny's reason is shown to Droid, an ask's to the user only.
        hso["permissionDecision"] = decision
        if reason or decision == "deny":
            hso["permissionDecisionReason"] = reason or DENIED
    elif name in BLOCKABLE:
        if decision == "ask":
            drop("decision", "no ask here; blocked instead")
        out["decision"], out["reason"] = "block", reason or BLOCKED
    else:
        drop("decision", f"{decision} has no effect on this event")


RULES = cs.Rules(host="droid", title="Droid", context=CONTEXT, silent=frozenset(), halt=HALT,
                 unread_message="Droid reads no systemMessage here",
                 unread_halt="the session is ending anyway")  # fmt: skip


def encode(name: str, reply: Reply) -> Encoded:
    return cs.encode(RULES, name, reply, _decision)


# -- host facts ------------------------------------------------------------------------


def capabilities(native: str) -> Capabilities:
    return Capabilities(
        decide=native == "PreToolUse" or native in BLOCKABLE,
        ask=native == "PreToolUse",
        rewrite_input=native == "PreToolUse",
        context=native in CONTEXT,
        user_message=True,
        keep_working=native in cs.STOPS,
        halt=native in HALT,
    )


class DroidDriver(BaseDriver):
    name = "droid"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    mcp_prefix = MCP_PREFIX
    samples = "hookbus.hosts.droid.samples"
    after_edit_from = ("PostToolUse",)  # it runs only after a tool "completes successfully"

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)


driver = DroidDriver()
