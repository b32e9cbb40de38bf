"""The shapes that cross module lines, each named once."""

from typing import TYPE_CHECKING, Protocol

import msgspec

from hookbus.bus.replies import Dropped, Reply

if TYPE_CHECKING:
    from hookbus.bus.events import Event


class Capabilities(msgspec.Struct, frozen=True, kw_only=True):
    """What a host can do with a reply. Handlers read it to choose; drivers degrade the rest."""

    ask: bool = False
    rewrite_input: bool = False
    context: bool = False
    user_message: bool = False
    keep_working: bool = False
    halt: bool = False
    #: Characters of context or message the host keeps (longer text is cut by the merge).
    text_limit: int | None = None


class HookOutput(msgspec.Struct, frozen=True, kw_only=True):
    """What a hook process gives back to its host."""

    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int = 0


class Encoded(msgspec.Struct, frozen=True, kw_only=True):
    """A reply in the host's native form, plus the parts the host could not take."""

    output: HookOutput
    dropped: tuple[Dropped, ...] = ()


class ToolRoute(msgspec.Struct, frozen=True, kw_only=True):
    """Which native tool names a set of tool kinds covers, for matchers and the index."""

    names: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    #: Also every tool name the driver does not know (tool kind ``other``): any name
    #: neither in ``known`` nor starting with one of ``known_prefixes``.
    unknown: bool = False
    known: tuple[str, ...] = ()
    known_prefixes: tuple[str, ...] = ()


class Driver(Protocol):
    """One host's codec. Each module in :mod:`hookbus.drivers` ends with ``driver = ...``."""

    name: str
    capabilities: Capabilities
    no_opinion: HookOutput

    def decode(self, data: bytes, native: str | None = None) -> "Event":
        """Native stdin bytes to a portable event; raises :class:`hookbus.errors.DecodeError`."""
        ...

    def encode(self, event: "Event", reply: Reply) -> Encoded:
        """A merged reply to the host's native stdout, stderr and exit code."""
        ...

    def deadline(self, native: str) -> float:
        """Seconds the host gives this hook before it kills it."""
        ...

    def natives(self, kind: str, named: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The native event names of portable ``kind`` to register, narrowed to ``named``
        when given (which also opts into events registered only on request)."""
        ...

    def tool_route(self, patterns: tuple[str, ...]) -> ToolRoute | None:
        """Native tool names covered by tool kind ``patterns``; None when they cover all."""
        ...
