"""Where each host spawns a subagent, how the guard may correct it there, and the
portable reply that carries a verdict.

One table, :data:`RULES`, says per host (and per spawn tool, where a host has two) what a
hook can do to a spawn. Hosts not in it get rules from their driver's capabilities: a
spawn whose model the host shows is refused when priced over the parent (or rewritten
where the host lets a hook set the model without granting permission); one whose model
is invisible is recorded only.
"""

from __future__ import annotations

import msgspec

from hookbus.bus.events import BeforeTool, Event, Spawn, SubagentStart
from hookbus.bus.host import Capabilities
from hookbus.bus.replies import Reply
from hookbus.handlers.guard.decide import CLAUDE_INHERITING, Rules, Verdict

HERMES_HINT = (
    "Do the work in this session, or ask the user to lower or unset delegation.model in "
    "Hermes's config.yaml."
)

#: Keyed by host, or ``host/tool`` where a host has spawn tools with different rules.
RULES: dict[str, Rules] = {
    # PreToolUse updatedInput sets the Agent's model without granting permission; the
    # Agent tool takes the family aliases (the seed's live verification).
    "claude": Rules(
        correction="rewrite",
        tool="Agent",
        inherits=CLAUDE_INHERITING,
        alias="family",
        setting_applies=True,
    ),
    # Codex's rewrite is only "allow with new input", which grants permission: refuse
    # with a precise retry instead (the seed; hooks.md, PreToolUse output).
    "codex": Rules(correction="refuse", tool="spawn_agent", inherits=frozenset({"default"})),
    # subagentStart shows the resolved subagent_model and answers allow or deny; the Task
    # tool takes no model, so a refusal never asks for a model argument.
    "cursor": Rules(correction="refuse", tool="Task", retry_model=False),
    # OpenCode 1's task tool takes no model: a child is moved onto the parent by running
    # it as the parent profile (args are edited in place).
    "opencode/task": Rules(correction="switch", tool="task"),
    "kilo/task": Rules(correction="switch", tool="task"),
    # OpenCode 2's subagent tool takes a model: move an over-ceiling child onto the
    # parent's exact model, refuse nothing.
    "opencode/subagent": Rules(correction="rewrite", tool="subagent"),
    "kilo/subagent": Rules(correction="rewrite", tool="subagent"),
    # delegate_task takes no model: every delegate runs on delegation.model, or on the
    # parent when that is unset, so no retry can help.
    "hermes": Rules(correction="block", tool="delegate_task", block_hint=HERMES_HINT),
    # Pi's subagent tools take {agent, task} and never the child's model.
    "pi": Rules(correction="none", tool="subagent"),
}


def rules_for(event: Event, capabilities: Capabilities) -> Rules:
    """The rules for this spawn."""
    tool = event.tool.name if isinstance(event, BeforeTool) else ""
    known = RULES.get(f"{event.host}/{tool}") or RULES.get(event.host)
    if known is not None:
        # A retry names the tool the agent called (Codex's v2 collaborationspawn_agent).
        return msgspec.structs.replace(known, tool=tool) if tool else known
    if not any(s.model for s in spawns_of(event)):
        return Rules(correction="none", tool=tool or "the spawn tool")
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


def command_subtask(event: Event) -> bool:
    """An OpenCode slash-command subtask: its task args name the ``command``."""
    return (
        isinstance(event, BeforeTool)
        and event.host in ("opencode", "kilo")
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
