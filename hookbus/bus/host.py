"""The shapes that cross module lines, each named once.

A leaf: it imports nothing of hookbus at run time (events and replies are named for the
type checker only), so every layer may use it.
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol

import msgspec

from hookbus.bus.output import HookOutput

if TYPE_CHECKING:
    from hookbus.bus.events import Event
    from hookbus.bus.replies import Reply

__all__ = [
    "Capabilities", "Correction", "Driver", "Dropped", "Encoded", "HookOutput", "HostReaders",
    "SpawnRules", "ToolRoute", "TranscriptFacts",
]  # fmt: skip

#: Bytes a transcript reader reads, at most, from the end of a transcript file.
TRANSCRIPT_TAIL = 256 * 1024


#: How a hook can correct an agent spawn (see :class:`SpawnRules`).
Correction = Literal["rewrite", "switch", "refuse", "block", "none"]


class SpawnRules(msgspec.Struct, frozen=True, kw_only=True):
    """How a hook can correct the child of an agent spawn on one host: its spawn tool's
    before-tool, or its subagent start. A host's driver declares them in the
    :class:`Capabilities` of the events that announce a spawn; a handler that decides
    spawns (the guard) reads them instead of testing the host's name."""

    #: rewrite: the hook sets or clears the child's model (Claude, OpenCode v2);
    #: switch: it can only run the child as another agent (OpenCode v1);
    #: refuse: it can only say no, and the agent retries (Codex, Cursor);
    #: block: it can say no, and no retry can change the model (Hermes);
    #: none: the child's model is not visible or not settable: record only (Pi).
    correction: Correction
    #: The spawn tool these rules are for ("": every spawn tool of the event); a retry
    #: names the tool the agent called, else this one.
    tool: str = ""
    #: Built-in agents that inherit the parent when the call names no model.
    inherits: frozenset[str] = frozenset()
    #: A capped child names the parent's family alias (Claude's Agent tool) or its exact id.
    alias: Literal["family", "exact"] = "exact"
    #: A refusal may ask for a retry with a model argument (Codex yes, Cursor's Task no).
    retry_model: bool = True
    #: The host's subagent-model setting (``CLAUDE_CODE_SUBAGENT_MODEL`` and its
    #: ``_FORCE`` flag) decides the model of :attr:`setting_agents` that name none.
    setting_applies: bool = False
    #: The built-in agents that run on that setting when it is set.
    setting_agents: frozenset[str] = frozenset()
    #: What a block tells the agent, where the host has its own remedy (Hermes).
    block_hint: str = ""


class Capabilities(msgspec.Struct, frozen=True, kw_only=True):
    """What a host can do with a reply to one native event. Handlers read it to choose
    (the guard rewrites where it may, refuses with a precise retry where it may not);
    drivers degrade the rest, with a diagnostic."""

    #: A decision the host acts on: allow, deny (and ask, with ``ask``).
    decide: bool = False
    ask: bool = False
    rewrite_input: bool = False
    #: A rewrite is only possible as "allow with new input": it grants permission too
    #: (Codex), so a guard that must not grant cannot rewrite.
    rewrite_grants_permission: bool = False
    #: A rewrite replaces the whole input, or is merged into it key by key.
    rewrite_mode: Literal["replace", "merge"] = "replace"
    #: A rewrite of an agent-spawn call can set the child's model.
    spawn_model: bool = False
    context: bool = False
    user_message: bool = False
    keep_working: bool = False
    halt: bool = False
    #: Characters of context or message the host keeps (longer text is cut by the merge).
    text_limit: int | None = None

    # -- what the host says of its agent spawns (handlers subscribe on these:
    # ``@handler(..., capabilities={"spawn_at_start": True})``) --------------------------

    #: How a hook can correct a spawn this event announces, per spawn tool; empty: judge
    #: from the capabilities above (a model the host shows is rewritten where that grants
    #: nothing, else refused).
    spawn_rules: tuple[SpawnRules, ...] = ()
    #: The host decides a spawn at the subagent's start, which shows the resolved model,
    #: not at its spawn tool's before-tool (Cursor's subagentStart).
    spawn_at_start: bool = False
    #: A spawn needs no remembered model of its parent: the host's spawn events carry it
    #: (Codex, Cursor, Hermes), or its spawns are only recorded (Pi).
    spawn_knows_parent: bool = False
    #: The session's model is named by its prompts, not by its start (OpenCode's
    #: chat.message; its session.created names none).
    model_on_prompt: bool = False
    #: The spawn's brief reaches the hook encrypted (Codex): its text cannot be read.
    brief_hidden: bool = False
    #: A plugin module of the host may decide spawns itself, in a session where it runs
    #: (Claude's agent.spawn).
    spawn_module: bool = False
    #: A spawn tool's ``command`` names a slash command whose subtask runs on the
    #: command's model, which the input omits (OpenCode's task).
    subtask_command: bool = False


class Dropped(msgspec.Struct, frozen=True, kw_only=True):
    """A part of a reply the merge (or a driver) had to drop, and why."""

    handler: str
    field: str
    why: str


class Encoded(msgspec.Struct, frozen=True, kw_only=True):
    """A reply in the host's native form, plus the parts the host could not take."""

    output: HookOutput
    dropped: tuple[Dropped, ...] = ()


class ToolRoute(msgspec.Struct, frozen=True, kw_only=True):
    """Which native tool names a set of tool patterns covers, for matchers and the index."""

    names: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    #: Also every tool name the driver does not know (tool kind ``other``): any name
    #: neither in ``known`` nor starting with one of ``known_prefixes``.
    unknown: bool = False
    known: tuple[str, ...] = ()
    known_prefixes: tuple[str, ...] = ()


class TranscriptFacts(msgspec.Struct, frozen=True, kw_only=True):
    """What a bounded tail of a session's transcript says (``ctx.transcript()``).

    Only the last :data:`TRANSCRIPT_TAIL` bytes are read, never the whole file, so
    "none" can only be said of a file read to its start: ``assistant_turn`` is False
    only then, and None (unknown) when the file is missing, unreadable, of a format the
    host's driver does not read, or longer than the tail with no assistant turn in it.
    """

    #: The model of the latest assistant turn; None when the tail names none.
    model: str | None = None
    #: True: an assistant turn exists; False: the whole file was read and has none yet;
    #: None: unknown.
    assistant_turn: bool | None = None


class HostReaders(Protocol):
    """What a driver reads for a handler beside the event: the project folder and the
    host's transcripts (``ctx.project_dir``, ``ctx.transcript``)."""

    def project_dir(self, event: "Event", environ: Mapping[str, str], /) -> str:
        """The project root: the host's documented variable when set to an absolute path,
        else the event's working directory, else this process's."""
        ...

    def read_transcript(self, path: str, /) -> TranscriptFacts:
        """The facts of the tail of the transcript at ``path``; never raises."""
        ...


class Driver(HostReaders, Protocol):
    """One host's codec. Each module in :mod:`hookbus.hosts` ends with ``driver = ...``;
    :class:`hookbus.hosts.shared.driver.BaseDriver` implements what every driver shares."""

    name: str
    #: Its :class:`hookbus.hosts.shared.facts.HostFacts` (typed loosely: the bus knows no
    #: host's module, not even for the type checker).
    facts: Any
    #: Every native event, in the host's own order.
    events: tuple[str, ...]

    def decode(self, data: bytes, native: str | None = None) -> "Event":
        """Native payload bytes to a portable event; raises
        :class:`hookbus.bus.errors.DecodeError`."""
        ...

    def encode(self, native: str, reply: "Reply", /) -> Encoded:
        """A merged reply to native event ``native`` as the host's stdout, stderr, exit code."""
        ...

    def no_opinion(self, native: str | None) -> HookOutput:
        """What the host reads as "no opinion" on ``native`` (its generic one if None)."""
        ...

    def refusal(self, native: str | None, reason: str) -> HookOutput:
        """A deny of ``native``, encoded without any payload (for input hookbus could not
        read, and the watchdog's fail-closed answer); the no-opinion where none exists."""
        ...

    def capabilities(self, native: str) -> Capabilities:
        """What the host does with each part of a reply to ``native``."""
        ...

    def timeout(self, native: str) -> float:
        """Seconds the host gives this event's hook before it kills it."""
        ...

    def derive(self, event: "Event") -> tuple["Event", ...]:
        """Portable events implied by ``event`` (an after-edit from an after-tool on an edit
        tool, for hosts without a native edit event)."""
        ...

    def natives(self, kind: str, named: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The native event names of portable ``kind`` to register, narrowed to ``named``
        when given (which also opts into events registered only on request)."""
        ...

    def tool_route(self, patterns: tuple[str, ...]) -> ToolRoute | None:
        """Native tool names covered by tool ``patterns``; None when they cover all."""
        ...

    def can_carry(self, native: str, route: ToolRoute | None) -> bool:
        """False when ``native`` never carries a tool that ``route`` covers."""
        ...

    def sample(
        self,
        native: str,
        *,
        tool: str | None = None,
        tool_input: dict[str, object] | None = None,
        cwd: str,
        session_id: str,
    ) -> bytes:
        """A realistic native payload of ``native``, with the fields the host really sends
        (``hookbus try`` sends it); a tool event carries ``tool`` (else the driver's
        harmless default) with ``tool_input``. ValueError naming the valid choices when
        ``native`` is not one of the host's events, or ``tool`` does not fit it."""
        ...
