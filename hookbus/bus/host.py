"""The shapes that cross module lines, each named once.

A leaf: it imports nothing of hookbus at run time (events and replies are named for the
type checker only), so every layer may use it.
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal, Protocol

import msgspec

from hookbus.bus.output import HookOutput

if TYPE_CHECKING:
    from hookbus.bus.events import Event
    from hookbus.bus.replies import Reply
    from hookbus.hosts.shared.facts import HostFacts

__all__ = [
    "Capabilities", "Driver", "Dropped", "Encoded", "HookOutput", "HostReaders", "ToolRoute",
    "TranscriptFacts",
]  # fmt: skip

#: Bytes a transcript reader reads, at most, from the end of a transcript file.
TRANSCRIPT_TAIL = 256 * 1024


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
    facts: "HostFacts"
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
