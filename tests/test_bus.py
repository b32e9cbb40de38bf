"""The bus: build-time validation, concurrent dispatch, deadlines, fail-open/closed, merge."""

from __future__ import annotations

import threading
import time

import anyio
import msgspec
import pytest

import hookbus
from hookbus import Bus, Handler, HandlerSettings, Reply
from hookbus.bus.context import Context
from hookbus.bus.errors import HandlerError
from hookbus.bus.events import AfterTool, Agent, BeforeTool, Other, Stop, SubagentStop, ToolCall
from hookbus.bus.host import Capabilities


def before_tool(
    command: str = "ls", *, tool: str = "Bash", kind: str = "shell", agent: Agent | None = None
) -> BeforeTool:
    return BeforeTool(
        host="claude",
        native="PreToolUse",
        session_id="s",
        agent=agent or Agent(),
        tool=ToolCall(name=tool, kind=kind, command=command),  # type: ignore[arg-type]
    )


@hookbus.handler("before-tool")
def allow_all(event: BeforeTool) -> Reply:
    return Reply.allow()


# -- validation -------------------------------------------------------------------------


def test_unmarked_function_is_refused_by_name() -> None:
    """A function without @handler cannot join a bus; the error names it."""

    def plain(event: object) -> None: ...

    with pytest.raises(HandlerError, match=r"plain.*not marked"):
        Bus([plain])


@pytest.mark.parametrize(
    ("mark", "message"),
    [
        (hookbus.handler("before-tol"), "unknown event kind 'before-tol'"),
        (hookbus.handler("before-tool", tools="shel"), "unknown tool kind 'shel'"),
        (hookbus.handler("stop", tools="shell"), "subscribes to no tool event"),
        (hookbus.handler("before-tool", fail_closed=True), "fail_closed but declares no timeout"),
        (hookbus.handler("before-tool", timeout=0), "timeout must be positive"),
        (hookbus.handler(), "subscribes to no event kind"),
    ],
)
def test_bad_declarations_fail_when_the_bus_is_built(mark: object, message: str) -> None:
    """Typos in a declaration surface at build time, naming the handler and the problem."""

    def guard(event: object) -> None: ...

    with pytest.raises(HandlerError, match=message) as caught:
        Bus([mark(guard)])  # type: ignore[operator]
    assert "guard" in str(caught.value)


def test_bad_signature_is_refused() -> None:
    """A handler must take (event) or (event, ctx)."""

    @hookbus.handler("stop")
    def three(event: object, ctx: object, extra: object) -> None: ...

    with pytest.raises(HandlerError, match=r"must take \(event\) or \(event, ctx\)"):
        Bus([three])


def test_same_handler_twice_is_refused() -> None:
    """Registration is explicit: the same handler given twice is a mistake."""
    with pytest.raises(HandlerError, match="twice"):
        Bus([allow_all, allow_all])


class Words(msgspec.Struct, frozen=True):
    words: tuple[str, ...] = ("--force",)


@hookbus.handler("before-tool", options=Words)
def words_handler(event: BeforeTool, ctx: Context) -> Reply | None:
    assert isinstance(ctx.options, Words)
    hit = any(w in (event.tool.command or "") for w in ctx.options.words)
    return Reply.deny(f"matched {ctx.options.words}") if hit else None


def test_options_are_converted_to_the_declared_struct() -> None:
    """Configuration options reach the handler as its own typed Struct."""
    options = HandlerSettings(options={"words": ["--no-verify"]})
    bus = Bus([Handler(words_handler, settings=options)])
    assert bus.dispatch_sync(before_tool("git commit --no-verify")).reply.decision == "deny"
    assert bus.dispatch_sync(before_tool("git push --force")).reply.decision is None


def test_an_invalid_option_is_dropped_and_named_in_the_handlers_problems() -> None:
    """An option that does not fit its field is dropped (the default stays), and the
    handler's problems name it."""
    handler = Handler(words_handler, settings=HandlerSettings(options={"words": 3}))
    assert handler.options == Words()
    assert handler.problems == ("words: Expected `array`, got `int`; dropped",)


class Required(msgspec.Struct, frozen=True):
    words: tuple[str, ...]


@hookbus.handler("before-tool", options=Required)
def required_handler(event: BeforeTool) -> None:
    return None


def test_options_that_cannot_be_made_at_all_name_the_handler() -> None:
    """Options lacking a required field are refused at build time, naming the handler."""
    with pytest.raises(HandlerError, match=r"required_handler: invalid options"):
        Handler(required_handler, settings=HandlerSettings(options={"words": 3}))


def test_configuration_overrides_declared_timeout_and_fail_closed() -> None:
    """Config may make any handler fail-closed with a deadline, over its declaration."""
    handler = Handler(allow_all, settings=HandlerSettings(timeout=2, fail_closed=True))
    assert (handler.subscription.timeout, handler.subscription.fail_closed) == (2, True)


# -- matching ---------------------------------------------------------------------------


def test_filters_narrow_what_a_handler_gets() -> None:
    """Tool kind, host, agent and native filters each narrow the subscription."""
    shell = hookbus.handler("before-tool", tools="shell")(lambda e: None)
    mcp = hookbus.handler("before-tool", tools="mcp:github")(lambda e: None)
    codex_only = hookbus.handler("before-tool", hosts="codex")(lambda e: None)
    in_children = hookbus.handler("before-tool", agents="subagent")(lambda e: None)
    explore = hookbus.handler("subagent-stop", agents="Explore")(lambda e: None)
    note = hookbus.handler("other", natives="Notification")(lambda e: None)
    bash = before_tool()
    child = before_tool(agent=Agent(role="subagent", id="a1", type="Explore"))
    github = before_tool(tool="mcp__github__x", kind="mcp")
    github = msgspec.structs.replace(
        github, tool=msgspec.structs.replace(github.tool, mcp_server="github")
    )
    stop = SubagentStop(
        host="claude", native="SubagentStop", child=Agent(role="subagent", id="a1", type="Explore")
    )
    notification = Other(host="claude", native="Notification")
    assert [Handler(shell, name="a").wants(e) for e in (bash, github)] == [True, False]
    assert [Handler(mcp, name="a").wants(e) for e in (bash, github)] == [False, True]
    assert not Handler(codex_only, name="a").wants(bash)
    assert [Handler(in_children, name="a").wants(e) for e in (bash, child)] == [False, True]
    assert Handler(explore, name="a").wants(stop)
    assert Handler(note, name="a").wants(notification)
    assert not Handler(note, name="a").wants(Other(host="claude", native="CwdChanged"))


# -- dispatch ---------------------------------------------------------------------------


def test_sync_handlers_run_concurrently() -> None:
    """Two sync handlers meet at a barrier: impossible if the bus ran them one by one."""
    barrier = threading.Barrier(2, timeout=5)

    @hookbus.handler("before-tool")
    def first(event: BeforeTool) -> Reply:
        barrier.wait()
        return Reply.add_context("first")

    @hookbus.handler("before-tool")
    def second(event: BeforeTool) -> Reply:
        barrier.wait()
        return Reply.add_context("second")

    result = Bus([first, second]).dispatch_sync(before_tool())
    assert [o.status for o in result.outcomes] == ["ok", "ok"]
    assert result.reply.context == "first\n\nsecond"


@pytest.mark.anyio
async def test_async_handlers_run_concurrently_under_anyio() -> None:
    """Async and sync handlers share one task group; all three meet before any returns."""
    arrived = 0
    everyone = anyio.Event()
    barrier = threading.Barrier(2, timeout=5)

    async def meet() -> None:
        nonlocal arrived
        arrived += 1
        if arrived == 2:
            everyone.set()
        with anyio.fail_after(5):
            await everyone.wait()

    @hookbus.handler("before-tool")
    async def one(event: BeforeTool) -> Reply:
        await meet()
        await anyio.to_thread.run_sync(barrier.wait)
        return Reply.add_context("one")

    @hookbus.handler("before-tool")
    async def two(event: BeforeTool) -> Reply:
        await meet()
        return Reply.add_context("two")

    @hookbus.handler("before-tool")
    def three(event: BeforeTool) -> Reply:
        barrier.wait()
        return Reply.add_context("three")

    result = await Bus([one, two, three]).dispatch(before_tool())
    assert result.reply.context == "one\n\ntwo\n\nthree"


def test_dispatch_sync_starts_an_event_loop_only_for_async_handlers() -> None:
    """An async handler in the set makes dispatch_sync run the anyio executor."""

    @hookbus.handler("before-tool")
    async def deny(event: BeforeTool) -> Reply:
        await anyio.sleep(0)
        return Reply.deny("async says no")

    assert Bus([deny, allow_all]).dispatch_sync(before_tool()).reply.reason == "async says no"


@hookbus.handler("before-tool")
def crashes(event: BeforeTool) -> Reply:
    raise RuntimeError("boom")


@hookbus.handler("before-tool", timeout=0.2)
def sleeps(event: BeforeTool) -> Reply:
    time.sleep(3)
    return Reply.deny("too late")


@hookbus.handler("before-tool", timeout=0.2)
async def sleeps_async(event: BeforeTool) -> Reply:
    await anyio.sleep(3)
    return Reply.deny("too late")


@pytest.mark.parametrize("handler", [crashes, sleeps, sleeps_async])
def test_failing_handler_contributes_nothing(handler: object) -> None:
    """Fail-open: a crash or a timeout leaves the others' reply untouched, with an outcome."""
    result = Bus([handler, allow_all]).dispatch_sync(before_tool())  # type: ignore[list-item]
    failed = next(o for o in result.outcomes if o.status != "ok")
    assert failed.status == ("error" if handler is crashes else "timeout")
    assert failed.reply is None
    assert result.reply == Reply.allow()
    if handler is crashes:
        assert "RuntimeError: boom" in (failed.error or "")


@pytest.mark.parametrize("handler", [crashes, sleeps, sleeps_async])
def test_fail_closed_handler_turns_its_failure_into_a_deny(handler: object) -> None:
    """Fail-closed: the same failures deny, naming the handler."""
    closed = Handler(handler, settings=HandlerSettings(fail_closed=True, timeout=0.2))  # type: ignore[arg-type]
    result = Bus([closed, allow_all]).dispatch_sync(before_tool())
    assert result.reply.decision == "deny"
    assert closed.name in result.reply.reason


def test_non_reply_return_is_an_error() -> None:
    """Returning something that is not a Reply is reported, not guessed at."""
    wrong = hookbus.handler("before-tool")(lambda e: "deny")
    result = Bus([Handler(wrong, name="wrong")]).dispatch_sync(before_tool())
    assert result.outcomes[0].status == "error"
    assert "returned str" in (result.outcomes[0].error or "")


def test_dispatch_deadline_caps_every_handler() -> None:
    """The dispatch deadline (from the host) wins over a longer handler timeout."""
    slow = Handler(sleeps, settings=HandlerSettings(timeout=60))
    started = time.monotonic()
    result = Bus([slow]).dispatch_sync(before_tool(), deadline=started + 0.2)
    assert result.outcomes[0].status == "timeout"


def test_merge_follows_priority_not_completion_order() -> None:
    """The higher-priority rewrite survives even when it finishes last."""

    @hookbus.handler("before-tool", priority=10)
    def slow_rewrite(event: BeforeTool) -> Reply:
        time.sleep(0.1)
        return Reply.rewrite({"command": "slow"})

    @hookbus.handler("before-tool")
    def fast_rewrite(event: BeforeTool) -> Reply:
        return Reply.rewrite({"command": "fast"})

    result = Bus([fast_rewrite, slow_rewrite]).dispatch_sync(before_tool())
    assert result.reply.updated_input == {"command": "slow"}
    assert [(d.handler.rsplit(".", 1)[-1], d.field) for d in result.dropped] == [
        ("fast_rewrite", "updated_input")
    ]


def test_stop_hook_active_drops_keep_working() -> None:
    """The loop guard: a stop already continued by a hook is not blocked again."""
    keep = hookbus.handler("stop")(lambda e: Reply.continue_working("more"))
    bus = Bus([Handler(keep, name="keep")])
    first = Stop(host="claude", native="Stop", stop_hook_active=False)
    again = Stop(host="claude", native="Stop", stop_hook_active=True)
    assert bus.dispatch_sync(first).reply.keep_working == "more"
    second = bus.dispatch_sync(again)
    assert second.reply.keep_working is None
    assert [d.field for d in second.dropped] == ["keep_working"]


def test_edit_tool_results_reach_after_edit_subscribers() -> None:
    """An after-tool on an edit tool is delivered as after-edit too (derived by the
    driver, which knows whether its host has a native edit event), with its files."""
    from hookbus.hosts.claude.driver import driver

    seen: list[str] = []
    on_edit = hookbus.handler("after-edit")(lambda e: seen.extend(c.path for c in e.changes))
    event = AfterTool(
        host="claude", native="PostToolUse",
        tool=ToolCall(name="Edit", kind="edit", paths=("/p/a.py",)),
    )  # fmt: skip
    Bus([Handler(on_edit, name="on_edit")]).dispatch_sync(event, derived=driver.derive(event))
    assert seen == ["/p/a.py"]


def test_context_tells_remaining_time_and_capabilities() -> None:
    """Handlers see the host's capabilities and how long they have."""
    seen: dict[str, object] = {}

    @hookbus.handler("before-tool", timeout=2)
    def look(event: BeforeTool, ctx: Context) -> None:
        seen["remaining"] = ctx.remaining
        seen["ask"] = ctx.capabilities.ask

    Bus([look]).dispatch_sync(before_tool(), capabilities=Capabilities(ask=True))
    assert 0 < seen["remaining"] <= 2  # type: ignore[operator]
    assert seen["ask"] is True


def test_in_process_dispatch_is_capped_by_the_hosts_limit() -> None:
    """Without an explicit deadline, Claude's SessionEnd (1.5 s for all hooks) caps the
    bus's 5 s budget: a handler sleeping 3 s is cut off, not waited for."""
    from hookbus.testing import HookClient

    @hookbus.handler("session-end")
    def slow_goodbye(event: object) -> None:
        time.sleep(3)

    payload = {"session_id": "s", "cwd": "/p", "hook_event_name": "SessionEnd", "reason": "other"}
    result = HookClient("claude", [slow_goodbye], budget=5.0).run(payload)
    assert result.dispatch is not None
    assert [o.status for o in result.dispatch.outcomes] == ["timeout"]
    assert result.codes() == ["handler-timeout"]


def test_kinds_may_be_given_as_one_list() -> None:
    """``@handler(["stop", "session-end"])`` is two kinds, not a broken declaration."""
    both = hookbus.handler(["stop", "session-end"])(lambda e: None)
    assert Handler(both, name="both").subscription.kinds == ("stop", "session-end")


@pytest.mark.parametrize(
    ("mark", "message"),
    [
        (hookbus.handler("stop", priority="5"), "priority must be an integer"),  # type: ignore[arg-type]
        (hookbus.handler("stop", timeout="1"), "timeout must be seconds"),  # type: ignore[arg-type]
        (hookbus.handler("stop", natives=[3]), "natives must be strings"),  # type: ignore[list-item]
    ],
)
def test_wrongly_typed_declarations_are_handler_errors(mark: object, message: str) -> None:
    """Every field of a declaration is checked, so one typo cannot break other handlers."""
    with pytest.raises(HandlerError, match=message):
        Handler(mark(lambda e: None), name="typo")  # type: ignore[operator]


def test_a_host_the_bus_is_not_told_of_is_a_handler_error() -> None:
    """The bus knows no host: its caller passes the names a handler may filter on, and a
    name outside them (a typo) fails when the bus is built."""
    typo = hookbus.handler("stop", hosts="claud")(lambda e: None)
    with pytest.raises(HandlerError, match="unknown host 'claud'; known: \\['claude'\\]"):
        Bus([typo], hosts=("claude",))
    assert Bus([typo]).handlers  # a caller that checked the names already


def test_one_async_handlers_system_exit_keeps_the_others_replies() -> None:
    """A handler raising SystemExit is a failed handler, not the end of the dispatch."""

    @hookbus.handler("before-tool")
    async def quits(event: BeforeTool) -> None:
        raise SystemExit(2)

    @hookbus.handler("before-tool")
    async def denies(event: BeforeTool) -> Reply:
        return Reply.deny("still here")

    result = Bus([quits, denies]).dispatch_sync(before_tool())
    assert result.reply.reason == "still here"
    assert [o.status for o in result.outcomes] == ["error", "ok"]


def test_a_handlers_own_cancelled_error_keeps_the_others_replies() -> None:
    """A CancelledError a handler raises itself (a cancelled future it awaited) is its
    failure; the dispatch goes on and the sibling's deny stands."""
    import asyncio

    @hookbus.handler("before-tool")
    async def awaits_cancelled(event: BeforeTool) -> None:
        future = asyncio.get_running_loop().create_future()
        future.cancel()
        await future

    @hookbus.handler("before-tool")
    async def denies(event: BeforeTool) -> Reply:
        await anyio.sleep(0.05)
        return Reply.deny("still here")

    result = Bus([awaits_cancelled, denies]).dispatch_sync(before_tool())
    assert result.reply.reason == "still here"
    assert [o.status for o in result.outcomes] == ["error", "ok"]
