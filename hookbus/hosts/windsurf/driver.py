"""The Windsurf driver: Cascade Hooks, decoded and answered by exit code.

Contract (the vendor page https://docs.windsurf.com/windsurf/cascade/hooks, "twelve hook
events"; verified from that page, not in the real program): every hook gets one JSON
object on stdin naming its event in ``agent_action_name``, with ``trajectory_id`` (the
conversation), ``execution_id`` (the agent turn), an ISO-8601 ``timestamp`` and the
event's own fields under ``tool_info``. Live captures add ``model_name`` (heywood8/rosetta
``docs/hooks/windsurf.md``), read when present.

The reply is the **exit code alone**: stdout is never parsed. Exit 2 blocks the five
``pre_*`` events ("Only pre-hooks ... can block actions using exit code 2") and its stderr
is what "the Cascade agent will see"; exit 0 and any other code let the action proceed.
So there is no ask, no rewrite, no context and no keep-working: an ask, a rewrite and a
halt on a ``pre_*`` event become a block (the call must not run unreviewed or unrewritten),
and every such change is reported as dropped. stdout and stderr reach the user's Cascade
panel only when the entry says ``show_output`` (not on the prompt and response events),
which is how a handler's message is shown.

No tool names are sent: the event is the operation (``pre_run_command`` is a shell call).
hookbus names the calls itself (``run_command``, ``read_code``, ``write_code``, and
``mcp__<server>__<tool>`` for MCP), and the manifest registers only the events whose
operation some handler wants, since hooks.json has no matcher. There are no subagents,
and only ``pre/post_run_command`` say in which folder they run (hooks run in the
workspace root, which the payload never names).
"""

from typing import Any, ClassVar

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.errors import DecodeError
from hookbus.bus.host import Capabilities, Encoded, ToolRoute
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import BLOCKED, Reply
from hookbus.hosts.shared.driver import (
    BaseDriver,
    Drops,
    as_text,
    blocked_instead,
    decoder,
    iso_seconds,
)
from hookbus.hosts.windsurf.facts import FACTS

# -- native events, in the order the vendor page documents them --------------------------

ALL_EVENTS = (
    "pre_read_code", "post_read_code", "pre_write_code", "post_write_code",
    "pre_run_command", "post_run_command", "pre_mcp_tool_use", "post_mcp_tool_use",
    "pre_user_prompt", "post_cascade_response", "post_cascade_response_with_transcript",
    "post_setup_worktree",
)  # fmt: skip

KIND_OF: dict[str, str] = {
    "pre_read_code": "before-tool", "post_read_code": "after-tool",
    "pre_write_code": "before-tool", "post_write_code": "after-tool",
    "pre_run_command": "before-tool", "post_run_command": "after-tool",
    "pre_mcp_tool_use": "before-tool", "post_mcp_tool_use": "after-tool",
    "pre_user_prompt": "prompt-submit",
    # Asynchronous, after the turn: a stop that cannot be continued.
    "post_cascade_response": "stop",
}  # fmt: skip

#: The events exit 2 blocks (the page's exit-code table).
BLOCKING = frozenset(n for n in ALL_EVENTS if n.startswith("pre_"))
#: The events whose output ``show_output`` puts in the Cascade panel (the page: the option
#: "does not apply" to the prompt and the two response hooks).
SHOWN = frozenset(ALL_EVENTS) - {"pre_user_prompt", "post_cascade_response",
                                 "post_cascade_response_with_transcript"}  # fmt: skip

# -- tools -----------------------------------------------------------------------------

#: hookbus's name for the operation of each tool event (Windsurf sends none).
TOOL_OF: dict[str, str] = {
    "pre_read_code": "read_code", "post_read_code": "read_code",
    "pre_write_code": "write_code", "post_write_code": "write_code",
    "pre_run_command": "run_command", "post_run_command": "run_command",
}  # fmt: skip
MCP_EVENTS = frozenset({"pre_mcp_tool_use", "post_mcp_tool_use"})
MCP_PREFIX = "mcp__"

TOOLS: dict[str, ev.ToolKind] = {
    "read_code": "read",
    "write_code": "edit",
    "run_command": "shell",
}


class Native(msgspec.Struct, kw_only=True):
    """The common fields; ``tool_info`` is loosely typed, as each event fills it."""

    agent_action_name: str | None = None
    trajectory_id: str = ""
    execution_id: str | None = None
    timestamp: str | None = None
    model_name: str | None = None
    tool_info: dict[str, Any] = {}


def tool_call(native: str, info: dict[str, Any]) -> ev.ToolCall:
    """The call a tool event describes. Its ``input`` is ``tool_info`` (an MCP call's: the
    tool's own arguments); ``file_path`` is absolute (live captures) and may be a folder."""
    if native in MCP_EVENTS:
        server = as_text(info.get("mcp_server_name")) or ""
        arguments = info.get("mcp_tool_arguments")
        return ev.ToolCall(
            name=f"{MCP_PREFIX}{server}__{as_text(info.get('mcp_tool_name')) or ''}",
            kind="mcp",
            mcp_server=server,
            input=arguments if isinstance(arguments, dict) else {},
        )
    name = TOOL_OF[native]
    kind = TOOLS[name]
    path = as_text(info.get("file_path"))
    return ev.ToolCall(name=name, kind=kind, input=info,
                       command=as_text(info.get("command_line")) if kind == "shell" else None,
                       paths=(path,) if path and kind != "shell" else ())  # fmt: skip


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    n = decoder(Native).decode(data)
    name = n.agent_action_name or native
    if not name:
        raise DecodeError("windsurf", "no agent_action_name and no --event given")
    info = n.tool_info
    # Only the command events say where they run; post_setup_worktree runs in the worktree.
    cwd = as_text(info.get("cwd")) or as_text(info.get("worktree_path")) or ""
    common: dict[str, Any] = {
        "host": "windsurf", "native": name, "session_id": n.trajectory_id, "cwd": cwd,
        "model": n.model_name, "timestamp": iso_seconds(n.timestamp),
        "turn_id": n.execution_id, "raw": msgspec.Raw(data),
        "transcript_path": as_text(info.get("transcript_path")),
    }  # fmt: skip
    kind = KIND_OF.get(name, "other")
    if kind == "before-tool":
        return ev.BeforeTool(**common, tool=tool_call(name, info))
    if kind == "after-tool":
        tool = tool_call(name, info)
        result = info.get("mcp_result")
        output = result if isinstance(result, str) or result is None else None
        changes = tuple(ev.FileChange(action="update", path=p) for p in tool.paths
                        if tool.kind == "edit")  # fmt: skip
        return ev.AfterTool(**common, tool=tool, response=msgspec.Raw(msgspec.json.encode(result)),
                            output=ev.head(output), changes=changes)  # fmt: skip
    if kind == "prompt-submit":
        return ev.PromptSubmit(**common, prompt=as_text(info.get("user_prompt")) or "")
    if kind == "stop":
        return ev.Stop(**common, last_message=as_text(info.get("response")))
    return ev.Other(**common)


# -- encode ----------------------------------------------------------------------------

NOT_READ = "Windsurf reads only the exit code; stdout is never parsed"


def encode(name: str, reply: Reply) -> Encoded:
    drop = Drops("windsurf", name)
    blocks = name in BLOCKING
    block: str | None = None
    decision = reply.decision
    if decision in ("deny", "ask") and blocks:
        block = reply.reason.strip() or BLOCKED
        if decision == "ask":
            drop("decision", "ask became a block: Windsurf cannot ask the user")
    elif decision in ("deny", "ask"):
        drop("decision", f"{decision} has no effect: only pre_* hooks block, after the fact "
                         "nothing can be refused")  # fmt: skip
    elif decision == "allow":
        drop("decision", "allow has no effect: Windsurf hooks cannot grant, only block")
    block = blocked_instead(reply, drop, block, host="Windsurf", blocks=blocks)
    if reply.context:
        drop("context", f"{NOT_READ}; only a block's reason reaches the agent")
    if reply.keep_working is not None:
        drop("keep_working", "post_cascade_response runs after the turn, asynchronously")
    stdout = b""
    if reply.message and name in SHOWN:
        stdout = reply.message.encode() + b"\n"  # shown in the panel: show_output is set
    elif reply.message:
        drop("message", "Windsurf shows no hook output for this event")
    if block is None:
        return Encoded(output=HookOutput(stdout=stdout), dropped=drop.parts)
    output = HookOutput(stdout=stdout, stderr=block.encode() + b"\n", exit_code=2)
    return Encoded(output=output, dropped=drop.parts)


def capabilities(native: str) -> Capabilities:
    return Capabilities(decide=native in BLOCKING, user_message=native in SHOWN)


class WindsurfDriver(BaseDriver):
    name = "windsurf"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    mcp_prefix = MCP_PREFIX
    samples = "hookbus.hosts.windsurf.samples"
    #: The events are the operations: a handler of shell calls needs pre_run_command only.
    event_tools: ClassVar[dict[str, tuple[str, ...]]] = {n: (t,) for n, t in TOOL_OF.items()}
    after_edit_from = ("post_write_code",)
    #: A second stop of the same turn, with the transcript's path: only when named.
    opt_in = ("post_cascade_response_with_transcript",)

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)

    def can_carry(self, native: str, route: ToolRoute | None) -> bool:
        """The MCP events carry MCP calls only (their names are made up of the server's)."""
        if native not in MCP_EVENTS or route is None or route.unknown:
            return super().can_carry(native, route)
        return bool(route.prefixes) or any(n.startswith(MCP_PREFIX) for n in route.names)


driver = WindsurfDriver()
