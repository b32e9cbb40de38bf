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
from hookbus.hosts.shared.facts import HostFacts, Path, find
from hookbus.runtime.intake import MAX_INPUT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

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


def _first(payload: dict[str, object], paths: tuple[Path, ...]) -> tuple[bool, object]:
    for path in paths:
        value = find(payload, path)
        if value is not None:
            return True, value
    return False, None


def dialect(facts: HostFacts, payload: dict[str, object]) -> HostFacts:
    """The host whose payload this really is (another host may run this host's hooks):
    one naming an event of this host's own is its own, unless a decisive dialect's mark
    says otherwise (:class:`hookbus.hosts.shared.facts.Dialect`)."""
    own = facts.names_own_event(payload)
    named = facts.named_event(payload)
    for other in facts.dialects:
        if (
            (other.decisive or not own)
            and other.host in hosts.HOSTS
            and (other.events is None or (isinstance(named, str) and named in other.events))
            and (other.matches(payload, os.environ))
        ):
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


#: How much of an unreadable payload :func:`sniff` scans: hosts write their event's name
#: before the tool's input, so it is near the start when it is there at all.
SNIFF_WINDOW = 65536
#: One JSON token at a position: a whole string (escapes kept), a structural character,
#: or a run of anything else (a number, a literal, or junk).
_TOKEN = re.compile(rb'\s*(?:("[^"\\]*(?:\\.[^"\\]*)*")|([{}\[\]:,])|([^\s"{}\[\]:,]+))', re.DOTALL)


def top_level(data: bytes, keys: frozenset[str] | set[str]) -> list[tuple[str, str]]:
    """The ``(key, value)`` pairs of ``keys`` whose value is a string, found as keys of the
    top-level object of the JSON text ``data`` begins with, in order, reading as far as
    ``data`` stays well-formed (it may be cut short or broken further on).

    Nesting and strings are tracked exactly, without recursion (any depth is fine): a
    key inside a nested object, or text inside a string, is never taken for a top-level
    key. Used where ``json`` gave up (too deep, too large, broken), so that a name the
    model wrote into a tool's arguments can never pass for the payload's own."""
    found: list[tuple[str, str]] = []
    tokens = _members(data)
    if next(tokens, None) != b"{":
        return found  # not an object
    for key, colon, value in zip(tokens, tokens, tokens, strict=False):
        # key, ':', value: the top-level object's grammar, token by token.
        name = _string(key) if key.startswith(b'"') else None
        if name is None or colon != b":" or value in (b":", b",", b"}", b"]"):
            break
        if name in keys and value.startswith(b'"') and (text := _string(value)) is not None:
            found.append((name, text))
        if next(tokens, None) != b",":
            break  # '}' ends the object; anything else is broken
    return found


def _members(data: bytes) -> Iterator[bytes]:
    """The tokens of ``data`` outside any nested value: the top-level object's own, with
    each nested object or list as one ``b"["`` (its contents skipped, brackets counted),
    until its closing brace or the end of the well-formed part of ``data``."""
    depth, pos = 0, 0
    while (token := _TOKEN.match(data, pos)) is not None:
        pos = token.end()
        text = token.group(token.lastindex or 0)
        if text in (b"{", b"["):
            depth += 1
            if depth <= 2:
                yield text if depth == 1 else b"["
        elif text in (b"}", b"]"):
            depth -= 1
            if depth <= 0:
                yield text
                return
        elif depth <= 1:
            yield text


def _string(token: bytes) -> str | None:
    """A JSON string token's text (None when its escapes or bytes are invalid)."""
    try:
        text = json.loads(token)
    except (ValueError, RecursionError):
        return None
    return text if isinstance(text, str) else None


def sniff(data: bytes, facts: HostFacts) -> str | None:
    """The event name a payload too large or too broken to parse gives at its top level,
    within its first :data:`SNIFF_WINDOW` bytes (None when it gives none, or several).

    Only a key of the top-level object counts: the same key anywhere inside the tool's
    input (which the model writes) is not the event's name. Callers that know the
    event from the installed command (``--event``) use that, not this."""
    keys = {path[0] for path in facts.event_paths if len(path) == 1}
    names = {value for _, value in top_level(data[:SNIFF_WINDOW], keys) if value}
    return names.pop() if len(names) == 1 else None
