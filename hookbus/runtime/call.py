"""One hook call as the cold path knows it, handed on to the worker (standard library
only)."""

from __future__ import annotations

from hookbus.hosts import HostFacts
from hookbus.runtime.emergency import Emergency
from hookbus.runtime.index import Lookup


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
