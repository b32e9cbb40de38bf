"""The guard's decision: one pure function from what is known about a child to what to do.

No host, no store, no clock, no network: the handler gathers an :class:`Ask`, the host's
:class:`Rules` say how it can correct a spawn, and :func:`decide` answers a
:class:`Verdict`. The decision table in ``tests/test_guard_decide.py`` is this module's
specification, one line per case.

The rules (the issue, and the seed's guard paragraphs):

- *fill* a missing model only for built-in agents that would inherit the parent and for
  the configured tier profiles, and only where the host lets a hook set the model without
  granting permission (``correction == "rewrite"``);
- *cap* a child priced over its parent: rewrite it to the parent's family alias (or the
  parent's exact id where the host takes one), or drop its model so it inherits, or run
  it as the parent profile (OpenCode v1, whose task tool takes no model);
- *refuse* with a precise retry where the host can only say no (Codex, Cursor);
- *block* where no retry can help (Hermes: the model comes from ``delegation.model``);
- unknown prices and an unknown parent allow, with a reason code the handler reports.
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from hookbus.bus.host import SpawnRules
from hookbus.handlers.guard.models import Identify, Model
from hookbus.handlers.guard.options import Policy

Action = Literal["pass", "fill", "cap", "refuse", "block", "log"]
#: How one host's spawn site can be corrected: what its driver declares
#: (:class:`hookbus.bus.host.SpawnRules`, in the event's capabilities).
Rules = SpawnRules
#: How a refusal names the tool when neither the event nor the host names one.
SPAWN_TOOL = "the spawn tool"
FORK = "fork"
LENS_HINT = "Review that area yourself in this session instead of delegating it."
_ESCALATION = re.compile(r"\s*Escalation from ([A-Za-z][A-Za-z0-9_-]{0,31})\s*:")


class Ask(msgspec.Struct, frozen=True, kw_only=True):
    """What the guard knows about one child about to be spawned."""

    host: str
    agent_type: str | None = None
    #: The model the call (or the host's configuration, for Hermes) names for the child.
    requested: str | None = None
    parent: str | None = None
    #: The parent's transcript has no assistant turn yet (a fresh session).
    fresh: bool = False
    #: ``CLAUDE_CODE_SUBAGENT_MODEL`` and its ``_FORCE`` flag (Claude only).
    setting: str | None = None
    forced: bool = False
    #: An OpenCode slash-command subtask: it runs on the command's model, which the hook
    #: input omits, so it is priced as the parent.
    command_subtask: bool = False
    #: The brief's ``Escalation from <tier>:`` token (recorded, never decided on).
    escalation: str = ""


class Verdict(msgspec.Struct, frozen=True, kw_only=True):
    """What to do with one child, and what its dispatch row records."""

    action: Action
    #: Set the child's model to this.
    model: str | None = None
    #: Drop the child's model so that it inherits the parent.
    clear_model: bool = False
    #: Run the child as this agent instead (OpenCode v1's cap).
    agent: str | None = None
    message: str = ""
    reasons: tuple[str, ...] = ()
    tier: str = ""
    #: The model the child runs on after the verdict, as recorded ("" when unknown).
    decided: str = ""

    @property
    def refuses(self) -> bool:
        return self.action in ("refuse", "block")


def escalation(prompt: str | None) -> str:
    """The tier token of a brief's ``Escalation from <tier>:`` header, else ""."""
    match = _ESCALATION.match(prompt or "")
    return match[1].lower() if match else ""


def _requested(model: str | None) -> str | None:
    text = (model or "").strip()
    return None if text in ("", "inherit") else text


def _over(child: Model, parent: Model) -> bool | None:
    """True when ``child`` is priced above ``parent``; None when a price is unknown."""
    if child.family is not None and child.family == parent.family:
        return False  # an alias of the parent's family runs on the parent's exact model
    if child.price is None or parent.price is None:
        return None
    return child.price > parent.price


def decide(ask: Ask, rules: Rules, policy: Policy, identify: Identify) -> Verdict | None:
    """The verdict for one child; None in mode ``off``."""
    if policy.mode == "off":
        return None
    verdict = _enforce(ask, rules, policy, identify)
    if policy.mode == "enforce":
        return verdict
    # warn: record what enforce would do, change nothing.
    would = () if verdict.action in ("pass", "log") else (f"would-{verdict.action}",)
    runs = _requested(ask.requested)
    if runs is None and (ask.agent_type == policy.lens or ask.agent_type in rules.inherits):
        runs = ask.parent
    return Verdict(action="log", reasons=verdict.reasons + would, tier=verdict.tier,
                   decided=runs or "")  # fmt: skip


def _enforce(ask: Ask, rules: Rules, policy: Policy, identify: Identify) -> Verdict:
    requested = _requested(ask.requested)
    agent = ask.agent_type
    tier = policy.tier_of(agent) or ""
    tier_model = policy.tiers.get(tier) if tier else None
    lens = bool(agent) and agent == policy.lens
    parent_profile = bool(agent) and agent == policy.parent
    inherits = agent in rules.inherits or lens or parent_profile
    if rules.correction == "none":
        return Verdict(action="log", reasons=("no-price-check",), tier=tier,
                       decided=requested or "")  # fmt: skip
    if agent == FORK:
        return Verdict(action="pass", decided=ask.parent or "")
    if rules.setting_applies and ask.forced:
        return _forced(ask, identify)
    setting = ask.setting if rules.setting_applies and agent in rules.setting_agents else None
    can_fill = rules.correction == "rewrite" and requested is None

    if ask.parent is None:
        # A fresh session's first dispatch can precede its transcript: fill only a tier
        # profile's configured model, allow everything else.
        why = ("parent-unknown", "fresh-session") if ask.fresh else ("parent-unknown",)
        if tier_model and can_fill:
            return Verdict(action="fill", model=tier_model, reasons=why, tier=tier,
                           decided=tier_model)  # fmt: skip
        return Verdict(action="pass", reasons=why, tier=tier, decided=requested or "")
    parent = identify(ask.parent)

    reasons: list[str] = []
    fill: str | None = None
    if requested is not None:
        runs: str | None = requested
    elif ask.command_subtask:
        runs = ask.parent
    elif tier_model:
        runs = fill = tier_model
    elif setting:
        runs = setting
        reasons.append("subagent-model-setting")
    elif inherits:
        runs = ask.parent
        if not parent_profile:
            fill = _inheriting_fill(policy, parent, identify)
    else:
        runs = None  # another plugin's agent: its own definition decides
    if lens:
        tier = _lens_tier(requested or fill or ask.parent, policy, identify)
    if runs is None:
        return Verdict(action="pass", tier=tier)

    over = _over(identify(runs), parent) if runs != ask.parent else False
    if over is None:
        reasons.append("price-unknown")
    if over:
        reasons.append("over-parent")
        return _correct(ask, rules, policy, parent, runs=runs, reasons=tuple(reasons), tier=tier,
                        lens=lens, drop_inherits=inherits and setting is None)  # fmt: skip
    if fill and can_fill:
        return Verdict(action="fill", model=fill, reasons=tuple(reasons), tier=tier,
                       decided=fill)  # fmt: skip
    return Verdict(action="pass", reasons=tuple(reasons), tier=tier, decided=runs)


def _inheriting_fill(policy: Policy, parent: Model, identify: Identify) -> str | None:
    """The model to fill in for an agent that would inherit ``parent``: the standard tier,
    where it is known to be cheaper than the parent. A parent that names no family gives
    an inheriting agent no model: it runs on the parent."""
    standard = policy.tiers.get("standard")
    if not standard or parent.family is None:
        return None
    return standard if _over(parent, identify(standard)) else None


def _lens_tier(model: str | None, policy: Policy, identify: Identify) -> str:
    """A lens's tier is the model it runs on: cheap when that model's family is the cheap
    tier's, otherwise standard (also when cheap and standard name one family)."""
    cheap = policy.tiers.get("cheap")
    if model and cheap:
        family = identify(model).family
        if family is not None and family == identify(cheap).family:
            standard = policy.tiers.get("standard")
            if standard is None or identify(standard).family != family:
                return "cheap"
    return "standard"


def _parent_name(parent: Model, rules: Rules) -> str | None:
    """How a capped child names the parent's model on this host (None: it cannot)."""
    return parent.alias if rules.alias == "family" else parent.id


def _correct(
    ask: Ask,
    rules: Rules,
    policy: Policy,
    parent: Model,
    *,
    runs: str,
    reasons: tuple[str, ...],
    tier: str,
    lens: bool,
    drop_inherits: bool,
) -> Verdict:
    """The correction for a child that would run on ``runs``, priced over ``parent``.
    ``drop_inherits``: without a model the child would run on the parent (not on a
    profile's pinned model or on ``CLAUDE_CODE_SUBAGENT_MODEL``)."""
    child = ask.agent_type or "subagent"
    over = f"{child} on {runs} is priced above the parent's model {parent.id}"
    why = reasons
    if rules.correction == "rewrite":
        name = _parent_name(parent, rules)
        if name is not None:
            return Verdict(action="cap", model=name, reasons=why, tier=tier, decided=name)
        if drop_inherits:
            # The parent's model has no alias: without a model the child inherits it.
            return Verdict(action="cap", clear_model=True, reasons=why, tier=tier,
                           decided=ask.parent or "")  # fmt: skip
        setting = "subagent-model-setting" in reasons
        hint = " (CLAUDE_CODE_SUBAGENT_MODEL names it: lower or unset it)" if setting else ""
        return Verdict(action="block", message=f"hookbus guard: {over}{hint}, and the parent's "
                       "model has no alias to cap it to. Do the work in this session.",
                       reasons=why, tier=tier)  # fmt: skip
    if lens:
        action: Action = "refuse" if rules.correction == "refuse" else "block"
        message = f"hookbus guard: {over}. {LENS_HINT}"
        return Verdict(action=action, message=message, reasons=why, tier=tier)
    if rules.correction == "switch":
        if policy.parent:
            return Verdict(action="cap", agent=policy.parent, reasons=why, tier=tier,
                           decided=ask.parent or "")  # fmt: skip
        return Verdict(action="block", message=f"hookbus guard: {over}. Do the work in this "
                       "session.", reasons=why, tier=tier)  # fmt: skip
    if rules.correction == "refuse":
        if rules.retry_model:
            tool = rules.tool or SPAWN_TOOL
            retry = f'Retry {tool} with "model": "{parent.id}", or do the work yourself.'
        else:
            retry = ("Retry with an agent that runs on the parent's model or a cheaper one, "
                     "or do the work yourself.")  # fmt: skip
        return Verdict(action="refuse", message=f"hookbus guard: {over}. {retry}", reasons=why,
                       tier=tier)  # fmt: skip
    hint = rules.block_hint or "Do the work in this session."
    return Verdict(action="block", message=f"hookbus guard: {over}. {hint}", reasons=why,
                   tier=tier)  # fmt: skip


def _forced(ask: Ask, identify: Identify) -> Verdict:
    """``CLAUDE_CODE_SUBAGENT_MODEL_FORCE``: every subagent but a fork runs on the setting
    (or the parent when it is unset), whatever ``model`` says. Change nothing; block a
    setting priced over the parent."""
    reasons = ["forced-model-setting"]
    if not ask.setting:
        return Verdict(action="pass", reasons=tuple(reasons), decided=ask.parent or "")
    if ask.parent is None:
        reasons.append("parent-unknown")
        return Verdict(action="pass", reasons=tuple(reasons), decided=ask.setting)
    parent = identify(ask.parent)
    over = _over(identify(ask.setting), parent)
    if over is None:
        reasons.append("price-unknown")
    if not over:
        return Verdict(action="pass", reasons=tuple(reasons), decided=ask.setting)
    reasons.append("over-parent")
    return Verdict(action="block", reasons=tuple(reasons), message=(
        f"hookbus guard: CLAUDE_CODE_SUBAGENT_MODEL_FORCE runs every subagent on "
        f"{ask.setting}, which is priced above the parent's model {parent.id}. Do the work "
        "in this session, or lower or unset CLAUDE_CODE_SUBAGENT_MODEL."))  # fmt: skip
