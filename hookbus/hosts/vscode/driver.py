"""VS Code agent hooks: the hooks VS Code's own agent (the Local harness of Copilot Chat)
runs, configured in ``.github/hooks/*.json``. Not Copilot CLI (``copilot``), whose files
VS Code also reads.

Contract (verified from the contract, not in the real program): the hooks page and hooks
reference of code.visualstudio.com (``docs/agent-customization/hooks.md``,
``docs/agents/reference/hooks-reference.md`` in microsoft/vscode-docs), and the source of
microsoft/vscode-copilot-chat (``src/platform/chat/node/hookExecutor.ts`` @573d2df,
``src/platform/chat/common/chatHookService.ts`` @02640c4, ``tools/common/toolNames.ts``
@1c52dab). Eight PascalCase events. stdin mixes casings: ``sessionId`` and
``hookEventName`` beside Claude's ``transcript_path``, ``tool_name`` and ``tool_input``,
and an ISO ``timestamp``. VS Code *ignores matchers* and runs every hook on every tool
call, so hookbus filters on ``tool_name`` itself (the subscription index).

Replies are Claude's shapes (:mod:`hookbus.hosts.shared.claude_style`): exit 0 with JSON on
stdout. Exit 2 blocks with stderr as the reason; any other exit, a timeout (30 s by
default: SIGTERM, SIGKILL 5 s later) or a crash is a warning and the call proceeds;
stdout that is not JSON is logged and ignored. ``continue: false`` stops the agent, so a
single tool is refused with ``permissionDecision: "deny"``. This driver only ever
answers exit 0.
"""

from typing import Any, ClassVar

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.errors import DecodeError
from hookbus.bus.host import Capabilities, Encoded
from hookbus.bus.replies import BLOCKED, DENIED, Reply
from hookbus.hosts.shared import claude_style as cs
from hookbus.hosts.shared.driver import BaseDriver, Drops, as_text, decoder, iso_seconds
from hookbus.hosts.vscode.facts import FACTS

# -- native events ---------------------------------------------------------------------

#: The eight events of the hooks reference (``ChatHookType`` of the proposed API).
ALL_EVENTS = (
    "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact",
    "SubagentStart", "SubagentStop", "Stop",
)  # fmt: skip
KIND_OF: dict[str, str] = {name: cs.KIND_OF[name] for name in ALL_EVENTS}
TOOL_EVENTS = ("PreToolUse", "PostToolUse")


class Payload(cs.Native, kw_only=True):
    """Any VS Code hook input: Claude's common fields, but ``sessionId`` and
    ``hookEventName`` in camelCase, and every event's own fields, defaulted; unknown keys
    are ignored."""

    #: Claude-style fields VS Code never sends (read by :mod:`claude_style`).
    last_assistant_message: ClassVar[None] = None
    agent_transcript_path: ClassVar[None] = None

    session_id: str = msgspec.field(name="sessionId")
    hook_event_name: str | None = msgspec.field(default=None, name="hookEventName")
    timestamp: str | None = None
    tool_name: str = ""
    tool_input: dict[str, Any] = msgspec.field(default_factory=dict)
    tool_use_id: str | None = None
    #: "The text representation of the tool's output" (``executePostToolUseHook``).
    tool_response: msgspec.Raw = msgspec.Raw(b"null")
    prompt: str = ""
    #: "Currently always new": a session VS Code starts is a fresh one.
    source: str = "new"
    stop_hook_active: bool = False
    trigger: str = "auto"
    custom_instructions: str | None = None


_TEXT = msgspec.json.Decoder(str | None)


# -- tools -----------------------------------------------------------------------------

#: Copilot Chat's tool ids (``ToolName``), and the ``copilot_*`` names the same tools are
#: contributed under (``ContributedToolName``); the docs' FAQ names ``create_file`` and
#: ``replace_string_in_file``. Every other tool is ``other``.
TOOLS: dict[str, ev.ToolKind] = {
    "run_in_terminal": "shell",
    **dict.fromkeys((
        "create_file", "replace_string_in_file", "multi_replace_string_in_file",
        "insert_edit_into_file", "apply_patch", "edit_notebook_file", "edit_files",
        "copilot_createFile", "copilot_replaceString", "copilot_multiReplaceString",
        "copilot_insertEdit", "copilot_applyPatch", "copilot_editNotebook", "copilot_editFiles",
    ), "edit"),
    **dict.fromkeys((
        "read_file", "list_dir", "file_search", "grep_search", "semantic_search", "get_errors",
        "get_changed_files", "read_project_structure", "search_workspace_symbols",
        "list_code_usages", "read_notebook_cell_output", "test_search",
        "copilot_readFile", "copilot_listDirectory", "copilot_findFiles",
        "copilot_findTextInFiles", "copilot_searchCodebase", "copilot_getErrors",
        "copilot_getChangedFiles",
    ), "read"),
    **dict.fromkeys(("fetch_webpage", "github_repo", "open_simple_browser",
                     "copilot_fetchWebPage", "copilot_githubRepo"), "web"),
    "runSubagent": "agent",
}  # fmt: skip
#: VS Code names an MCP tool ``mcp_<server>_<tool>``, the server's label lower-cased,
#: runs of other characters than ``[a-z0-9_.-]`` as ``_``, cut so that the prefix is at
#: most 18 characters (``McpPrefixGenerator`` in microsoft/vscode ``mcpServer.ts``).
MCP_PREFIX = "mcp_"
_MCP_PREFIX_MAX = 18
#: Where each edit tool's input names its file (camelCase: the docs' FAQ says
#: ``tool_input.filePath``; ``IReplaceStringToolParams`` and its siblings).
_PATH_KEYS = ("filePath", "path")
#: apply_patch's ``input`` is a patch naming each file it touches on a line of its own.
_PATCH_FILE = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


def _paths(name: str, data: dict[str, Any]) -> tuple[str, ...]:
    if name in ("apply_patch", "copilot_applyPatch"):
        patch = as_text(data.get("input")) or ""
        lines = (line.strip() for line in patch.splitlines())
        return tuple(line.partition(": ")[2] for line in lines if line.startswith(_PATCH_FILE))
    if name in ("multi_replace_string_in_file", "copilot_multiReplaceString"):
        edits = data.get("replacements")
        found = [as_text(e.get("filePath")) for e in edits if isinstance(e, dict)] if isinstance(
            edits, list) else []  # fmt: skip
        return tuple(dict.fromkeys(p for p in found if p))
    return tuple(p for k in _PATH_KEYS if isinstance(p := data.get(k), str))


def tool_call(native: Payload) -> ev.ToolCall:
    name, data = native.tool_name, native.tool_input
    kind: ev.ToolKind = TOOLS.get(name, "other")
    server = None
    if name.startswith(MCP_PREFIX):
        # The server's first word: a label with "_" in it, or cut short, reads shorter.
        kind, server = "mcp", name[len(MCP_PREFIX) :].partition("_")[0]
    # runSubagent's input (IRunSubagentToolInputParams): prompt, description, agentName.
    spawn = ev.Spawn(agent_type=as_text(data.get("agentName")), model=as_text(data.get("model")),
                     prompt=as_text(data.get("prompt")),
                     description=as_text(data.get("description")))  # fmt: skip
    return ev.ToolCall(name=name, kind=kind, mcp_server=server, input=data,
                       call_id=native.tool_use_id,
                       command=as_text(data.get("command")) if kind == "shell" else None,
                       paths=_paths(name, data) if kind in ("edit", "read") else (),
                       spawns=(spawn,) if kind == "agent" else ())  # fmt: skip


def _output(response: msgspec.Raw) -> str | None:
    try:
        return ev.head(_TEXT.decode(response))
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return ev.head(bytes(response).decode(errors="replace"))


# -- decode ----------------------------------------------------------------------------


def decode(data: bytes, native: str | None = None) -> ev.Event:
    n = decoder(Payload).decode(data)
    name = n.hook_event_name or native
    if not name:
        raise DecodeError("vscode", "no hookEventName and no --event given")
    kind = KIND_OF.get(name, "other")
    if name in TOOL_EVENTS and not n.tool_name:
        raise DecodeError("vscode", f"{name} without a tool name", "tool_name")
    common = cs.common("vscode", name, n, data, main=ev.MAIN)
    common["timestamp"] = iso_seconds(n.timestamp)
    if kind == "session-start":
        return ev.SessionStart(**common, source="startup" if n.source == "new" else n.source)
    if name == "PostToolUse":  # "after a tool completes successfully"
        tool = tool_call(n)
        changes = tuple(ev.FileChange(action="update", path=p) for p in tool.paths
                        if tool.kind == "edit")  # fmt: skip
        return ev.AfterTool(**common, tool=tool, response=n.tool_response,
                            output=_output(n.tool_response), changes=changes)  # fmt: skip
    return cs.event(kind, common, n, tool_call)


# -- encode ----------------------------------------------------------------------------

#: ``hookSpecificOutput.additionalContext`` is read (hooks reference, per event).
CONTEXT = {"SessionStart", "PreToolUse", "PostToolUse", "SubagentStart"}


def _decision(name: str, reply: Reply, out: dict[str, Any], hso: dict[str, Any],
              drop: Drops) -> None:  # fmt: skip
    decision, reason = reply.decision, reply.reason
    if name == "Stop" and reply.keep_working is not None:
        # The hooks reference nests Stop's decision in hookSpecificOutput; the extension's
        # own StopHookOutput types it at the top level, where claude_style writes it too.
        # Which one VS Code reads is not confirmed: both are sent.
        hso["decision"], hso["reason"] = "block", reply.keep_working
    if decision is None:
        return
    if name == "PreToolUse":
        hso["permissionDecision"] = decision
        if reason or decision == "deny":
            hso["permissionDecisionReason"] = reason or DENIED
    elif decision == "allow":
        pass  # going on is the default of every other event
    elif name == "PostToolUse":
        if decision == "ask":
            drop("decision", "no ask here; blocked instead")
        out["decision"], out["reason"] = "block", reason or BLOCKED
    elif name == "UserPromptSubmit":
        # No block of one prompt (common output only): continue: false, which stops the
        # agent session (the hooks page), is the nearest; a halt's own reason, when the
        # reply has one, replaces this one.
        drop("decision", f"no {decision} of a prompt here; the request is stopped instead")
        out["continue"], out["stopReason"] = False, reason or BLOCKED
    else:
        drop("decision", f"{decision} has no effect on this event")


RULES = cs.Rules(host="vscode", title="VS Code", context=CONTEXT, silent=frozenset(),
                 unread_message="", unread_halt="")  # fmt: skip


def encode(name: str, reply: Reply) -> Encoded:
    return cs.encode(RULES, name, reply, _decision)


def capabilities(native: str) -> Capabilities:
    return Capabilities(
        decide=native in ("PreToolUse", "PostToolUse", "UserPromptSubmit"),
        ask=native == "PreToolUse",
        rewrite_input=native == "PreToolUse",
        context=native in CONTEXT,
        user_message=True,
        keep_working=native in cs.STOPS,
        halt=True,
    )


class VscodeDriver(BaseDriver):
    name = "vscode"
    facts = FACTS
    events = ALL_EVENTS
    kinds = KIND_OF
    tools = TOOLS
    mcp_prefix = MCP_PREFIX
    samples = "hookbus.hosts.vscode.samples"
    after_edit_from = ("PostToolUse",)

    def mcp_tool_prefix(self, server: str) -> str:
        import re  # a route is compiled at install, never on a hook's path

        safe = re.sub(r"[^a-z0-9_.-]+", "_", server.lower())
        return f"{MCP_PREFIX}{safe[: _MCP_PREFIX_MAX - len(MCP_PREFIX) - 1]}_"

    decode_payload = staticmethod(decode)
    encode = staticmethod(encode)
    capabilities = staticmethod(capabilities)


driver = VscodeDriver()
