"""Portable events: one tagged union of frozen Structs that every driver decodes into.

Every event carries the same context (host, native name, session, cwd, transcript, the
agent it runs in, the active model, the raw payload). What differs per kind is a few
typed fields. Hosts add fields all the time: drivers tolerate unknown keys, and every
field here that a host may omit has a default, so old handlers keep working.
"""

from typing import Literal

import msgspec

Kind = Literal[
    "session-start",
    "prompt-submit",
    "before-tool",
    "after-tool",
    "after-edit",
    "stop",
    "subagent-start",
    "subagent-stop",
    "pre-compact",
    "session-end",
    "model-switch",
    "other",
]
KINDS: frozenset[str] = frozenset(Kind.__args__)  # type: ignore[attr-defined]

ToolKind = Literal["shell", "edit", "read", "web", "agent", "mcp", "other"]
TOOL_KINDS: frozenset[str] = frozenset(ToolKind.__args__)  # type: ignore[attr-defined]

#: Cap on a subagent's final text carried by subagent-stop (the tail is what matters:
#: the report lines sit at the end).
FINAL_TEXT_TAIL = 4096
#: Cap on a tool's output carried by after-tool (the head: what the model read first).
OUTPUT_HEAD = 16384


AgentRole = Literal["main", "subagent", "unknown"]


class Agent(msgspec.Struct, frozen=True, kw_only=True):
    """The agent an event runs in: the main thread, a subagent, or ``unknown`` where the
    host does not say (Gemini's subagent tool calls carry no marker: a filter
    ``agents="main"`` must not match them)."""

    role: AgentRole = "main"
    id: str | None = None
    type: str | None = None
    #: The agent that spawned this one, where the host says.
    parent_id: str | None = None

    @property
    def is_subagent(self) -> bool:
        return self.role == "subagent"


MAIN = Agent()
UNKNOWN = Agent(role="unknown")


class Spawn(msgspec.Struct, frozen=True, kw_only=True):
    """One child an agent-spawn tool call asks for (some hosts spawn several at once)."""

    agent_type: str | None = None
    #: The model the call requests for the child, if any (else it inherits or defaults).
    model: str | None = None
    prompt: str | None = None
    description: str | None = None


class ToolCall(msgspec.Struct, frozen=True, kw_only=True):
    """One tool call as the host describes it, with a portable kind.

    ``command`` and ``paths`` are filled by the driver from the host's own input schema,
    so a portable handler need not know that Claude says ``file_path`` and Copilot
    ``path``.
    """

    name: str
    kind: ToolKind = "other"
    mcp_server: str | None = None
    input: dict[str, object] = msgspec.field(default_factory=dict)
    call_id: str | None = None
    command: str | None = None
    paths: tuple[str, ...] = ()
    #: What an agent-spawn call asks for (kind ``agent``), one entry per child.
    spawns: tuple[Spawn, ...] = ()

    def matches(self, pattern: str) -> bool:
        """True when this call matches tool pattern ``pattern``: a kind (``any``, ``shell``),
        ``mcp:<server>``, or ``name:<native tool name>``."""
        if pattern in ("any", self.kind):
            return True
        if pattern.startswith("mcp:"):
            return self.kind == "mcp" and self.mcp_server == pattern[4:]
        if pattern.startswith("name:"):
            return self.name == pattern[5:]
        return False


class FileChange(msgspec.Struct, frozen=True, kw_only=True):
    """A file touched by an edit tool."""

    action: Literal["add", "update", "delete", "move"]
    path: str
    from_path: str | None = None


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind"):
    """The context every portable event carries."""

    host: str
    native: str
    session_id: str = ""
    cwd: str = ""
    transcript_path: str | None = None
    agent: Agent = MAIN
    model: str | None = None
    #: When the host says the event happened, in seconds since the epoch.
    timestamp: float | None = None
    #: The turn (one user prompt and what follows) the event belongs to.
    turn_id: str | None = None
    raw: msgspec.Raw = msgspec.Raw(b"{}")

    @property
    def kind(self) -> Kind:
        return self.__struct_config__.tag  # type: ignore[return-value]


class SessionStart(Event, tag="session-start", frozen=True, kw_only=True):
    """A session started, resumed, was cleared, compacted or forked."""

    source: str = "startup"


class PromptSubmit(Event, tag="prompt-submit", frozen=True, kw_only=True):
    """The user submitted a prompt, before the model sees it."""

    prompt: str = ""


class BeforeTool(Event, tag="before-tool", frozen=True, kw_only=True):
    """A tool call is about to run: it may be allowed, denied, asked about or rewritten."""

    tool: ToolCall


class AfterTool(Event, tag="after-tool", frozen=True, kw_only=True):
    """A tool call finished; ``error`` is set when it failed."""

    tool: ToolCall
    response: msgspec.Raw = msgspec.Raw(b"null")
    #: What the tool gave back, as text the model would read (at most 16 KiB: the head).
    output: str | None = None
    error: str | None = None
    duration_ms: float | None = None
    #: Files an edit tool changed (filled by the driver; empty for other tools).
    changes: tuple[FileChange, ...] = ()
    #: Ids of the children an agent-spawn call started (for spawn-to-child links).
    child_ids: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None


class AfterEdit(Event, tag="after-edit", frozen=True, kw_only=True):
    """Files were changed by an edit tool (derived from after-tool, or native on some hosts)."""

    tool: ToolCall | None = None
    changes: tuple[FileChange, ...] = ()


class Stop(Event, tag="stop", frozen=True, kw_only=True):
    """The main agent is about to end its turn; a reply may ask it to keep working."""

    stop_hook_active: bool = False
    last_message: str | None = None


class SubagentStart(Event, tag="subagent-start", frozen=True, kw_only=True):
    """A subagent was spawned (``child`` names it; ``agent`` is where the event runs)."""

    child: Agent
    call_id: str | None = None
    #: The model the host resolved for the child, where it says (Cursor).
    child_model: str | None = None


class Usage(msgspec.Struct, frozen=True, kw_only=True):
    """Token usage of a subagent, when the host reports it."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None


class SubagentStop(Event, tag="subagent-stop", frozen=True, kw_only=True):
    """A subagent finished; ``final_text`` is the tail (at most 4 KiB) of its last message."""

    child: Agent
    call_id: str | None = None
    final_text: str | None = None
    child_transcript_path: str | None = None
    usage: Usage | None = None
    status: str | None = None
    stop_hook_active: bool = False


class PreCompact(Event, tag="pre-compact", frozen=True, kw_only=True):
    """The conversation is about to be compacted."""

    trigger: str = "auto"
    instructions: str | None = None

    @property
    def of_subagent(self) -> bool:
        return self.agent.is_subagent


class SessionEnd(Event, tag="session-end", frozen=True, kw_only=True):
    """The session ended. Hosts give this hook very little time (Claude: 1.5 s in all)."""

    reason: str = "other"


class ModelSwitch(Event, tag="model-switch", frozen=True, kw_only=True):
    """The active model changed (``model`` is the new one)."""

    from_model: str | None = None


class Other(Event, tag="other", frozen=True, kw_only=True):
    """A native event with no portable kind; ``native`` names it and ``raw`` carries it."""


AnyEvent = (
    SessionStart
    | PromptSubmit
    | BeforeTool
    | AfterTool
    | AfterEdit
    | Stop
    | SubagentStart
    | SubagentStop
    | PreCompact
    | SessionEnd
    | ModelSwitch
    | Other
)


def tail(text: str | None, limit: int = FINAL_TEXT_TAIL) -> str | None:
    """The last ``limit`` bytes of ``text`` (UTF-8), cut on a character boundary."""
    if text is None:
        return None
    data = text.encode(errors="replace")
    if len(data) <= limit:
        return text
    return data[-limit:].decode(errors="ignore")


def head(text: str | None, limit: int = OUTPUT_HEAD) -> str | None:
    """The first ``limit`` bytes of ``text`` (UTF-8), cut on a character boundary."""
    if text is None:
        return None
    data = text.encode(errors="replace")
    if len(data) <= limit:
        return text
    return data[:limit].decode(errors="ignore")
