"""The merge policy of replies, one rule per test."""

from __future__ import annotations

from hookbus.bus.replies import NO_OPINION, Reply, merge


def test_deny_beats_ask_beats_allow() -> None:
    """The strongest decision wins, whatever the order of replies."""
    replies = [("a", Reply.allow()), ("b", Reply.ask("sure?")), ("c", Reply.deny("no"))]
    assert merge(replies).reply.decision == "deny"
    assert merge(list(reversed(replies))).reply.decision == "deny"
    assert merge(replies[:2]).reply.decision == "ask"


def test_reason_joins_only_the_winning_decision() -> None:
    """Reasons of weaker decisions do not leak into the winner's reason."""
    merged = merge([("a", Reply.deny("one")), ("b", Reply.ask("maybe")), ("c", Reply.deny("two"))])
    assert merged.reply.reason == "one\ntwo"


def test_only_the_first_rewrite_survives() -> None:
    """At most one input rewrite: the first in call order; the rest are reported."""
    merged = merge([("a", Reply.rewrite({"x": 1})), ("b", Reply.rewrite({"x": 2}))])
    assert merged.reply.updated_input == {"x": 1}
    assert [(d.handler, d.field) for d in merged.dropped] == [("b", "updated_input")]


def test_a_deny_drops_every_rewrite() -> None:
    """Rewriting a call that is denied means nothing; the rewrite is dropped and reported."""
    merged = merge([("a", Reply.rewrite({"x": 1})), ("b", Reply.deny("no"))])
    assert merged.reply.updated_input is None
    assert [d.handler for d in merged.dropped] == ["a"]


def test_context_and_messages_concatenate_in_call_order() -> None:
    """Context joins with blank lines, messages with newlines, in call order."""
    merged = merge([
        ("a", Reply(context="A", message="m1")),
        ("b", Reply(context="B")),
        ("c", Reply(message="m2")),
    ])  # fmt: skip
    assert (merged.reply.context, merged.reply.message) == ("A\n\nB", "m1\nm2")


def test_text_is_cut_at_the_host_limit_and_reported() -> None:
    """Context longer than the host keeps is cut, and the cut is reported."""
    merged = merge([("a", Reply(context="x" * 50))], text_limit=10)
    assert merged.reply.context == "x" * 10
    assert [d.field for d in merged.dropped] == ["context"]


def test_keep_working_and_halt_join_reasons() -> None:
    """Any request to keep working (or to halt) wins; reasons are joined."""
    merged = merge([("a", Reply.continue_working("tests")), ("b", Reply.continue_working("lint"))])
    assert merged.reply.keep_working == "tests\nlint"
    assert merge([("a", Reply.stop_agent("budget"))]).reply.halt == "budget"


def test_nothing_merges_to_no_opinion() -> None:
    """No replies, or only empty ones, merge to the empty reply."""
    assert merge([]).reply == NO_OPINION
    assert merge([("a", Reply())]).reply.empty


def test_loop_guard_also_drops_context_on_an_active_stop() -> None:
    """Context on a stop continues the agent like a block does; an active stop gets none."""
    merged = merge([("a", Reply(context="one more thing"))], stop_hook_active=True)
    assert merged.reply.context == ""
    assert [(d.handler, d.field) for d in merged.dropped] == [("a", "context")]
