"""One hook call as the cold path knows it, handed on to the worker, and what the worker
says back to the watchdog (standard library only)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import HostFacts
from hookbus.runtime.emergency import Emergency
from hookbus.runtime.index import Lookup, refusal_reason

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from hookbus.bus.host import Driver
    from hookbus.bus.subscriptions import HandlerData


class Call:
    """One hook call as the cold path knows it, handed on to the worker."""

    __slots__ = (
        "data", "emergency", "facts", "files", "lookup", "native", "payload", "started",
        "timeout", "tool",
    )  # fmt: skip

    def __init__(
        self,
        facts: HostFacts,
        native: str,
        tool: str | None,
        data: bytes,
        payload: dict[str, object] | None,
        *,
        timeout: float,
        started: float,
        files: list[str],
        lookup: Lookup,
        emergency: Emergency,
    ) -> None:
        self.facts = facts
        self.native = native
        self.tool = tool
        self.data = data
        #: The payload parsed by the peek; None when it could not be read.
        self.payload = payload
        #: Seconds the host gives this hook.
        self.timeout = timeout
        self.started = started
        self.files = files
        self.lookup = lookup
        self.emergency = emergency


#: Notes the worker sends while it works: the handler it is importing (empty: none), the
#: fallback it computed (a :class:`HookOutput` frame), the handlers that want the event
#: (a JSON list of names).
IMPORTING = "I"
FALLBACK = "F"
WANTED = "W"
#: The diagnostics of a worker that gave up without a reply.
DIAGNOSTICS = "D"


def answer_owed(
    driver: Driver, native: str | None, guards: Sequence[HandlerData | str] | None, why: str
) -> HookOutput:
    """What a call no handler answered is owed: the refusal of ``native`` when a
    fail-closed handler may want it, else the host's no-opinion. ``guards`` are those
    handlers (names alone where only those are known; empty: none, so the no-opinion;
    None: nothing says which, so the refusal); ``why``, what kept hookbus from answering.

    The one place the Python side builds that answer: the index encodes it per event when
    compiled (:func:`hookbus.runtime.compile.refusals`) for those who load no driver (the
    watchdog, the warm server's client, the shims), and the worker, the watchdog, the
    cold path's last resort and the in-process entry ask it for the rest."""
    if guards is not None and not guards:
        return driver.no_opinion(native)
    if guards is None:
        return driver.refusal(native, f"{why}; a fail-closed handler may want it")
    return driver.refusal(native, refusal_reason(why, guards))


def pack(output: HookOutput, lines: bytes) -> bytes:
    """The worker's result: its reply and the diagnostic lines it leaves to the watchdog."""
    frame = output.to_frame()
    return len(frame).to_bytes(8, "big") + frame + lines


def unpack(data: bytes) -> tuple[HookOutput, bytes]:
    size = int.from_bytes(data[:8], "big")
    return HookOutput.from_frame(data[8 : 8 + size]), data[8 + size :]
