"""The guard's decision table: every rule of issue 11, per host, one line of data per case.

Prices here are a fixed table (the decision, not the dataset, is under test; the dataset
has its own tests): haiku 6 < sonnet 18 < opus 90 < fable 150 dollars per million input
plus output tokens; gpt-5 11.25, gpt-5-mini 2.25, o3-pro 100.

Columns: site (host, or host/tool, or host/tool@native for hosts whose rules come from
their driver's capabilities), agent type, requested model, parent model, options
(``setting=…`` for CLAUDE_CODE_SUBAGENT_MODEL, ``force``, ``fresh``, ``subtask``,
``mode=…``, ``parent=…``), then the expected action, the change (a model set; ``-`` the
model dropped; ``@agent`` run as that agent; empty: nothing) and the reason codes.
"""

from __future__ import annotations

from typing import NamedTuple

import msgspec
import pytest

from hookbus import hosts
from hookbus.bus.events import Agent, BeforeTool, Event, Spawn, SubagentStart, ToolCall
from hookbus.handlers.guard import models
from hookbus.handlers.guard.decide import LENS_HINT, Ask, Rules, decide, escalation
from hookbus.handlers.guard.options import GuardOptions, policy_for
from hookbus.handlers.guard.sites import rules_for
from hookbus.hosts.hermes.driver import SPAWN_HINT as HERMES_HINT

#: Where each host with rules of its own announces a spawn: its native event, and the
#: spawn tool an agent calls there (None: the subagent's start, which names no tool).
SPAWN_SITES = {
    "claude": ("PreToolUse", "Agent"),
    "codex": ("PreToolUse", "spawn_agent"),
    "cursor": ("subagentStart", None),
    "opencode/task": ("tool.execute.before", "task"),
    "opencode/subagent": ("tool.execute.before", "subagent"),
    "kilo/task": ("tool.execute.before", "task"),
    "kilo/subagent": ("tool.execute.before", "subagent"),
    "hermes": ("pre_tool_call", "delegate_task"),
    "pi": ("tool_call", "subagent"),
}


def declared_rules(site: str) -> Rules:
    """The rules the host's driver declares for a spawn at ``site``, as the guard finds them."""
    host = site.partition("/")[0]
    native, tool = SPAWN_SITES[site]
    event: Event
    if tool is None:
        event = SubagentStart(host=host, native=native, child=Agent(type="explore"))
    else:
        event = BeforeTool(host=host, native=native, tool=ToolCall(name=tool, kind="agent"))
    return rules_for(event, hosts.driver(host).capabilities(native))


RULES = {site: declared_rules(site) for site in SPAWN_SITES}

PRICES = {
    "claude-haiku-4-5": 6.0,
    "claude-sonnet-4-5": 18.0,
    "claude-opus-4-1": 90.0,
    "claude-fable-5": 150.0,
    "claude-3-5-sonnet": 18.0,
    "gpt-5": 11.25,
    "gpt-5-mini": 2.25,
    "o3-pro": 100.0,
    "gemini-2.5-pro": 11.25,
}


def identify(model_id: str) -> models.Model:
    def price_of(canonical: str, provider: str | None) -> float | None:
        return PRICES.get(canonical)

    def models_of(provider: str) -> tuple[str, ...]:
        return tuple(m for m in PRICES if m.startswith("claude"))

    return models.read(model_id, price_of, models_of)


OPUS, SONNET, HAIKU = "claude-opus-4-1-20250805", "claude-sonnet-4-5-20250929", "claude-haiku-4-5"
OC_OPUS, OC_SONNET = "anthropic/claude-opus-4-1", "anthropic/claude-sonnet-4-5"
OC_HAIKU = "anthropic/claude-haiku-4-5"
BR_OPUS = "us.anthropic.claude-opus-4-1-20250805-v1:0"
BR_OPUS_BARE = "anthropic.claude-opus-4-1-20250805-v1:0"


class Case(NamedTuple):
    site: str
    agent: str | None
    requested: str | None
    parent: str | None
    options: str
    action: str
    change: str
    reasons: str


C = Case
# fmt: off
TABLE = [
    # -- Claude: fill for built-ins that would inherit, and for tier profiles -----------
    C("claude", "general-purpose", None, OPUS, "", "fill", "sonnet", ""),
    C("claude", "general-purpose", None, SONNET, "", "pass", "", ""),
    C("claude", "general-purpose", None, HAIKU, "", "pass", "", ""),
    C("claude", "claude", None, OPUS, "", "fill", "sonnet", ""),
    C("claude", "Explore", None, OPUS, "", "fill", "sonnet", ""),
    C("claude", "Plan", None, "claude-fable-5", "", "fill", "sonnet", ""),
    C("claude", "general-purpose", "inherit", OPUS, "", "fill", "sonnet", ""),
    C("claude", "reviewer", None, OPUS, "", "pass", "", ""),
    C("claude", "hookbus-cheap", None, OPUS, "", "fill", "haiku", ""),
    C("claude", "hookbus-standard", None, OPUS, "", "fill", "sonnet", ""),
    C("claude", "hookbus-premium", None, OPUS, "", "fill", "opus", ""),
    C("claude", "hookbus-cheap", None, SONNET, "", "fill", "haiku", ""),
    # -- Claude: cap over the parent to the parent's family alias -----------------------
    C("claude", "Explore", "opus", SONNET, "", "cap", "sonnet", "over-parent"),
    C("claude", "general-purpose", "opus", SONNET, "", "cap", "sonnet", "over-parent"),
    C("claude", "general-purpose", "claude-opus-4-1", SONNET, "", "cap", "sonnet", "over-parent"),
    C("claude", "general-purpose", "fable", OPUS, "", "cap", "opus", "over-parent"),
    C("claude", "general-purpose", "haiku", OPUS, "", "pass", "", ""),
    C("claude", "general-purpose", "sonnet", SONNET, "", "pass", "", ""),
    C("claude", "general-purpose", "sonnet[1m]", OPUS, "", "pass", "", ""),
    C("claude", "reviewer", "opus", SONNET, "", "cap", "sonnet", "over-parent"),
    C("claude", "reviewer", "haiku", SONNET, "", "pass", "", ""),
    C("claude", "hookbus-premium", None, SONNET, "", "cap", "sonnet", "over-parent"),
    C("claude", "hookbus-standard", None, HAIKU, "", "cap", "haiku", "over-parent"),
    C("claude", "hookbus-cheap", "opus", SONNET, "", "cap", "sonnet", "over-parent"),
    C("claude", "hookbus-parent", None, OPUS, "", "pass", "", ""),
    C("claude", "hookbus-parent", "opus", SONNET, "", "cap", "sonnet", "over-parent"),
    C("claude", "fork", "opus", SONNET, "", "pass", "", ""),
    # -- Claude: Bedrock and Vertex ids name their family and price like first-party ----
    C("claude", "general-purpose", BR_OPUS, SONNET, "", "cap", "sonnet", "over-parent"),
    C("claude", "general-purpose", None, BR_OPUS_BARE, "", "fill", "sonnet", ""),
    C("claude", "general-purpose", "claude-opus-4-1@20250805", "claude-sonnet-4-5@20250929",
      "", "cap", "sonnet", "over-parent"),
    C("claude", "general-purpose", "sonnet", "claude-haiku-4-5@20251001", "", "cap", "haiku",
      "over-parent"),
    C("claude", "general-purpose", "claude-3-5-sonnet-20241022", OPUS, "", "pass", "", ""),
    # -- Claude: the lens inherits, takes its tier from the call ------------------------
    C("claude", "hookbus-lens", None, OPUS, "", "fill", "sonnet", ""),
    C("claude", "hookbus-lens", "haiku", OPUS, "", "pass", "", ""),
    C("claude", "hookbus-lens", "opus", SONNET, "", "cap", "sonnet", "over-parent"),
    C("claude", "hookbus-lens", None, SONNET, "", "pass", "", ""),
    # -- Claude: a parent whose model names no family ------------------------------------
    C("claude", "general-purpose", None, "gpt-5", "", "pass", "", ""),
    C("claude", "hookbus-lens", None, "gpt-5", "", "pass", "", ""),
    C("claude", "hookbus-lens", "opus", "gpt-5", "", "cap", "-", "over-parent"),
    C("claude", "general-purpose", "opus", "gpt-5", "", "cap", "-", "over-parent"),
    C("claude", "reviewer", "opus", "gpt-5", "", "block", "", "over-parent"),
    C("claude", "hookbus-premium", None, "gpt-5", "", "block", "", "over-parent"),
    C("claude", "hookbus-cheap", None, "gpt-5", "", "fill", "haiku", ""),
    # -- Claude: unknown prices and an unknown parent allow -----------------------------
    C("claude", "general-purpose", "my-proxy-model", SONNET, "", "pass", "", "price-unknown"),
    C("claude", "general-purpose", "opus", "my-proxy-parent", "", "pass", "", "price-unknown"),
    C("claude", "general-purpose", "opus", None, "", "pass", "", "parent-unknown"),
    C("claude", "general-purpose", None, None, "fresh", "pass", "",
      "parent-unknown fresh-session"),
    C("claude", "Explore", "opus", None, "fresh", "pass", "", "parent-unknown fresh-session"),
    C("claude", "hookbus-cheap", None, None, "fresh", "fill", "haiku",
      "parent-unknown fresh-session"),
    C("claude", "hookbus-cheap", "opus", None, "", "pass", "", "parent-unknown"),
    # -- Claude: CLAUDE_CODE_SUBAGENT_MODEL ----------------------------------------------
    C("claude", "general-purpose", None, OPUS, "setting=haiku", "pass", "",
      "subagent-model-setting"),
    C("claude", "claude", None, OPUS, "setting=haiku", "pass", "", "subagent-model-setting"),
    C("claude", "general-purpose", None, SONNET, "setting=opus", "cap", "sonnet",
      "subagent-model-setting over-parent"),
    C("claude", "general-purpose", None, "gpt-5", "setting=opus", "block", "",
      "subagent-model-setting over-parent"),
    C("claude", "Explore", None, OPUS, "setting=haiku", "fill", "sonnet", ""),
    C("claude", "Plan", None, SONNET, "setting=opus", "pass", "", ""),
    C("claude", "hookbus-standard", None, OPUS, "setting=haiku", "fill", "sonnet", ""),
    C("claude", "general-purpose", "haiku", SONNET, "setting=opus", "pass", "", ""),
    C("claude", "general-purpose", "opus", "gpt-5", "setting=haiku", "block", "",
      "over-parent"),
    # -- Claude: CLAUDE_CODE_SUBAGENT_MODEL_FORCE ---------------------------------------
    C("claude", "general-purpose", "haiku", SONNET, "setting=opus force", "block", "",
      "forced-model-setting over-parent"),
    C("claude", "Explore", "opus", OPUS, "setting=haiku force", "pass", "",
      "forced-model-setting"),
    C("claude", "general-purpose", "opus", SONNET, "force", "pass", "", "forced-model-setting"),
    C("claude", "fork", None, SONNET, "setting=opus force", "pass", "", ""),
    C("claude", "general-purpose", None, None, "setting=opus force", "pass", "",
      "forced-model-setting parent-unknown"),
    # -- modes ---------------------------------------------------------------------------
    C("claude", "general-purpose", "opus", SONNET, "mode=warn", "log", "",
      "over-parent would-cap"),
    C("claude", "general-purpose", None, OPUS, "mode=warn", "log", "", "would-fill"),
    C("claude", "general-purpose", "haiku", SONNET, "mode=warn", "log", "", ""),
    C("claude", "reviewer", "opus", "gpt-5", "mode=warn", "log", "", "over-parent would-block"),
    C("claude", "general-purpose", "opus", SONNET, "mode=off", "off", "", ""),
    C("codex", "default", "gpt-5", "gpt-5-mini", "mode=off", "off", "", ""),
    # -- Codex: refuse with a precise retry (its rewrite would grant permission) --------
    C("codex", "default", "gpt-5", "gpt-5-mini", "", "refuse", "", "over-parent"),
    C("codex", None, "o3-pro", "gpt-5", "", "refuse", "", "over-parent"),
    C("codex", "worker", "o3-pro", "gpt-5", "", "refuse", "", "over-parent"),
    C("codex", "default", "gpt-5-mini", "gpt-5", "", "pass", "", ""),
    C("codex", "default", None, "gpt-5", "", "pass", "", ""),
    C("codex", "hookbus-lens", "o3-pro", "gpt-5", "", "refuse", "", "over-parent"),
    C("codex", "default", "unknown-x", "gpt-5", "", "pass", "", "price-unknown"),
    C("codex", "default", "gemini-2.5-pro", "gpt-5", "", "pass", "", ""),
    C("codex", "default", "gpt-5", None, "", "pass", "", "parent-unknown"),
    C("codex", "default", "gpt-5", "gpt-5-mini", "mode=warn", "log", "",
      "over-parent would-refuse"),
    # -- Cursor: the resolved subagent_model, allow or deny, never a model argument ------
    C("cursor", "explore", "claude-opus-4-1", "claude-sonnet-4-5", "", "refuse", "",
      "over-parent"),
    C("cursor", "explore", "claude-haiku-4-5", "claude-sonnet-4-5", "", "pass", "", ""),
    C("cursor", "hookbus-lens", "claude-opus-4-1", "claude-sonnet-4-5", "", "refuse", "",
      "over-parent"),
    C("cursor", "explore", None, "claude-sonnet-4-5", "", "pass", "", ""),
    C("cursor", "explore", "claude-opus-4-1", None, "", "pass", "", "parent-unknown"),
    # -- OpenCode 1 (task: no model argument): run as the parent profile ---------------
    C("opencode/task", "hookbus-premium", None, OC_SONNET, "", "cap", "@hookbus-parent",
      "over-parent"),
    C("opencode/task", "hookbus-cheap", None, OC_SONNET, "", "pass", "", ""),
    C("opencode/task", "general", None, OC_OPUS, "", "pass", "", ""),
    C("opencode/task", "hookbus-premium", None, OC_SONNET, "subtask", "pass", "", ""),
    C("opencode/task", "hookbus-premium", None, OC_SONNET, "parent=", "block", "",
      "over-parent"),
    C("kilo/task", "hookbus-premium", None, OC_HAIKU, "", "cap", "@hookbus-parent",
      "over-parent"),
    # -- OpenCode 2 (subagent takes a model): move it onto the parent's, refuse nothing -
    C("opencode/subagent", "general", OC_OPUS, OC_SONNET, "", "cap", OC_SONNET, "over-parent"),
    C("opencode/subagent", "hookbus-lens", OC_OPUS, OC_SONNET, "", "cap", OC_SONNET,
      "over-parent"),
    C("opencode/subagent", "general", OC_HAIKU, OC_SONNET, "", "pass", "", ""),
    C("opencode/subagent", "general", None, OC_SONNET, "", "pass", "", ""),
    C("kilo/subagent", "general", OC_OPUS, OC_HAIKU, "", "cap", OC_HAIKU, "over-parent"),
    # -- Hermes: delegation.model or the parent; over it -> block -----------------------
    C("hermes", None, OC_OPUS, OC_SONNET, "", "block", "", "over-parent"),
    C("hermes", None, None, OC_SONNET, "", "pass", "", ""),
    C("hermes", None, OC_HAIKU, OC_SONNET, "", "pass", "", ""),
    C("hermes", None, OC_OPUS, None, "", "pass", "", "parent-unknown"),
    # -- Pi: recorded without a price check ---------------------------------------------
    C("pi", "scout", None, OC_SONNET, "", "log", "", "no-price-check"),
    C("pi", None, None, None, "", "log", "", "no-price-check"),
    # -- hosts whose rules come from their driver's capabilities -------------------------
    C("copilot/task@preToolUse", "explore", "claude-opus-4-1", "claude-sonnet-4-5", "",
      "refuse", "", "over-parent"),
    C("copilot/task@preToolUse", "explore", "claude-haiku-4-5", "claude-sonnet-4-5", "",
      "pass", "", ""),
    C("vscode/runSubagent@PreToolUse", None, "claude-opus-4-1", "claude-sonnet-4-5", "",
      "refuse", "", "over-parent"),
    C("gemini/invoke_agent@BeforeTool", "codebase_investigator", None, "gemini-2.5-pro", "",
      "log", "", "no-price-check"),
    C("qwen/agent@PreToolUse", "general-purpose", None, "qwen3-coder-plus", "", "log", "",
      "no-price-check"),
    C("antigravity/invoke_subagent@PreToolUse", "research", None, "gemini-3-pro", "", "log",
      "", "no-price-check"),
]
# fmt: on


def rules_of(site: str, requested: str | None) -> Rules:
    if "@" not in site:
        return RULES.get(site) or RULES[site.partition("/")[0]]
    place, native = site.split("@")
    host, tool = place.split("/")
    event = BeforeTool(host=host, native=native,
                       tool=ToolCall(name=tool, kind="agent", spawns=(Spawn(model=requested),)))  # fmt: skip
    return rules_for(event, hosts.driver(host).capabilities(native))


def ask_and_options(case: Case) -> tuple[Ask, GuardOptions]:
    words = case.options.split()
    values = dict(w.split("=", 1) for w in words if "=" in w)
    host = case.site.split("/")[0]
    ask = Ask(host=host, agent_type=case.agent, requested=case.requested, parent=case.parent,
              fresh="fresh" in words, setting=values.get("setting"), forced="force" in words,
              command_subtask="subtask" in words)  # fmt: skip
    raw: dict[str, object] = {k: v for k, v in values.items() if k in ("mode", "parent")}
    return ask, msgspec.convert(raw, GuardOptions)


def test_the_table_has_every_rule_and_at_least_80_cases() -> None:
    assert len(TABLE) >= 80
    assert len({c[:5] for c in TABLE}) == len(TABLE), "a case is listed twice"


@pytest.mark.parametrize("case", TABLE, ids=lambda c: f"{c.site}-{c.agent}-{c.requested}")
def test_decision(case: Case) -> None:
    ask, options = ask_and_options(case)
    verdict = decide(ask, rules_of(case.site, case.requested), policy_for(options, ask.host),
                     identify)  # fmt: skip
    if case.action == "off":
        assert verdict is None
        return
    assert verdict is not None
    change = (f"@{verdict.agent}" if verdict.agent else "-" if verdict.clear_model
              else verdict.model or "")  # fmt: skip
    assert (verdict.action, change, " ".join(verdict.reasons)) == (
        case.action, case.change, case.reasons)  # fmt: skip
    assert bool(verdict.message) == verdict.refuses


def verdict_of(site: str, agent: str | None, requested: str | None, parent: str | None):  # type: ignore[no-untyped-def]
    case = Case(site, agent, requested, parent, "", "", "", "")
    ask, options = ask_and_options(case)
    return decide(ask, rules_of(site, requested), policy_for(options, ask.host), identify)


def test_codex_refusal_names_the_exact_retry() -> None:
    verdict = verdict_of("codex", "default", "gpt-5", "gpt-5-mini")
    assert 'Retry spawn_agent with "model": "gpt-5-mini"' in verdict.message


def test_cursor_refusal_never_asks_for_a_model_argument() -> None:
    verdict = verdict_of("cursor", "explore", "claude-opus-4-1", "claude-sonnet-4-5")
    assert '"model"' not in verdict.message
    assert "do the work yourself" in verdict.message


@pytest.mark.parametrize("site", ["codex", "cursor", "opencode/task"])
def test_an_over_ceiling_lens_is_told_to_review_that_area_itself(site: str) -> None:
    parent = "gpt-5" if site == "codex" else "claude-sonnet-4-5"
    requested = "o3-pro" if site == "codex" else "claude-opus-4-1"
    if site == "opencode/task":
        options = GuardOptions(tiers={"standard": "opus"}, profiles={})  # type: ignore[dict-item]
        ask = Ask(host="opencode", agent_type="hookbus-lens", parent=parent)
        verdict = decide(ask, RULES[site], policy_for(options, "opencode"), identify)
        # An OpenCode lens names no model and inherits: nothing is over the parent.
        assert verdict is not None and verdict.action == "pass"
        return
    verdict = verdict_of(site, "hookbus-lens", requested, parent)
    assert verdict.action == "refuse"
    assert LENS_HINT in verdict.message and "Retry" not in verdict.message


def test_hermes_block_says_to_do_the_work_or_lower_delegation_model() -> None:
    verdict = verdict_of("hermes", None, OC_OPUS, OC_SONNET)
    assert HERMES_HINT in verdict.message


def test_a_setting_over_an_unaliased_parent_says_which_setting() -> None:
    ask = Ask(host="claude", agent_type="general-purpose", parent="gpt-5", setting="opus")
    verdict = decide(ask, RULES["claude"], policy_for(None, "claude"), identify)
    assert verdict is not None and verdict.action == "block"
    assert "CLAUDE_CODE_SUBAGENT_MODEL" in verdict.message


@pytest.mark.parametrize(
    ("agent", "requested", "parent", "tier"),
    [
        ("hookbus-lens", "haiku", OPUS, "cheap"),
        ("hookbus-lens", None, OPUS, "standard"),
        ("hookbus-lens", "opus", SONNET, "standard"),
        ("hookbus-lens", None, HAIKU, "cheap"),
        ("hookbus-cheap", None, OPUS, "cheap"),
        ("hookbus-premium", None, SONNET, "premium"),
        ("general-purpose", None, OPUS, ""),
    ],
)
def test_row_tier(agent: str, requested: str | None, parent: str, tier: str) -> None:
    ask = Ask(host="claude", agent_type=agent, requested=requested, parent=parent)
    verdict = decide(ask, RULES["claude"], policy_for(None, "claude"), identify)
    assert verdict is not None and verdict.tier == tier


def test_a_lens_is_standard_when_cheap_and_standard_name_one_family() -> None:
    options = GuardOptions(tiers={"cheap": "haiku", "standard": "claude-haiku-4-5"})
    ask = Ask(host="claude", agent_type="hookbus-lens", requested="haiku", parent=OPUS)
    verdict = decide(ask, RULES["claude"], policy_for(options, "claude"), identify)
    assert verdict is not None and verdict.tier == "standard"


@pytest.mark.parametrize(
    ("model_id", "canonical", "family"),
    [
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5-20250929", "sonnet"),
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5-20250929", "sonnet"),
        ("eu.anthropic.claude-opus-4-1-20250805-v1:0", "claude-opus-4-1-20250805", "opus"),
        ("claude-sonnet-4-5@20250929", "claude-sonnet-4-5-20250929", "sonnet"),
        ("anthropic/claude-haiku-4-5", "claude-haiku-4-5", "haiku"),
        ("claude-3-5-sonnet-20241022", "claude-3-5-sonnet-20241022", "sonnet"),
        ("claude-fable-5", "claude-fable-5", "fable"),
        ("Opus", "opus", "opus"),
        ("sonnet[1m]", "sonnet", "sonnet"),
        ("gpt-5", "gpt-5", None),
        ("openai/gpt-5-mini", "gpt-5-mini", None),
        ("gemini-2.5-pro", "gemini-2.5-pro", None),
    ],
)
def test_model_ids(model_id: str, canonical: str, family: str | None) -> None:
    assert models.canonical(model_id) == canonical
    assert models.family_of(models.canonical(model_id)) == family


def test_an_alias_prices_as_its_familys_newest_model() -> None:
    ids = ("claude-sonnet-4-0", "claude-sonnet-4-5", "claude-3-7-sonnet-latest", "claude-opus-4-1")
    assert models.latest("sonnet", ids) == "claude-sonnet-4-5"
    assert identify("sonnet").price == 18.0 and identify("sonnet").alias == "sonnet"
    assert identify("claude-mythos-5-2").alias is None  # a family the Agent tool has no alias for


@pytest.mark.parametrize(
    ("prompt", "token"),
    [
        ("Escalation from cheap: the tests still fail", "cheap"),
        ("  Escalation from Standard:\nmore", "standard"),
        ("Please look. Escalation from cheap: later", ""),
        ("Escalation from : nothing", ""),
        (None, ""),
    ],
)
def test_escalation_token(prompt: str | None, token: str) -> None:
    assert escalation(prompt) == token
