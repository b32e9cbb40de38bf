"""The Kiro driver: the Kiro CLI's agent-config hooks and the hook files of the Kiro IDE
(and of the CLI's V3 sessions), one host with three payload shapes and one reply.

Contract (verified from the published docs and third-party captures, not in the real
program; sources in ``docs/hosts/kiro.md``):

- **CLI agent config** (``hooks`` in ``.kiro/agents/*.json``; kiro.dev/docs/cli/hooks):
  camelCase events (``agentSpawn``, ``userPromptSubmit``, ``preToolUse``, ``postToolUse``,
  ``stop``), stdin ``{hook_event_name, cwd, prompt?, tool_name?, tool_input?,
  tool_response: {success, result: [...]}}``. MCP tools are named ``@server/tool``.
- **Hook files** (``.kiro/hooks/*.json``, ``{"version": "v1", "hooks": [...]}``: IDE 1.x
  and CLI V3; kiro.dev/docs/cli/v3/hooks, awslabs/aidlc-workflows captures): PascalCase
  triggers, stdin ``{session_id, hook_event_name, cwd, tool_name, tool_input,
  tool_response}`` with ``tool_response`` a string of prose and no success flag; a
  PostToolUse ``tool_input`` is often ``{}``, the edited path then only in the prose.
- **IDE 0.x** (``.kiro/hooks/*.kiro.hook``): the payload is the ``USER_PROMPT``
  environment variable, camelCase ``{toolName, toolArgs, toolResult, toolSuccess}``,
  naming no event (the command's ``--event`` does), and stdin is opened but never
  closed: :mod:`hookbus.runtime.intake` reads the variable and never waits on stdin.

There is no JSON reply anywhere: exit 0 with stdout adds context (agentSpawn,
userPromptSubmit, SessionStart, UserPromptSubmit only); exit 2 with the reason on
**stderr** blocks a pre-tool call (stdout and JSON decisions are ignored there); any
other exit code is a warning and the tool runs. So hookbus answers exit 0 or 2 only
(exit 1 would also be read by the installed command as "hookbus is gone").
"""

import re
from typing import Any, Literal

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.errors import DecodeError
from hookbus.bus.host import Capabilities, Encoded, ToolRoute
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import DENIED, Reply
from hookbus.hosts.kiro.facts import FACTS
from hookbus.hosts.shared.driver import BaseDriver, Drops, absolute, as_text, decoder

# -- native events ---------------------------------------------------------------------

#: The CLI's agent-config events (kiro.dev/docs/cli/hooks), camelCase.
CLI_EVENTS = ("agentSpawn", "userPromptSubmit", "preToolUse", "postToolUse", "stop")
#: The hook files' triggers hookbus registers (IDE 1.x, CLI V3), PascalCase. The file
#: and spec triggers (PostFileSave, PreTaskExec ...) carry no tool call and their
#: payloads are undocumented: not registered.
FILE_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop")
ALL_EVENTS = (*CLI_EVENTS, *FILE_EVENTS)

KIND_OF: dict[str, str] = {
    "agentSpawn": "session-start", "SessionStart": "session-start",
    "userPromptSubmit": "prompt-submit", "UserPromptSubmit": "prompt-submit",
    "preToolUse": "before-tool", "PreToolUse": "before-tool",
    "postToolUse": "after-tool", "PostToolUse": "after-tool",
    "stop": "stop", "Stop": "stop",
}  # fmt: skip
TOOL_EVENTS = frozenset(n for n, k in KIND_OF.items() if k in ("before-tool", "after-tool"))


class CliResponse(msgspec.Struct):
    """The CLI's ``tool_response``."""

    success: bool = True
    result: Any = None


class Native(msgspec.Struct, kw_only=True):
    """Every field of the three shapes, defaulted; unknown keys are ignored."""

    hook_event_name: str | None = None
    session_id: str = ""
    cwd: str = ""
    prompt: str | None = None
    tool_name: str | None = None
    tool_input: Any = None
    tool_response: Any = None
    # IDE 0.x, in USER_PROMPT
    toolName: str | None = None
    toolArgs: Any = None
    toolResult: Any = None
    toolSuccess: bool | None = None


# -- tools -----------------------------------------------------------------------------

#: Built-in tool ids, exactly: the CLI's current names (kiro.dev/docs/cli/reference/
#: built-in-tools: ``read``, ``write``, ``shell`` ...), the Amazon Q lineage ones the docs'
#: matcher examples use (``fs_write``, ``execute_bash``), and the IDE's (captures). An
#: anchored matcher of these never catches an MCP tool such as ``@notes/read_page``.
TOOLS: dict[str, ev.ToolKind] = {
    **dict.fromkeys(("shell", "execute_bash", "execute_pwsh"), "shell"),
    **dict.fromkeys(("write", "fs_write", "fs_append", "str_replace", "delete_file"), "edit"),
    **dict.fromkeys(("read", "fs_read"), "read"),
    **dict.fromkeys(("web_fetch", "web_search"), "web"),
    "invoke_sub_agent": "agent",
}  # fmt: skip
#: IDE 1.x names a delegation after the agent (``subagent_code-investigator``).
SUBAGENT_PREFIX = "subagent_"
#: What is not a spawn despite the prefix: the IDE's reply channel.
NOT_SPAWNS = frozenset({"subagent_response"})
#: The path an IDE edit result names (``Created the src/a.ts file.``, ``Replaced text in
#: src/a.ts``, ``Appended the text to the src/a.ts file.``; aidlc-workflows captures).
_PROSE_PATH = re.compile(
    r"^(?:Created the (?P<add>.+) file\.|Replaced text in (?P<update>.+?)\.?"
    r"|Appended the text to the (?P<append>.+) file\.)\s*$"
)


def tool_kind(name: str) -> tuple[ev.ToolKind, str | None]:
    """A tool name's kind, and its MCP server (``@git/status`` is server ``git``)."""
    if name.startswith("@") and "/" in name:
        return "mcp", name[1:].split("/", 1)[0]
    if name.startswith(SUBAGENT_PREFIX) and name not in NOT_SPAWNS:
        return "agent", None
    return TOOLS.get(name, "other"), None


def _paths(data: dict[str, Any]) -> list[str]:
    found = [data.get("path"), data.get("file_path")]
    operations = data.get("operations")  # the CLI's read: [{mode, path}, ...]
    if isinstance(operations, list):
        found += [op.get("path") for op in operations if isinstance(op, dict)]
    return [p for p in found if isinstance(p, str) and p]


def tool_call(name: str, data: dict[str, Any], cwd: str) -> ev.ToolCall:
    kind, server = tool_kind(name)
    paths = tuple(absolute(cwd, p) for p in _paths(data)) if kind in ("edit", "read") else ()
    spawns: tuple[ev.Spawn, ...] = ()
    if kind == "agent":
        agent = name.removeprefix(SUBAGENT_PREFIX) if name.startswith(SUBAGENT_PREFIX) else None
        # {prompt, explanation}: IDE 1.0.309 (aidlc-workflows #763, reported).
        spawns = (ev.Spawn(agent_type=agent, prompt=as_text(data.get("prompt")),
                           description=as_text(data.get("explanation"))),)  # fmt: skip
    return ev.ToolCall(name=name, kind=kind, mcp_server=server, input=data,
                       command=as_text(data.get("command")) if kind == "shell" else None,
                       paths=paths, spawns=spawns)  # fmt: skip


def _result(value: object) -> tuple[str | None, bool]:
    """(the text the model read, whether the tool succeeded) of a ``tool_response``."""
    if isinstance(value, dict):
        response = msgspec.convert(value, CliResponse)
        parts = response.result if isinstance(response.result, list) else [response.result]
        text = "\n".join(p if isinstance(p, str) else msgspec.json.encode(p).decode()
                         for p in parts if p is not None)  # fmt: skip
        return text or None, response.success
    return as_text(value), True


def _changes(tool: ev.ToolCall, output: str | None, cwd: str) -> tuple[ev.FileChange, ...]:
    """What an edit changed: its input's path, else the path the result's prose names."""
    if tool.kind != "edit":
        return ()
    if tool.name == "delete_file":
        return tuple(ev.FileChange(action="delete", path=p) for p in tool.paths)
    action: Literal["add", "update"] = "add" if tool.input.get("command") == "create" else "update"
    if tool.paths:
        return tuple(ev.FileChange(action=action, path=p) for p in tool.paths)
    found = _PROSE_PATH.match(output or "")
    if found is None:
        return ()
    path = found["add"] or found["update"] or found["append"]
    return (ev.FileChange(action="add" if found["add"] else "update", path=absolute(cwd, path)),)


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    n = decoder(Native).decode(data)
    name = n.hook_event_name or native
    if not name:
        raise DecodeError("kiro", "no hook_event_name and no --event given")
    kind = KIND_OF.get(name, "other")
    common: dict[str, Any] = {"host": "kiro", "native": name, "session_id": n.session_id,
                              "cwd": n.cwd, "raw": msgspec.Raw(data)}  # fmt: skip
    if kind == "session-start":
        return ev.SessionStart(**common)
    if kind == "prompt-submit":
        return ev.PromptSubmit(**common, prompt=n.prompt or "")
    if kind == "stop":
        return ev.Stop(**common)
    if kind not in ("before-tool", "after-tool"):
        return ev.Other(**common)
    tool_name = n.tool_name or n.toolName
    if not tool_name:
        raise DecodeError("kiro", f"{name} without a tool name", "tool_name")
    args = n.tool_input if n.tool_input is not None else n.toolArgs
    tool = tool_call(tool_name, args if isinstance(args, dict) else {}, n.cwd)
    if kind == "before-tool":
        return ev.BeforeTool(**common, tool=tool)
    response = n.tool_response if n.tool_response is not None else n.toolResult
    output, ok = _result(response)
    if n.toolSuccess is not None:
        ok = n.toolSuccess
    error = None if ok else output or "failed"
    changes = _changes(tool, output, n.cwd) if ok else ()
    return ev.AfterTool(**common, tool=tool, response=msgspec.Raw(msgspec.json.encode(response)),
                        output=ev.head(output), error=error, changes=changes)  # fmt: skip


# -- encode: what each event reads -----------------------------------------------------

#: Exit 2 with the reason on stderr blocks the call (the CLI: preToolUse only).
BLOCKS = frozenset({"preToolUse", "PreToolUse"})
#: Exit 0 stdout is added to the agent's context.
CONTEXT = frozenset({"agentSpawn", "userPromptSubmit", "SessionStart", "UserPromptSubmit"})
PROMPTS = frozenset({"userPromptSubmit", "UserPromptSubmit"})


def encode(name: str, reply: Reply) -> Encoded:
    drop = Drops("kiro", name)
    reason = reply.reason.strip() or DENIED
    context = [reply.context] if reply.context else []
    refused = reply.decision in ("deny", "ask") and name in BLOCKS
    if refused:
        if reply.decision == "ask":
            drop("decision", "Kiro hooks cannot ask; the ask became a block")
    elif reply.decision == "deny" and name in PROMPTS:
        # Whether an exit 2 refuses the prompt is not documented: tell the model instead.
        context.insert(0, reason)
        drop("decision", "Kiro hooks cannot refuse a prompt; the reason was added as context")
    elif reply.decision:
        drop("decision", f"{reply.decision} has no effect: Kiro hooks can only block a tool")
    if reply.updated_input is not None:
        drop("updated_input", "Kiro hooks cannot rewrite a tool's input")
    if reply.keep_working is not None:
        drop("keep_working", "Kiro's stop hooks cannot keep the agent working")
    if reply.halt is not None:
        drop("halt", "Kiro hooks cannot stop the agent")
    if reply.message:
        drop("message", "Kiro shows a hook's output to the user only as a failure warning")
    if refused:
        # The model reads stderr on a block, so context goes with the reason.
        stderr = "\n\n".join([reason, *context]) + "\n"
        return Encoded(output=HookOutput(stderr=stderr.encode(), exit_code=2),
                       dropped=drop.parts)  # fmt: skip
    if context and name not in CONTEXT:
        drop("context", "Kiro adds a hook's output to the context only on session start "
             "and prompt submit")  # fmt: skip
        context = []
    stdout = ("\n\n".join(context) + "\n").encode() if context else b""
    return Encoded(output=HookOutput(stdout=stdout), dropped=drop.parts)


def capabilities(native: str) -> Capabilities:
    return Capabilities(decide=native in BLOCKS, context=native in CONTEXT)


class KiroDriver(BaseDriver):
    name = "kiro"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    mcp_prefix = "@"
    samples = "hookbus.hosts.kiro.samples"
    after_edit_from = ("postToolUse", "PostToolUse")

    def mcp_tool_prefix(self, server: str) -> str:
        return f"@{server}/"

    def tool_route(self, patterns: tuple[str, ...]) -> ToolRoute | None:
        # The IDE's delegations are named after their agent: a prefix, not a name (and
        # one that is known, so not an "other" tool).
        route = super().tool_route(patterns)
        if route is None:
            return None
        prefixes = (*route.prefixes, SUBAGENT_PREFIX) if "agent" in patterns else route.prefixes
        known = (*route.known_prefixes, SUBAGENT_PREFIX) if route.unknown else ()
        return msgspec.structs.replace(route, prefixes=prefixes, known_prefixes=known)

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)


driver = KiroDriver()
