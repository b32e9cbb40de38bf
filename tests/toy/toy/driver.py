"""The toy driver: a test-only host with every awkward trait the real ones have, to prove
the contract suite and the runtime host-neutral: its payloads never name their event (``--event``
does), the tool name is nested (``call.tool.name``), "no opinion" is not empty
(``{"verdict":"pass"}``) and an empty answer means deny, the project root is a payload
field, and a second dialect (a ``legacy`` key) reaches the same command."""

from typing import Any

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.errors import DecodeError
from hookbus.bus.host import Capabilities, Dropped, Encoded
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import Reply
from hookbus.hosts.shared.driver import BaseDriver
from toy.facts import FACTS

EVENTS = ("Begin", "BeforeCall", "AfterCall", "Halt", "Ping")
KINDS = {"Begin": "session-start", "BeforeCall": "before-tool", "AfterCall": "after-tool",
         "Halt": "stop"}  # fmt: skip
TOOLS: dict[str, ev.ToolKind] = {"sh": "shell", "write": "edit", "spawn": "agent"}


class Tool(msgspec.Struct):
    name: str
    args: dict[str, Any] = msgspec.field(default_factory=dict)


class Call(msgspec.Struct):
    tool: Tool
    id: str | None = None
    result: str | None = None


class Payload(msgspec.Struct, kw_only=True):
    session: str
    roots: list[str] = msgspec.field(default_factory=list)
    call: Call | None = None
    child: str | None = None


_DECODER = msgspec.json.Decoder(Payload)


class ToyDriver(BaseDriver):
    name = "toy"
    facts = FACTS
    events = EVENTS
    kinds = KINDS
    tools = TOOLS
    mcp_prefix = "mcp/"
    samples = "toy.samples"

    def decode_payload(self, data: bytes, native: str | None) -> ev.Event:
        if native is None:
            raise DecodeError("toy", "the payload never names its event: pass --event")
        p = _DECODER.decode(data)
        common: dict[str, Any] = {
            "host": "toy",
            "native": native,
            "session_id": p.session,
            "cwd": p.roots[0] if p.roots else "",
            "agent": ev.Agent(role="subagent", id=p.child) if p.child else ev.UNKNOWN,
            "raw": msgspec.Raw(data),
        }
        kind = self.kind_of(native)
        if kind in ("before-tool", "after-tool"):
            if p.call is None:
                raise DecodeError("toy", "a tool event without a call", "$.call")
            name = p.call.tool.name
            tool = ev.ToolCall(
                name=name,
                kind=TOOLS.get(name, "mcp" if name.startswith("mcp/") else "other"),
                input=p.call.tool.args,
                call_id=p.call.id,
                command=p.call.tool.args.get("cmd") if name == "sh" else None,
            )
            if kind == "before-tool":
                return ev.BeforeTool(**common, tool=tool)
            return ev.AfterTool(**common, tool=tool, output=ev.head(p.call.result))
        if kind == "session-start":
            return ev.SessionStart(**common)
        if kind == "stop":
            return ev.Stop(**common)
        return ev.Other(**common)

    def encode(self, native: str, reply: Reply) -> Encoded:
        dropped: list[Dropped] = []
        if native == "Ping":
            return Encoded(output=HookOutput())
        out: dict[str, Any] = {"verdict": "pass"}
        if reply.decision == "deny" or (reply.decision == "ask" and native == "BeforeCall"):
            if native == "BeforeCall":
                out = {"verdict": "block", "why": reply.reason or "blocked"}
            else:
                dropped.append(Dropped(handler="toy", field="decision", why="cannot block"))
        elif reply.decision == "allow" and native == "BeforeCall":
            out["verdict"] = "allow"
        if reply.context:
            out["note"] = reply.context
        if reply.keep_working is not None and native == "Halt":
            out = {"verdict": "again", "why": reply.keep_working}
        return Encoded(output=HookOutput(msgspec.json.encode(out) + b"\n"), dropped=tuple(dropped))

    def capabilities(self, native: str) -> Capabilities:
        return Capabilities(decide=native == "BeforeCall", context=native != "Ping",
                            keep_working=native == "Halt")  # fmt: skip


driver = ToyDriver()
