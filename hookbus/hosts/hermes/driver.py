"""The Hermes Agent driver: Hermes Agent 0.19.0 (PyPI ``hermes-agent``), its shell hooks
and hookbus's plugin, which both hand hookbus the same envelope.

Contract (``agent/shell_hooks.py``, ``hermes_cli/plugins.py`` of 0.19.0; real runs
offline, ``tests/golden/hermes``): a ``config.yaml`` ``hooks:`` command gets one JSON
object on stdin, ``{"hook_event_name", "tool_name", "tool_input", "session_id", "cwd",
"extra": {every other keyword argument}}``; ``session_id`` is the call's, else its
``parent_session_id``. hookbus's plugin (:mod:`hookbus.hosts.hermes.plugin`) builds exactly this
envelope from its callback's keyword arguments, so one decoder serves both paths.

What Hermes reads back (``_parse_response`` for shell hooks; ``invoke_hook``'s callers
for plugins), and so the one JSON object hookbus prints:

- ``pre_tool_call``: ``{"action":"block","message":M}`` (M non-empty: a block without one
  is ignored); the model gets ``{"error": M}`` as the tool's result. There is no ask
  (shell hooks know only block) and no rewrite in 0.19.0: an ask, a rewrite and a halt
  are blocks. A rewrite's block also carries ``"args"``: the plugin turns it into
  ``{"action":"modify","args":...}`` where the running Hermes has modify (it looks in
  Hermes's own code), and Hermes ignores the key otherwise;
- ``pre_llm_call``: ``{"context": C}``, appended to the turn's user message;
- ``pre_verify``: ``{"action":"continue","message":M}`` keeps the agent working;
- nothing printed (or ``{}``) is every event's no-opinion. Exit codes are not read.

Event kinds: ``pre_llm_call`` on a session's first turn (``is_first_turn``) is its
session start, the only one whose context reaches the model (``on_session_start`` is an
observer: its return is dropped), later ones are prompts; ``pre_verify`` (the agent is
about to finish after editing) is the stop; ``on_session_end`` ends every
``run_conversation`` and is the session end.

Subagents (``tools/delegate_tool.py``): ``delegate_task`` runs children in the same
process; a child's calls carry its own session and ``task_id`` = its subagent id
``sa-<index>-<hex>`` (line 1118), which is how its tool events are told apart. Hermes has
no agent types, and the call names no model: every child runs on ``delegation.model`` of
``config.yaml``, else on the parent's. The before-tool of a spawning call carries both
(each :class:`~hookbus.bus.events.Spawn`'s ``model``, and the event's ``model``), read
from the user's configuration for this event only.
"""

import os
from typing import Any

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.errors import DecodeError
from hookbus.bus.host import Capabilities, Encoded, SpawnRules
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import BLOCKED, DENIED, Reply
from hookbus.hosts.hermes.facts import FACTS
from hookbus.hosts.shared.driver import BaseDriver, Drops, absolute, as_text, blocked_instead

# -- native events: 0.19.0's VALID_HOOKS that hookbus registers, in the order they fire --

ALL_EVENTS = (
    "on_session_start", "pre_llm_call", "pre_tool_call", "post_tool_call", "subagent_start",
    "subagent_stop", "post_llm_call", "pre_verify", "on_session_end",
)  # fmt: skip

KIND_OF: dict[str, str] = {
    "pre_llm_call": "prompt-submit",
    "pre_tool_call": "before-tool",
    "post_tool_call": "after-tool",
    "subagent_start": "subagent-start",
    "subagent_stop": "subagent-stop",
    "pre_verify": "stop",
    "on_session_end": "session-end",
}
#: ``pre_llm_call`` is a session start as well (its first turn): registered for both.
ALSO: dict[str, str] = {"session-start": "pre_llm_call"}


class Native(msgspec.Struct, kw_only=True):
    """The shell-hook envelope; unknown keys (repo main's ``profile``) are ignored."""

    hook_event_name: str | None = None
    tool_name: str | None = None
    tool_input: Any = None
    session_id: str = ""
    cwd: str = ""
    extra: dict[str, Any] = {}


_DECODER = msgspec.json.Decoder(Native)
_ANY = msgspec.json.Decoder()

# -- tools (0.19.0 tools/registry names) -----------------------------------------------

TOOLS: dict[str, ev.ToolKind] = {
    "terminal": "shell", "process": "shell", "execute_code": "shell",
    "read_file": "read", "search_files": "read",
    "write_file": "edit", "patch": "edit",
    "web_search": "web", "web_extract": "web", "x_search": "web",
    "delegate_task": "agent",
}  # fmt: skip
SPAWN_TOOL = "delegate_task"


def spawns(data: dict[str, Any]) -> bool:
    """Whether a ``delegate_task`` call spawns: its ``action``, trimmed and lower-cased,
    empty or ``spawn`` (0.19.0 has no ``action``: every call spawns)."""
    action = data.get("action")
    return not isinstance(action, str) or action.strip().lower() in ("", "spawn")


class _Delegation(msgspec.Struct):
    model: Any = None


class _Config(msgspec.Struct):
    """What a spawn needs of ``config.yaml``: the parent's model and the children's."""

    model: Any = None
    delegation: _Delegation | None = None


def models(environ: dict[str, str] | None = None) -> tuple[str | None, str | None]:
    """(the parent's model, ``delegation.model``) from the user's ``config.yaml``
    (``$HERMES_HOME``, else ``~/.hermes``); Nones when it is missing or unreadable."""
    env = os.environ if environ is None else environ
    home = env.get("HERMES_HOME") or os.path.join(os.path.expanduser("~"), ".hermes")
    try:
        with open(os.path.join(home, "config.yaml"), encoding="utf-8") as f:
            text = f.read(1 << 20)
        from ruamel.yaml import YAML  # this event only: off every other hook's path

        config = msgspec.convert(YAML(typ="safe", pure=True).load(text) or {}, _Config)
    except Exception:  # missing, unreadable, not YAML, not a mapping: nothing to say
        return None, None
    parent = config.model.get("default") if isinstance(config.model, dict) else config.model
    child = config.delegation.model if config.delegation else None
    return as_text(parent) or None, as_text(child) or None


def tool_call(
    name: str, data: dict[str, Any], call_id: str | None, cwd: str, *, before: bool = False
) -> ev.ToolCall:
    """A tool call; ``before`` (a before-tool) reads a spawn's model from the configuration."""
    kind: ev.ToolKind = TOOLS.get(name, "other")
    if name.startswith("mcp_"):  # tools/mcp_tool.py: mcp_<server>_<tool>
        kind = "mcp"
    command = as_text(data.get("command") or data.get("code")) if kind == "shell" else None
    paths: tuple[str, ...] = ()
    if kind in ("edit", "read"):
        found = as_text(data.get("path"))
        paths = (absolute(cwd, found),) if found else ()
    children: tuple[ev.Spawn, ...] = ()
    if name == SPAWN_TOOL and spawns(data):
        child_model = models()[1] if before else None
        tasks = data.get("tasks")
        if isinstance(tasks, str):  # delegate_tool.py recovers a JSON-encoded list too
            try:
                tasks = _ANY.decode(tasks)
            except (msgspec.DecodeError, RecursionError):
                tasks = None
        # A non-empty list is a batch; anything else is the one ``goal`` (delegate_task).
        batch = tasks if isinstance(tasks, list) and tasks else [data]
        items = [t for t in batch if isinstance(t, dict)]
        children = tuple(
            ev.Spawn(model=child_model, prompt=as_text(t.get("goal")),
                     description=as_text(t.get("context")))
            for t in items
        )  # fmt: skip
    return ev.ToolCall(name=name, kind=kind, input=data, call_id=call_id, command=command,
                       paths=paths, spawns=children)  # fmt: skip


def _agent(session: str, extra: dict[str, Any]) -> ev.Agent:
    """A child's own calls carry its session and ``task_id`` = its subagent id
    (delegate_tool.py:1118); its lifecycle ones say ``platform: subagent``. An agent is
    named by its session, as ``subagent_start``/``subagent_stop`` name the child."""
    task = as_text(extra.get("task_id")) or ""
    if task.startswith("sa-") or extra.get("platform") == "subagent":
        return ev.Agent(role="subagent", id=session or None)
    return ev.MAIN


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    n = _DECODER.decode(data)
    name = n.hook_event_name or native
    if not name:
        raise DecodeError("hermes", "no hook_event_name and no --event given")
    x = n.extra
    common: dict[str, Any] = {
        "host": "hermes", "native": name, "session_id": n.session_id, "cwd": n.cwd,
        "agent": _agent(n.session_id, x), "model": as_text(x.get("model")),
        "turn_id": as_text(x.get("turn_id") or x.get("parent_turn_id")), "raw": msgspec.Raw(data),
    }  # fmt: skip
    kind = KIND_OF.get(name, "other")
    if kind in ("before-tool", "after-tool"):
        if not n.tool_name:
            raise DecodeError("hermes", f"a {name} without tool_name")
        args = n.tool_input if isinstance(n.tool_input, dict) else {}
        before = kind == "before-tool"
        tool = tool_call(n.tool_name, args, as_text(x.get("tool_call_id")), n.cwd, before=before)
        if before:
            if tool.spawns:
                common["model"] = models()[0]
            return ev.BeforeTool(**common, tool=tool)
        result = as_text(x.get("result"))
        error = as_text(x.get("error_message")) or None
        if error is None and x.get("status") not in (None, "ok"):
            error = as_text(x.get("error_type")) or str(x.get("status"))
        duration = x.get("duration_ms")
        changes = tuple(ev.FileChange(action="update", path=p) for p in tool.paths
                        if tool.kind == "edit" and error is None)  # fmt: skip
        response = msgspec.Raw(msgspec.json.encode(result))
        duration = duration if isinstance(duration, int | float) else None
        return ev.AfterTool(**common, tool=tool, response=response, output=ev.head(result),
                            error=error, changes=changes, duration_ms=duration)  # fmt: skip
    if name == "pre_llm_call":
        prompt = as_text(x.get("user_message")) or ""
        if x.get("is_first_turn") is True:
            return ev.SessionStart(**common, source="startup")
        return ev.PromptSubmit(**common, prompt=prompt)
    if kind in ("subagent-start", "subagent-stop"):
        # The envelope's session is the parent's; a nested parent is a subagent itself.
        nested = bool(x.get("parent_subagent_id"))
        common["agent"] = ev.Agent(role="subagent", id=n.session_id) if nested else ev.MAIN
        child_id = as_text(x.get("child_session_id"))
        child = ev.Agent(role="subagent", id=child_id, parent_id=n.session_id or None)
        if kind == "subagent-start":
            return ev.SubagentStart(**common, child=child)
        return ev.SubagentStop(**common, child=child, status=as_text(x.get("child_status")),
                               final_text=ev.tail(as_text(x.get("child_summary"))))  # fmt: skip
    if kind == "stop":
        return ev.Stop(**common, last_message=as_text(x.get("final_response")))
    if kind == "session-end":
        reason = "interrupted" if x.get("interrupted") is True else "other"
        return ev.SessionEnd(**common, reason=reason)
    return ev.Other(**common)


# -- encode ----------------------------------------------------------------------------


def encode(name: str, reply: Reply) -> Encoded:
    out: dict[str, Any] = {}
    drop = Drops("hermes", name)
    if name == "pre_tool_call":
        block = None
        if reply.decision in ("deny", "ask"):
            block = reply.reason.strip() or DENIED
            if reply.decision == "ask":
                drop("decision", "Hermes hooks cannot ask: the call was blocked instead")
        elif reply.decision == "allow":
            drop("decision", "Hermes hooks cannot grant: allow is no opinion")
        if reply.updated_input is not None and block is None:
            out["args"] = reply.updated_input  # the plugin's modify, where Hermes has one
        block = blocked_instead(reply, drop, block, host="Hermes 0.19.0", blocks=True)
        if block is not None:  # always, with a rewrite: it blocks where modify is unknown
            out["action"], out["message"] = "block", block
    else:
        for field in ("decision", "updated_input", "halt"):
            if getattr(reply, field) is not None:
                drop(field, "Hermes reads no decision from this event")
    if reply.context:
        if name == "pre_llm_call":
            out["context"] = reply.context
        else:
            drop("context", "only pre_llm_call adds context the model reads")
    if reply.keep_working is not None:
        if name == "pre_verify":
            out["action"], out["message"] = "continue", reply.keep_working.strip() or BLOCKED
        else:
            drop("keep_working", "only pre_verify can keep Hermes working")
    if reply.message:
        drop("message", "Hermes shows hook output to no one")
    stdout = msgspec.json.encode(out) + b"\n" if out else b""
    return Encoded(output=HookOutput(stdout=stdout), dropped=drop.parts)


SPAWN_HINT = (
    "Do the work in this session, or ask the user to lower or unset delegation.model in "
    "Hermes's config.yaml."
)
#: delegate_task takes no model: every delegate runs on delegation.model, or on the parent
#: when that is unset, so no retry can help.
SPAWN_RULES = (SpawnRules(correction="block", block_hint=SPAWN_HINT),)


def capabilities(native: str) -> Capabilities:
    return Capabilities(
        decide=native == "pre_tool_call",
        halt=native == "pre_tool_call",
        context=native == "pre_llm_call",
        keep_working=native == "pre_verify",
        spawn_rules=SPAWN_RULES,
        spawn_knows_parent=True,  # a spawning call's before-tool names both models
    )


class HermesDriver(BaseDriver):
    name = "hermes"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    mcp_prefix = "mcp_"
    samples = "hookbus.hosts.hermes.samples"

    def mcp_tool_prefix(self, server: str) -> str:
        return f"mcp_{server}_"  # tools/mcp_tool.py: mcp_{server}_{tool}

    def natives(self, kind: str, named: tuple[str, ...] = ()) -> tuple[str, ...]:
        found = super().natives(kind, named)
        native = ALSO.get(kind)
        if native and (not named or native in named) and native not in found:
            found = (native, *found)
        return found

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)


driver = HermesDriver()
