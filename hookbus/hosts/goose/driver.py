"""The Goose driver: the hooks of goose (block/goose), decoded and answered.

Contract (``block/goose`` ``crates/goose/src/hooks/mod.rs`` and
``documentation/docs/guides/context-engineering/hooks.md`` @0825b570; verified from the
source and docs, not in the real program): hooks live in plugins
(``<plugin>/hooks/hooks.json``, Claude's grouped shape). Each command gets one JSON
object on stdin (``HookContext``): the event in ``event``, ``session_id``,
``matcher_context`` (what the rule's matcher was tested against), and where they apply
``tool_call_id``, ``tool_name``, ``tool_input``, ``tool_output``, ``message`` (the
prompt), ``last_assistant_message`` and ``working_dir``.

Only ``PreToolUse`` and ``Stop`` read a decision, from the exit code and stdout: exit 2
(the reason on stderr) or ``{"decision":"block","reason":...}`` blocks; exit 0 with
nothing printed, or ``{"decision":"allow"}``, allows; anything else (a stray line, ``{}``,
``"decision":"deny"``, another code) is *no decision*, which is ignored unless the entry
says ``"on_failure":"block"`` (``PreToolUse`` only). A blocked ``Stop`` keeps the turn
going, its reason handed to the model. So a deny is ``block`` on ``PreToolUse``; an ask,
a rewrite and a halt there become a block too (Goose can neither ask nor rewrite), and a
keep-working on ``Stop`` is its ``block``. Nothing else is read from any event.

Tool names are ``<extension>__<tool>``; the developer extension's are in :data:`TOOLS`,
and any other extension's tool is an MCP tool of that server. No subagent is named.
"""

from typing import Any

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.errors import DecodeError
from hookbus.bus.host import Capabilities, Encoded, ToolRoute
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import BLOCKED, Reply
from hookbus.hosts.goose.facts import FACTS
from hookbus.hosts.shared.driver import (
    BaseDriver,
    Drops,
    absolute,
    as_text,
    blocked_instead,
    decoder,
)

# -- native events, in the order of mod.rs's HookEvent -------------------------------

ALL_EVENTS = (
    "PreToolUse", "PreToolUseResult", "PostToolUse", "PostToolUseFailure", "SessionStart",
    "SessionEnd", "UserPromptSubmit", "BeforeReadFile", "AfterFileEdit",
    "BeforeShellExecution", "AfterShellExecution", "Stop",
)  # fmt: skip

KIND_OF: dict[str, str] = {
    "PreToolUse": "before-tool",
    "PostToolUse": "after-tool",
    "PostToolUseFailure": "after-tool",
    "SessionStart": "session-start",
    "SessionEnd": "session-end",
    "UserPromptSubmit": "prompt-submit",
    "Stop": "stop",
}
#: Observation events that repeat a tool event (the same call, named after its kind):
#: registered only for a handler that names them.
ECHOES = ("PreToolUseResult", "BeforeReadFile", "AfterFileEdit", "BeforeShellExecution",
          "AfterShellExecution")  # fmt: skip

# -- tools -----------------------------------------------------------------------------

#: The developer extension's tools (the docs' "Tool Input Keys"; ``text_editor`` in
#: older builds and mod.rs's own example).
TOOLS: dict[str, ev.ToolKind] = {
    "developer__shell": "shell",
    "developer__write": "edit",
    "developer__edit": "edit",
    "developer__text_editor": "edit",
    "developer__tree": "read",
    "developer__read_image": "read",
}
SEPARATOR = "__"


class Native(msgspec.Struct, kw_only=True):
    """``HookContext``: optional fields are left out when they do not apply."""

    event: str | None = None
    session_id: str = ""
    matcher_context: str | None = None
    tool_call_id: str | None = None
    tool_name: str | None = None
    tool_input: Any = None
    tool_output: Any = None
    message: str | None = None
    last_assistant_message: str | None = None
    working_dir: str | None = None


def tool_call(name: str, data: dict[str, Any], call_id: str | None, cwd: str) -> ev.ToolCall:
    kind: ev.ToolKind = TOOLS.get(name, "other")
    server = None
    if kind == "other" and SEPARATOR in name:
        kind, server = "mcp", name.split(SEPARATOR, 1)[0]
    path = as_text(data.get("path")) if kind in ("edit", "read") else None
    return ev.ToolCall(name=name, kind=kind, mcp_server=server, input=data, call_id=call_id,
                       command=as_text(data.get("command")) if kind == "shell" else None,
                       paths=(absolute(cwd, path),) if path else ())  # fmt: skip


def _output(value: object) -> str | None:
    """A tool's output as text: a string, or the ``text`` of MCP content items."""
    if isinstance(value, str) or value is None:
        return value
    items = value if isinstance(value, list) else [value]
    texts = [i.get("text") for i in items if isinstance(i, dict)]
    found = [t for t in texts if isinstance(t, str)]
    return "\n".join(found) if found else msgspec.json.encode(value).decode()


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    n = decoder(Native).decode(data)
    name = n.event or native
    if not name:
        raise DecodeError("goose", "no event and no --event given")
    common: dict[str, Any] = {"host": "goose", "native": name, "session_id": n.session_id,
                              "cwd": n.working_dir or "", "raw": msgspec.Raw(data)}  # fmt: skip
    kind = KIND_OF.get(name, "other")
    if kind in ("before-tool", "after-tool"):
        if not n.tool_name:
            raise DecodeError("goose", f"a {name} without tool_name")
        data_in = n.tool_input if isinstance(n.tool_input, dict) else {}
        tool = tool_call(n.tool_name, data_in, n.tool_call_id, common["cwd"])
        if kind == "before-tool":
            return ev.BeforeTool(**common, tool=tool)
        output = _output(n.tool_output)
        failed = name == "PostToolUseFailure"
        changes = tuple(ev.FileChange(action="update", path=p) for p in tool.paths
                        if tool.kind == "edit" and not failed)  # fmt: skip
        response = msgspec.Raw(msgspec.json.encode(n.tool_output))
        error = (output or "failed") if failed else None
        return ev.AfterTool(**common, tool=tool, response=response, output=ev.head(output),
                            error=error, changes=changes)  # fmt: skip
    if kind == "prompt-submit":
        return ev.PromptSubmit(**common, prompt=n.message or "")
    if kind == "stop":
        return ev.Stop(**common, last_message=n.last_assistant_message)
    if kind == "session-start":
        return ev.SessionStart(**common)
    if kind == "session-end":
        return ev.SessionEnd(**common)
    return ev.Other(**common)


# -- encode ----------------------------------------------------------------------------

NOT_READ = "Goose reads no reply from this event"


def _block(reason: str) -> HookOutput:
    """Goose's block: its deny word is ``block`` (``deny`` there is no decision at all)."""
    return HookOutput(stdout=msgspec.json.encode({"decision": "block", "reason": reason}) + b"\n")


def encode(name: str, reply: Reply) -> Encoded:
    drop = Drops("goose", name)
    block: str | None = None
    pre = name == "PreToolUse"
    if reply.decision in ("deny", "ask") and pre:
        block = reply.reason.strip() or BLOCKED
        if reply.decision == "ask":
            drop("decision", "ask became a block: Goose hooks cannot ask the user")
    elif reply.decision:
        drop("decision", f"{reply.decision} has no effect here: only PreToolUse blocks, and "
                         "no hook can grant")  # fmt: skip
    block = blocked_instead(reply, drop, block, host="Goose", blocks=pre)
    if reply.keep_working is not None:
        if name == "Stop":
            block = reply.keep_working.strip() or BLOCKED
        else:
            drop("keep_working", "only Stop can keep the turn going")
    if reply.context:
        drop("context", f"{NOT_READ} as context; only a block's reason reaches the model")
    if reply.message:
        drop("message", "Goose shows hook output to no one")
    output = _block(block) if block is not None else HookOutput()
    return Encoded(output=output, dropped=drop.parts)


def capabilities(native: str) -> Capabilities:
    return Capabilities(decide=native == "PreToolUse", keep_working=native == "Stop")


class GooseDriver(BaseDriver):
    name = "goose"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    samples = "hookbus.hosts.goose.samples"
    after_edit_from = ("PostToolUse",)
    opt_in = ECHOES

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)

    def tool_route(self, patterns: tuple[str, ...]) -> ToolRoute | None:
        """Any extension's tool is an MCP server's (``github__create_issue``): ``mcp:S``
        is the prefix ``S__``, and ``mcp`` every tool the table does not name."""
        route = super().tool_route(patterns)
        if route is None:
            return None
        prefixes = tuple(f"{p[4:]}{SEPARATOR}" for p in patterns if p.startswith("mcp:"))
        if "mcp" in patterns or "other" in patterns:
            return ToolRoute(names=route.names, prefixes=prefixes, unknown=True,
                             known=tuple(self.tools))  # fmt: skip
        return ToolRoute(names=route.names, prefixes=prefixes)


driver = GooseDriver()
