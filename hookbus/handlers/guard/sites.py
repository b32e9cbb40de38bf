"""Where each host spawns a subagent, how the guard may correct it there, and the
portable reply that carries a verdict.

A host's driver declares how a hook can correct its spawns, per spawn tool, in the
capabilities of the events that announce one (:class:`hookbus.bus.host.SpawnRules`).
Hosts that declare none get rules from their other capabilities: a spawn whose model the
host shows is refused when priced over the parent (or rewritten where the host lets a
hook set the model without granting permission); one whose model is invisible is
recorded only.
"""

from __future__ import annotations

import msgspec

from hookbus.bus.events import BeforeTool, Event, Spawn, SubagentStart
from hookbus.bus.host import Capabilities
from hookbus.bus.replies import Reply
from hookbus.handlers.guard.decide import SPAWN_TOOL, Rules, Verdict


def rules_for(event: Event, capabilities: Capabilities) -> Rules:
    """The rules for this spawn: the host's for its tool (else for any of its spawn
    tools), else judged from its capabilities."""
    tool = event.tool.name if isinstance(event, BeforeTool) else ""
    declared = capabilities.spawn_rules
    known = next((r for r in declared if tool and r.tool == tool), None) or next(
        (r for r in declared if not r.tool), None
    )
    if known is not None:
        # A retry names the tool the agent called (Codex's v2 collaborationspawn_agent).
        return msgspec.structs.replace(known, tool=tool or known.tool or SPAWN_TOOL)
    if not any(s.model for s in spawns_of(event)):
        return Rules(correction="none", tool=tool or SPAWN_TOOL)
    if capabilities.spawn_model and not capabilities.rewrite_grants_permission:
        return Rules(correction="rewrite", tool=tool)
    if capabilities.decide:
        return Rules(correction="refuse", tool=tool)
    return Rules(correction="none", tool=tool)


def spawns_of(event: Event) -> tuple[Spawn, ...]:
    """The children this event spawns (Cursor's subagentStart: the one it names)."""
    if isinstance(event, BeforeTool):
        return event.tool.spawns
    if isinstance(event, SubagentStart):
        return (Spawn(agent_type=event.child.type, model=event.child_model),)
    return ()


def command_subtask(event: Event, capabilities: Capabilities) -> bool:
    """A slash-command subtask (OpenCode's): its spawn tool's input names the ``command``."""
    return (
        capabilities.subtask_command
        and isinstance(event, BeforeTool)
        and isinstance(event.tool.input.get("command"), str)
    )


def reply_for(event: Event, verdicts: tuple[Verdict, ...], rules: Rules) -> Reply | None:
    """The portable reply for the verdicts on one event's children."""
    refused = [v for v in verdicts if v.refuses]
    if refused:
        return Reply.deny("\n".join(v.message for v in refused))
    always_answers = isinstance(event, SubagentStart) and rules.correction == "refuse"
    changes = [v for v in verdicts if v.model or v.clear_model or v.agent]
    if not isinstance(event, BeforeTool) or not changes:
        return Reply.allow() if always_answers else None
    if len(verdicts) > 1:
        # One input spawns several children: no one rewrite can be per child.
        return None
    verdict = changes[0]
    updated = dict(event.tool.input)
    if verdict.agent:
        updated["subagent_type"] = verdict.agent
    if verdict.clear_model:
        updated.pop("model", None)
    elif verdict.model:
        updated["model"] = verdict.model
    why = f"hookbus guard: {verdict.action} {verdict.decided or 'the parent model'}"
    return Reply.rewrite(updated, reason=why)


def encode_verdict(verdict: Verdict) -> bytes:
    """A verdict as ``hookbus guard --json`` prints it."""
    answer = {
        "action": verdict.action,
        "model": verdict.model,
        "clear_model": verdict.clear_model,
        "message": verdict.message,
        "reasons": list(verdict.reasons),
    }
    return msgspec.json.encode(answer)
