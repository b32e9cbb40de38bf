"""The OpenHands driver: the Agent SDK's hook payload decoded, its one reply shape answered.

Contract (``OpenHands/software-agent-sdk@611629e``, ``openhands-sdk/openhands/sdk/hooks/``:
``types.py``, ``executor.py``, ``manager.py``, ``conversation_hooks.py``; the CLI, the
local GUI and Cloud all run conversations through this SDK; verified against that
source, not the real program):

- stdin is ``HookEvent.model_dump_json()``: the same flat object for all six events,
  every key present and ``null`` when unset: ``event_type`` (the PascalCase event),
  ``tool_name``, ``tool_input`` (the tool's Action model dumped, defaults included),
  ``tool_response`` (its Observation dumped), ``message``, ``session_id``,
  ``working_dir``, ``metadata`` (Stop: ``{"reason": ...}``). Not Claude's shape: no
  ``hook_event_name``, ``cwd``, ``transcript_path`` or tool-call id, and no subagent
  identity (a task subagent runs its own definition's hooks, not the project's);
- stdout is parsed as one JSON object on any exit code: ``decision`` ``"deny"`` (any
  case) blocks, ``"allow"`` does nothing more; ``reason`` is the block's reason;
  ``additionalContext`` is added to the prompt (UserPromptSubmit) or is the feedback of
  a blocked Stop (in place of the reason); ``continue: false`` blocks too. Exit 2 blocks,
  any other exit code, a timeout or a crash lets the operation go on;
- only PreToolUse (the action is not run), UserPromptSubmit (the message is dropped) and
  Stop (the agent keeps working) can be blocked; there is no ask and no rewrite.
  Exit 0 with nothing printed is every event's no-opinion.
"""

from typing import Any

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.host import Capabilities, Encoded, ToolRoute
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import BLOCKED, DENIED, Reply
from hookbus.hosts.openhands.facts import FACTS
from hookbus.hosts.shared.driver import BaseDriver, Drops, as_text, decoder

# -- native events ---------------------------------------------------------------------

#: ``HookEventType`` (types.py), in its order.
KIND_OF: dict[str, str] = {
    "PreToolUse": "before-tool",
    "PostToolUse": "after-tool",
    "UserPromptSubmit": "prompt-submit",
    "SessionStart": "session-start",
    "SessionEnd": "session-end",
    "Stop": "stop",
}
ALL_EVENTS = tuple(KIND_OF)
#: What a deny blocks (``execute_all(stop_on_block=True)`` and a blocked result read).
BLOCKS = frozenset({"PreToolUse", "UserPromptSubmit", "Stop"})


class Native(msgspec.Struct, kw_only=True):
    """``HookEvent``: every key present, ``null`` where unset; unknown keys ignored."""

    event_type: str
    tool_name: str | None = None
    tool_input: dict[str, Any] | None = None
    tool_response: dict[str, Any] | None = None
    message: str | None = None
    session_id: str | None = None
    working_dir: str | None = None
    metadata: dict[str, Any] | None = None


# -- tools -----------------------------------------------------------------------------

#: The built-in tools of ``openhands-tools``. The file editors are edits, but their
#: ``view`` command is a read (decided per call below).
EDITORS = ("file_editor", "planning_file_editor")
TOOLS: dict[str, ev.ToolKind] = {
    "terminal": "shell",
    **dict.fromkeys((*EDITORS, "apply_patch"), "edit"),
    **dict.fromkeys(("glob", "grep"), "read"),
    **dict.fromkeys(("delegate", "task"), "agent"),
}
#: The browser tools are ``browser_navigate``, ``browser_click`` ... (``browser_use``).
BROWSER_PREFIX = "browser_"


def tool_call(name: str, data: dict[str, Any]) -> ev.ToolCall:
    kind: ev.ToolKind = TOOLS.get(name, "web" if name.startswith(BROWSER_PREFIX) else "other")
    if name in EDITORS and data.get("command") == "view":
        kind = "read"
    path = as_text(data.get("path"))
    spawns: tuple[ev.Spawn, ...] = ()
    if kind == "agent":
        spawns = (ev.Spawn(agent_type=as_text(data.get("subagent_type")),
                           prompt=as_text(data.get("prompt")),
                           description=as_text(data.get("description"))),)  # fmt: skip
    return ev.ToolCall(
        name=name, kind=kind, input=data,
        command=as_text(data.get("command")) if kind == "shell" else None,
        paths=(path,) if path and name in EDITORS else (), spawns=spawns,
    )  # fmt: skip


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    n = decoder(Native).decode(data)
    name = n.event_type
    kind = KIND_OF.get(name, "other")
    if name in ("PreToolUse", "PostToolUse") and not n.tool_name:
        from hookbus.bus.errors import DecodeError

        raise DecodeError("openhands", f"{name} without a tool name", "tool_name")
    common: dict[str, Any] = {
        "host": "openhands", "native": name, "session_id": n.session_id or "",
        "cwd": n.working_dir or "", "raw": msgspec.Raw(data),
    }  # fmt: skip
    if kind == "before-tool":
        return ev.BeforeTool(**common, tool=tool_call(n.tool_name or "", n.tool_input or {}))
    if kind == "after-tool":
        response = n.tool_response
        return ev.AfterTool(**common, tool=tool_call(n.tool_name or "", n.tool_input or {}),
                            response=msgspec.Raw(msgspec.json.encode(response)),
                            output=ev.head(msgspec.json.encode(response).decode())
                            if response is not None else None)  # fmt: skip
    if kind == "prompt-submit":
        return ev.PromptSubmit(**common, prompt=n.message or "")
    if kind == "session-start":
        return ev.SessionStart(**common)
    if kind == "session-end":
        return ev.SessionEnd(**common)
    if kind == "stop":
        return ev.Stop(**common)
    return ev.Other(**common)


# -- encode ----------------------------------------------------------------------------


def _decision(name: str, reply: Reply, out: dict[str, Any], drop: Drops) -> None:
    decision = reply.decision
    if decision and name not in ("PreToolUse", "UserPromptSubmit"):
        if decision != "allow":
            drop("decision", f"{decision} blocks nothing here")
        return
    if decision == "ask":
        drop("decision", "OpenHands has no ask (types.py: ASK is a future value); denied instead")
        decision = "deny"
    if decision == "deny":
        out["decision"], out["reason"] = "deny", reply.reason.strip() or DENIED
    elif decision == "allow":
        out["decision"] = "allow"


def encode(name: str, reply: Reply) -> Encoded:
    out: dict[str, Any] = {}
    drop = Drops("openhands", name)
    _decision(name, reply, out, drop)
    if reply.keep_working is not None:
        if name == "Stop":
            # A blocked Stop feeds back its additionalContext if any, else its reason.
            keep = reply.keep_working.strip() or BLOCKED
            out["decision"], out["reason"] = "deny", keep
            if reply.context:
                out["additionalContext"] = f"{keep}\n\n{reply.context}"
        else:
            drop("keep_working", "only Stop can keep working")
    if reply.context and "additionalContext" not in out:
        if name == "UserPromptSubmit":
            out["additionalContext"] = reply.context
        else:
            drop("context", "OpenHands adds context only to a prompt, or to a kept-working stop")
    if reply.updated_input is not None:
        drop("updated_input", "OpenHands cannot rewrite a tool call")
    if reply.halt is not None:
        drop("halt", "OpenHands cannot stop the agent from a hook (continue: false blocks)")
    if reply.message:
        drop("message", "OpenHands shows hook output to nobody")
    stdout = msgspec.json.encode(out) + b"\n" if out else b""
    return Encoded(output=HookOutput(stdout=stdout), dropped=drop.parts)


def capabilities(native: str) -> Capabilities:
    return Capabilities(
        decide=native in ("PreToolUse", "UserPromptSubmit"),
        context=native == "UserPromptSubmit",
        keep_working=native == "Stop",
    )


class OpenHandsDriver(BaseDriver):
    name = "openhands"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    samples = "hookbus.hosts.openhands.samples"
    after_edit_from = ("PostToolUse",)

    def tool_route(self, patterns: tuple[str, ...]) -> ToolRoute | None:
        # A file editor's view is a read on the event, but its route stays the edit
        # tools' (a route's names are of its kind whatever their input): a read handler
        # that wants views names the editor too (docs/hosts/openhands.md).
        route = super().tool_route(patterns)
        if route is None or "web" not in patterns:
            return route
        return msgspec.structs.replace(route, prefixes=(*route.prefixes, BROWSER_PREFIX))

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)


driver = OpenHandsDriver()
