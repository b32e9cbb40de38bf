"""A first look at a payload with the standard library: which host's dialect it is, its
native event name and its tool name. Enough for the subscription index to say whether
anyone wants the event, before msgspec, a driver or a handler is imported.

Standard library only.
"""

from __future__ import annotations

import json
import os
import re

from hookbus import hosts
from hookbus.hosts import HostFacts, find
from hookbus.runtime.intake import MAX_INPUT

#: How much of a value a diagnostic quotes.
_QUOTE = 80


class Peeked:
    """The parsed payload with the names the cold path needs."""

    __slots__ = ("facts", "native", "payload", "tool")

    def __init__(
        self, facts: HostFacts, native: str, payload: dict[str, object], tool: str | None
    ) -> None:
        self.facts = facts
        self.native = native
        self.payload = payload
        self.tool = tool


def _quote(value: object) -> str:
    text = repr(value)
    return text if len(text) <= _QUOTE else f"{text[:_QUOTE]}... ({len(text)} characters)"


def _first(payload: dict[str, object], paths: tuple[hosts.Path, ...]) -> tuple[bool, object]:
    for path in paths:
        value = find(payload, path)
        if value is not None:
            return True, value
    return False, None


def dialect(facts: HostFacts, payload: dict[str, object]) -> HostFacts:
    """The host whose payload this really is (another host may run this host's hooks)."""
    for other in facts.dialects:
        if other.host in hosts.HOSTS and other.matches(payload, os.environ):
            return hosts.HOSTS[other.host]
    return facts


def peek(data: bytes, facts: HostFacts, event: str | None) -> Peeked:
    """Parse ``data`` and find its names; ValueError saying what is wrong."""
    if len(data) > MAX_INPUT:
        raise ValueError(f"input larger than {MAX_INPUT} bytes")
    if not data.strip():
        raise ValueError("no input")
    try:
        payload = json.loads(data)
    except RecursionError:
        raise ValueError("input JSON is nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"input is not UTF-8: {exc.reason} at byte {exc.start}") from None
    except ValueError as exc:
        raise ValueError(f"input is not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise ValueError(f"input is a JSON {type(payload).__name__}, not an object")  # noqa: TRY004
    facts = dialect(facts, payload)
    found, native = _first(payload, facts.event_paths)
    if not found:
        native = event
    if not isinstance(native, str) or not native:
        where = "/".join(facts.event_paths[0]) if facts.event_paths else "--event"
        raise ValueError(f"{where} is {_quote(native)}, not an event name")
    _, tool = _first(payload, facts.tool_paths)
    return Peeked(facts, native, payload, tool if isinstance(tool, str) else None)


def sniff(data: bytes, facts: HostFacts) -> tuple[str | None, str | None]:
    """The event and tool names near the start of a payload too large or too broken to
    parse (hosts write them before the tool's input)."""
    head = data[:65536]

    def value(paths: tuple[hosts.Path, ...]) -> str | None:
        for path in paths:
            pattern = rb'"' + re.escape(path[-1].encode()) + rb'"\s*:\s*"([^"\\]{1,200})"'
            found = re.search(pattern, head)
            if found:
                return found.group(1).decode("utf-8", "replace")
        return None

    return value(facts.event_paths), value(facts.tool_paths)
