"""Replies and how the replies of several handlers merge into one.

A handler returns ``None`` (no opinion) or a :class:`Reply`. The bus merges all replies
of one dispatch by the policy below, *in call order*, never in completion order, so the
result does not depend on which handler finished first.

Call order: higher ``priority`` first; equal priorities keep the order in which the
handlers were given to the bus (for ``hookbus run``: the order of ``enable`` in the
configuration). This is the only place that order matters.

Merge policy (one table for every event kind; which fields an event kind can carry at all
is the driver's business, and it drops the rest with a diagnostic):

============== ===========================================================================
field          rule
============== ===========================================================================
decision       deny beats ask beats allow; ``reason`` joins the reasons of the replies that
               carry the winning decision, in call order.
updated_input  at most one survives: the first in call order. Later ones are dropped with a
               diagnostic. None survives a deny.
context        concatenated in call order (blank line between), cut at the host's limit.
message        concatenated in call order (one per line), cut at the host's limit.
keep_working   any request wins; reasons joined in call order. On a stop that the host
               marks ``stop_hook_active`` (the agent is already continuing because of a
               hook) every request is dropped with a diagnostic, and so is context, which
               continues a stopping agent just the same (Claude): that is the loop guard.
halt           any request wins (stop the whole agent); reasons joined in call order.
============== ===========================================================================
"""

from collections.abc import Iterable, Sequence
from typing import Literal

import msgspec

from hookbus.bus.host import Dropped

Decision = Literal["allow", "deny", "ask"]
_STRENGTH: dict[str | None, int] = {None: 0, "allow": 1, "ask": 2, "deny": 3}
#: What a driver's refusal says where the host wants a reason and no handler gave one.
DENIED = "Denied by a hookbus handler."
BLOCKED = "Blocked by a hookbus handler."


class Reply(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """What one handler (or the merged bus) answers to one event."""

    decision: Decision | None = None
    reason: str = ""
    updated_input: dict[str, object] | None = None
    context: str = ""
    message: str = ""
    keep_working: str | None = None
    halt: str | None = None

    @classmethod
    def allow(cls, reason: str = "") -> "Reply":
        return cls(decision="allow", reason=reason)

    @classmethod
    def deny(cls, reason: str) -> "Reply":
        return cls(decision="deny", reason=reason)

    @classmethod
    def ask(cls, reason: str) -> "Reply":
        return cls(decision="ask", reason=reason)

    @classmethod
    def rewrite(cls, updated_input: dict[str, object], reason: str = "") -> "Reply":
        return cls(updated_input=updated_input, reason=reason)

    @classmethod
    def add_context(cls, text: str) -> "Reply":
        return cls(context=text)

    @classmethod
    def tell_user(cls, text: str) -> "Reply":
        return cls(message=text)

    @classmethod
    def continue_working(cls, reason: str) -> "Reply":
        return cls(keep_working=reason)

    @classmethod
    def stop_agent(cls, reason: str) -> "Reply":
        return cls(halt=reason)

    @property
    def empty(self) -> bool:
        return self == NO_OPINION


NO_OPINION = Reply()


class Merged(msgspec.Struct, frozen=True, kw_only=True):
    """The merged reply and what was dropped on the way."""

    reply: Reply
    dropped: tuple[Dropped, ...] = ()


def _join(parts: Iterable[str], sep: str) -> str:
    return sep.join(p for p in parts if p)


def _cut(text: str, limit: int | None, handler: str, field: str, out: list[Dropped]) -> str:
    if limit is None or len(text) <= limit:
        return text
    out.append(Dropped(handler=handler, field=field, why=f"cut from {len(text)} to {limit} chars"))
    return text[:limit]


def merge(
    replies: Sequence[tuple[str, Reply]],
    *,
    stop_hook_active: bool = False,
    text_limit: int | None = None,
) -> Merged:
    """Merge ``(handler name, reply)`` pairs given in call order (see the module docstring)."""
    dropped: list[Dropped] = []
    decision: Decision | None = None
    for _, reply in replies:
        if _STRENGTH[reply.decision] > _STRENGTH[decision]:
            decision = reply.decision
    reason = _join((r.reason for _, r in replies if r.decision == decision and decision), "\n")

    updated: dict[str, object] | None = None
    for name, reply in replies:
        if reply.updated_input is None:
            continue
        if decision == "deny":
            dropped.append(Dropped(handler=name, field="updated_input", why="the call is denied"))
        elif updated is None:
            updated = reply.updated_input
            if not reason and reply.reason:
                reason = reply.reason
        else:
            dropped.append(
                Dropped(handler=name, field="updated_input", why="an earlier handler rewrote it")
            )

    keep: list[str] = []
    for name, reply in replies:
        if reply.keep_working is None:
            continue
        if stop_hook_active:
            dropped.append(
                Dropped(handler=name, field="keep_working", why="stop_hook_active: loop guard")
            )
        else:
            keep.append(reply.keep_working or "Keep working.")
    halts = [r.halt or "Stopped by a hook." for _, r in replies if r.halt is not None]

    if stop_hook_active:
        for name, reply in replies:
            if reply.context:
                dropped.append(
                    Dropped(handler=name, field="context", why="stop_hook_active: loop guard")
                )
        replies = [(n, msgspec.structs.replace(r, context="")) for n, r in replies]
    bus = "bus"
    merged = Reply(
        decision=decision,
        reason=reason,
        updated_input=updated,
        context=_cut(
            _join((r.context for _, r in replies), "\n\n"), text_limit, bus, "context", dropped
        ),
        message=_cut(
            _join((r.message for _, r in replies), "\n"), text_limit, bus, "message", dropped
        ),
        keep_working=_join(keep, "\n") if keep else None,
        halt=_join(halts, "\n") if halts else None,
    )
    return Merged(reply=merged, dropped=tuple(dropped))
