"""The guard on the bus: ``enable = ["guard"]``.

Five functions sharing the ``[handlers.guard]`` options (one :func:`hookbus.group`):

- :func:`on_spawn`: before an agent-spawn tool runs (on every host that decides a spawn
  there), decide each child, record one dispatch row per child, and reply with the
  host's correction;
- :func:`on_subagent_start`: a subagent's start, on a host that decides spawns there
  (Cursor's ``subagentStart``, which shows the resolved model and must always answer
  allow or deny);
- :func:`on_session_start`, :func:`on_model_switch` and (on hosts whose session start
  names no model but whose prompts do: OpenCode's ``chat.message``)
  :func:`on_prompt_submit`: keep the parent-model cache, where a spawn needs it.

Which host does what is a capability its driver declares
(:class:`hookbus.bus.host.Capabilities`): the subscriptions below ask for capabilities,
never for host names. It never makes a network or model call: the parent's model comes
from the event where the host gives it (Codex), else the session cache, else a bounded
tail of the parent's transcript; prices come from the local snapshot and cache
(:mod:`hookbus.handlers.guard.prices`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import msgspec

from hookbus.bus.events import Event, ModelSwitch, PromptSubmit, SessionStart
from hookbus.bus.marks import group, handler
from hookbus.bus.replies import Reply
from hookbus.handlers.guard.decide import Ask, Verdict, decide, escalation
from hookbus.handlers.guard.models import identify
from hookbus.handlers.guard.options import GuardOptions, Policy, policy_for
from hookbus.handlers.guard.sites import command_subtask, reply_for, rules_for, spawns_of
from hookbus.local import diagnostics

if TYPE_CHECKING:
    from hookbus.bus.context import Context
    from hookbus.bus.host import Capabilities, TranscriptFacts
    from hookbus.handlers.guard.decide import Rules
    from hookbus.local.store import Dispatch, Store

#: The environment the guard reads (declared, so a warm server forwards exactly these).
ENV = (
    "CLAUDE_CODE_SUBAGENT_MODEL",
    "CLAUDE_CODE_SUBAGENT_MODEL_FORCE",
    "HOOKBUS_CLAUDE_SPAWN_MOD",
    "CLAUDE_PLUGIN_ROOT",
)
PARENT_MODEL = "parent_model"
#: The guard answers well inside every host's hook timeout (Hermes: 10 s in all).
TIMEOUT = 5.0
#: How long a spawn waits for its parent's transcript to show the turn that asked for it.
#: Claude Code runs PreToolUse before its session writer has flushed that assistant turn
#: (seen with 2.1.332: the line, stamped 40 ms before the hook, was still unwritten 80 ms
#: later); the seed's "fresh-session PreToolUse may run before the first assistant
#: response is written". Waiting only happens on a session's first spawn.
TRANSCRIPT_SETTLE = 1.5
_TRANSCRIPT_POLL = 0.02
_ON = frozenset({"1", "true", "yes", "on"})


@handler("before-tool", tools="agent", capabilities={"spawn_at_start": False}, env=ENV,
         timeout=TIMEOUT, options=GuardOptions)  # fmt: skip
def on_spawn(event: Event, ctx: Context) -> Reply | None:
    """An agent is about to spawn subagents: keep each off a model priced over its parent."""
    if ctx.capabilities.spawn_module and _spawn_mod_decides(ctx):
        return None  # the plugin's agent.spawn module decides this dispatch
    return _guard(event, ctx)


@handler("subagent-start", capabilities={"spawn_at_start": True}, env=ENV, timeout=TIMEOUT,
         options=GuardOptions)  # fmt: skip
def on_subagent_start(event: Event, ctx: Context) -> Reply | None:
    """Cursor's subagentStart: the resolved subagent_model, answered allow or deny."""
    try:
        return _guard(event, ctx)
    except Exception as exc:  # Cursor blocks on an invalid answer: any failure allows
        emit("guard-failed", f"the guard failed and allowed the subagent: {exc!r}", event)
        return Reply.allow()


#: Where a spawn knows its parent's model (the spawn event carries it, or spawns are only
#: recorded) there is no cache to keep (and no hook process to start at every session).
CACHING = {"spawn_knows_parent": False}


@handler("session-start", capabilities={**CACHING, "model_on_prompt": False}, env=ENV,
         timeout=TIMEOUT, options=GuardOptions)  # fmt: skip
def on_session_start(event: Event, ctx: Context) -> None:
    """Remember the session's model: the ceiling of the children it spawns."""
    if isinstance(event, SessionStart) and event.model:
        _remember(event, ctx, event.model)


@handler("model-switch", capabilities=CACHING, env=ENV, timeout=TIMEOUT, options=GuardOptions)
def on_model_switch(event: Event, ctx: Context) -> None:
    """The session switched models: so does the ceiling."""
    if isinstance(event, ModelSwitch) and event.model:
        _remember(event, ctx, event.model)


@handler("prompt-submit", capabilities={**CACHING, "model_on_prompt": True}, env=ENV,
         timeout=TIMEOUT, options=GuardOptions)  # fmt: skip
def on_prompt_submit(event: Event, ctx: Context) -> None:
    """The prompt names the session's model where its start does not (OpenCode's
    chat.message)."""
    if isinstance(event, PromptSubmit) and event.model and not event.agent.is_subagent:
        _remember(event, ctx, event.model)


GUARD = group(on_spawn, on_subagent_start, on_session_start, on_model_switch, on_prompt_submit)


def _guard(event: Event, ctx: Context) -> Reply | None:
    policy = policy_for(ctx.options, event.host)
    if policy.mode == "off":
        return None
    rules = rules_for(event, ctx.capabilities)
    parent, fresh = _parent(event, ctx, rules)
    setting, forced = subagent_model_setting(ctx.env)
    verdicts: list[Verdict] = []
    for spawn in spawns_of(event):
        ask = Ask(
            host=event.host,
            agent_type=spawn.agent_type,
            requested=spawn.model,
            parent=parent,
            fresh=fresh,
            setting=setting,
            forced=forced,
            command_subtask=command_subtask(event, ctx.capabilities),
            escalation=escalation_token(ctx.capabilities, spawn.prompt),
        )
        verdict = decide(ask, rules, policy, identify)
        if verdict is None:
            continue
        if ctx.problems:
            verdict = _with_reason(verdict, "routing-config-invalid")
        verdicts.append(verdict)
        _record(event, ctx, policy, ask, verdict)
    return reply_for(event, tuple(verdicts), rules)


def subagent_model_setting(env: Mapping[str, str]) -> tuple[str | None, bool]:
    """``CLAUDE_CODE_SUBAGENT_MODEL`` (None when unset or empty) and whether its
    ``_FORCE`` flag is on (``1``, ``true``, ``yes``, ``on``)."""
    forced = env.get("CLAUDE_CODE_SUBAGENT_MODEL_FORCE", "").strip().lower() in _ON
    return env.get("CLAUDE_CODE_SUBAGENT_MODEL") or None, forced


def escalation_token(capabilities: Capabilities, prompt: str | None) -> str:
    """The brief's ``Escalation from <tier>:`` token; "unobservable" where the host
    encrypts the brief (Codex)."""
    return "unobservable" if capabilities.brief_hidden else escalation(prompt)


def _parent(event: Event, ctx: Context, rules: Rules) -> tuple[str | None, bool]:
    """The parent's model and whether its session is fresh (no assistant turn yet)."""
    if rules.correction == "none":
        return event.model, False
    if event.model:
        return event.model, False
    try:
        cached = ctx.store.session_get(event.host, event.session_id, PARENT_MODEL)
    except Exception as exc:  # a broken store must not cost the guard its ceiling
        emit("store-unavailable", f"the parent-model cache is unreadable: {exc}", event)
        cached = None
    if cached:
        return cached, False
    facts = ctx.transcript()
    if facts.assistant_turn is False:
        facts = _settled_transcript(ctx)
    if facts.model:
        return facts.model, False
    return None, facts.assistant_turn is False


def _settled_transcript(ctx: Context) -> TranscriptFacts:
    """The transcript once it shows an assistant turn, re-read until
    :data:`TRANSCRIPT_SETTLE` has passed (and never closer than a second to the
    deadline): a spawn is always asked for by an assistant turn, so a whole transcript
    without one is a transcript the host has not flushed yet."""
    import time

    until = min(time.monotonic() + TRANSCRIPT_SETTLE, ctx.deadline - 1.0)
    facts = ctx.transcript(reread=True)
    while facts.assistant_turn is False and time.monotonic() + _TRANSCRIPT_POLL < until:
        time.sleep(_TRANSCRIPT_POLL)
        facts = ctx.transcript(reread=True)
    return facts


def _remember(event: Event, ctx: Context, model: str) -> None:
    if policy_for(ctx.options, event.host).mode == "off" or not event.session_id:
        return
    try:
        ctx.store.session_put(event.host, event.session_id, PARENT_MODEL, model)
    except Exception as exc:
        emit("store-unavailable", f"the parent-model cache was not updated: {exc}", event)


def _record(event: Event, ctx: Context, policy: Policy, ask: Ask, verdict: Verdict) -> None:
    """One dispatch row per child. No prompt text: names, models and codes only."""
    if "price-unknown" in verdict.reasons:
        child = ask.requested or "the child"
        emit("price-unknown", f"no price is known for {child} or the parent's {ask.parent}: "
             "the spawn is allowed (see docs/prices.md)", event)  # fmt: skip
    if "parent-unknown" in verdict.reasons:
        why = "its transcript has no assistant turn yet" if ask.fresh else "none was found"
        emit("parent-unknown", f"the parent's model is unknown ({why}): the spawn is allowed",
             event)  # fmt: skip
    call_id = getattr(event, "call_id", None) or _tool_call_id(event)
    _save(lambda: ctx.store, _row(ask, verdict, policy, session_id=event.session_id,
                                  call_id=call_id, token=ask.escalation))  # fmt: skip


def _row(ask: Ask, verdict: Verdict, policy: Policy, *, session_id: str, call_id: str,
         token: str) -> Dispatch:  # fmt: skip
    from hookbus.local.store import Dispatch

    return Dispatch(host=ask.host, action=verdict.action, session_id=session_id,
                    call_id=call_id, agent_type=ask.agent_type or "", tier=verdict.tier,
                    escalation=token, requested_model=ask.requested or "",
                    decided_model=verdict.decided, parent_model=ask.parent or "",
                    mode=policy.mode, reasons=verdict.reasons)  # fmt: skip


def _save(store: Callable[[], Store], row: Dispatch) -> None:
    try:
        store().record(row)
    except Exception as exc:  # the decision stands; the row is lost, and says so
        diagnostics.emit("store-unavailable", f"the dispatch row was not recorded: {exc}",
                         handler="guard", host=row.host, session_id=row.session_id)  # fmt: skip


def _tool_call_id(event: Event) -> str:
    tool = getattr(event, "tool", None)
    return (tool.call_id if tool is not None else None) or ""


def _with_reason(verdict: Verdict, code: str) -> Verdict:
    return msgspec.structs.replace(verdict, reasons=(*verdict.reasons, code))


def emit(code: str, message: str, event: Event) -> None:
    diagnostics.emit(code, message, handler="guard", host=event.host, native=event.native,
                     session_id=event.session_id)  # fmt: skip


def _spawn_mod_decides(ctx: Context) -> bool:
    from hookbus.handlers.guard.claude_mod import spawn_mod_decides

    return spawn_mod_decides(ctx.env)


class SpawnRequest(msgspec.Struct, frozen=True, kw_only=True):
    """One spawn asked about by a caller that is not a hook (``hookbus guard --json``:
    Claude's agent.spawn module), which knows the parent's effective model. ``host``
    "" is the host whose module asks (the command fills it in)."""

    host: str = ""
    session_id: str = ""
    cwd: str = ""
    call_id: str | None = None
    agent_type: str | None = None
    model: str | None = None
    parent_model: str | None = None
    prompt: str | None = None


def decide_request(
    request: SpawnRequest,
    capabilities: Capabilities,
    *,
    options: GuardOptions | None,
    problems: tuple[str, ...],
    env: Mapping[str, str],
    store: Callable[[], Store],
) -> Verdict | None:
    """The command guard's decision and its one dispatch row, for ``request``, on a host
    that can do ``capabilities`` with its spawn (its rules: the spawn tool's, any one)."""
    policy = policy_for(options, request.host)
    rules = next((r for r in capabilities.spawn_rules if not r.tool), None)
    if rules is None or policy.mode == "off":
        return None
    parent = request.parent_model
    if not parent and request.session_id:
        try:
            parent = store().session_get(request.host, request.session_id, PARENT_MODEL)
        except Exception:
            parent = None
    setting, forced = subagent_model_setting(env)
    ask = Ask(
        host=request.host,
        agent_type=request.agent_type,
        requested=request.model,
        parent=parent or None,
        setting=setting,
        forced=forced,
    )
    verdict = decide(ask, rules, policy, identify)
    if verdict is None:
        return None
    if problems:
        verdict = _with_reason(verdict, "routing-config-invalid")
    _save(store, _row(ask, verdict, policy, session_id=request.session_id,
                      call_id=request.call_id or "", token=escalation(request.prompt)))  # fmt: skip
    return verdict
