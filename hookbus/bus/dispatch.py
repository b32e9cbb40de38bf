"""The bus: validates handlers once, then runs the ones an event wants, concurrently,
under a deadline, and merges their replies.

Failure is contained per handler. A handler that raises or outlives its deadline
contributes nothing and leaves a diagnostic (fail-open); one declared ``fail_closed``
contributes a deny instead. A deliberate block is a :class:`Reply`, never an exception.

Two executors share that logic: threads when every handler of the event is synchronous
(no event loop to start: the common hook pays nothing for anyio), and an anyio task
group as soon as one handler is a coroutine function.
"""

import _thread
import inspect
import math
import time
from collections.abc import Callable, Collection, Coroutine, Iterable, Mapping, Sequence
from typing import Any, Literal

import msgspec

from hookbus.bus.budgets import DEFAULT_BUDGET
from hookbus.bus.context import Context
from hookbus.bus.errors import HandlerError
from hookbus.bus.events import KINDS, TOOL_KINDS, Event, Stop, SubagentStop
from hookbus.bus.host import Capabilities, Dropped, HostReaders
from hookbus.bus.marks import Group, Subscription, options_type_of, subscribed, subscription_of
from hookbus.bus.options import convert_options
from hookbus.bus.replies import Merged, Reply, merge

Status = Literal["ok", "error", "timeout"]
TOOL_EVENT_KINDS = frozenset({"before-tool", "after-tool", "after-edit"})


class HandlerSettings(msgspec.Struct, frozen=True, kw_only=True):
    """What configuration may set for one handler, over its marker's declaration."""

    options: dict[str, object] = msgspec.field(default_factory=dict)
    priority: int | None = None
    timeout: float | None = None
    fail_closed: bool | None = None
    #: What reading the section found wrong (filled by :mod:`hookbus.runtime.config`): one line
    #: per dropped part, handed on to the handler as ``ctx.problems``.
    problems: tuple[str, ...] = ()
    #: The configuration file the section came from, for diagnostics.
    source: str | None = None
    #: ``path:line`` of the ``enable`` entry that turns the handler on (filled by
    #: :mod:`hookbus.runtime.config`), for the messages about it (``path`` when the line is not
    #: found).
    enabled_at: str | None = None


class Handler:
    """A validated handler: the function, its name, its subscription and options.

    ``problems`` holds one line per part of its configuration that was dropped (an
    option of the wrong type, a misspelt key, one invalid entry of a table of tables):
    the handler runs with the rest, and reads them as ``ctx.problems``.
    """

    __slots__ = (
        "fn", "is_async", "name", "options", "problems", "subscription", "wants_context",
    )  # fmt: skip

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        settings: HandlerSettings | None = None,
    ) -> None:
        declared = subscription_of(fn)
        self.fn = fn
        self.name = name or f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', fn)}"
        if declared is None:
            raise HandlerError(fn, "is not marked with @hookbus.handler(...)")
        settings = settings or HandlerSettings()
        self.subscription = msgspec.structs.replace(
            declared,
            priority=declared.priority if settings.priority is None else settings.priority,
            timeout=declared.timeout if settings.timeout is None else settings.timeout,
            fail_closed=(
                declared.fail_closed if settings.fail_closed is None else settings.fail_closed
            ),
        )
        self.is_async = inspect.iscoroutinefunction(fn)
        self.wants_context = _check_signature(fn)
        _check_subscription(fn, self.subscription)
        self.options, dropped = _convert_options(fn, settings.options)
        self.problems: tuple[str, ...] = (*settings.problems, *dropped)

    def wants(self, event: Event, capabilities: Capabilities | None = None) -> bool:
        """True when this handler's subscription matches ``event``, of a native event the
        host can do ``capabilities`` with, exactly."""
        return subscribed(self.subscription, event, capabilities)

    def __repr__(self) -> str:
        return f"<Handler {self.name} {self.subscription.kinds}>"


#: What :func:`_check_signature` found for each function: ``inspect.signature`` costs a
#: millisecond, and a warm server's children build the same handlers on every call (the
#: server builds each once, so they find it here).
_signatures: dict[Callable[..., Any], bool] = {}


def _check_signature(fn: Callable[..., Any]) -> bool:
    try:
        found = _signatures.get(fn)
    except TypeError:  # a callable object that is not hashable
        return _read_signature(fn)
    if found is None:
        found = _signatures[fn] = _read_signature(fn)
    return found


def _read_signature(fn: Callable[..., Any]) -> bool:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError) as exc:
        raise HandlerError(fn, f"has no inspectable signature ({exc})") from None
    positional = [
        p
        for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    if len(positional) not in (1, 2) or any(
        p.kind in (p.KEYWORD_ONLY,) and p.default is p.empty for p in params
    ):
        raise HandlerError(fn, f"must take (event) or (event, ctx), not {inspect.signature(fn)}")
    return len(positional) == 2


def _check_subscription(fn: Callable[..., Any], sub: Subscription) -> None:
    for field in ("kinds", "tools", "hosts", "agents", "natives"):
        values = getattr(sub, field)
        if not all(isinstance(v, str) for v in values):
            raise HandlerError(fn, f"{field} must be strings, not {values!r}")
    if not sub.kinds:
        raise HandlerError(fn, "subscribes to no event kind")
    for kind in sub.kinds:
        if kind not in KINDS:
            raise HandlerError(fn, f"unknown event kind {kind!r}; known: {sorted(KINDS)}")
    for pattern in sub.tools:
        if pattern not in TOOL_KINDS | {"any"} and not (
            pattern.startswith(("mcp:", "name:")) and pattern.partition(":")[2]
        ):
            kinds = ", ".join(sorted(TOOL_KINDS | {"any"}))
            raise HandlerError(
                fn, f"unknown tool kind {pattern!r}; known: {kinds}, mcp:<server>, name:<tool>"
            )
    if sub.tools and not TOOL_EVENT_KINDS.intersection(sub.kinds):
        raise HandlerError(fn, f"filters tools {sub.tools} but subscribes to no tool event")
    if isinstance(sub.priority, bool) or not isinstance(sub.priority, int):
        raise HandlerError(fn, f"priority must be an integer, not {sub.priority!r}")
    if sub.timeout is not None and (
        isinstance(sub.timeout, bool) or not isinstance(sub.timeout, int | float)
    ):
        raise HandlerError(fn, f"timeout must be seconds, not {sub.timeout!r}")
    if sub.timeout is not None and not (sub.timeout > 0 and math.isfinite(sub.timeout)):
        raise HandlerError(fn, f"timeout must be positive finite seconds, not {sub.timeout!r}")
    for name in sub.env:
        if not isinstance(name, str) or not name or "=" in name or "\0" in name:
            raise HandlerError(fn, f"env names environment variables: {name!r} is not one")
    if not isinstance(sub.fail_closed, bool):
        raise HandlerError(fn, f"fail_closed must be true or false, not {sub.fail_closed!r}")
    if sub.fail_closed and sub.timeout is None:
        raise HandlerError(fn, "is fail_closed but declares no timeout; give it one")
    for name, want in sub.capabilities.items():
        if name not in Capabilities.__struct_fields__:
            known = ", ".join(Capabilities.__struct_fields__)
            raise HandlerError(fn, f"unknown capability {name!r}; known: {known}")
        if not isinstance(want, bool):
            raise HandlerError(fn, f"capability {name} must be true or false, not {want!r}")


def _convert_options(fn: Callable[..., Any], raw: dict[str, object]) -> tuple[Any, list[str]]:
    options_type = options_type_of(fn)
    if options_type is None:
        if raw:
            raise HandlerError(fn, f"takes no options, but was given {sorted(raw)}")
        return None, []
    try:
        return convert_options(raw, options_type)
    except msgspec.ValidationError as exc:
        raise HandlerError(fn, f"invalid options: {exc}") from None


def group_handlers(
    group: Group, *, name: str | None = None, settings: HandlerSettings | None = None
) -> list[Handler]:
    """The members of ``group`` as handlers named ``<name>.<function name>`` (without a
    name: each member's own ``module:function``), all on the one ``settings`` section.
    :class:`HandlerError` when a member is not marked, appears twice, or declares other
    options than the first member."""
    members = group.members
    if not members:
        raise HandlerError(name or group, "is a group of no handler")
    first = members[0]
    for fn in members:
        if subscription_of(fn) is None:
            raise HandlerError(fn, f"is in group {name or ''} but not marked with "
                               "@hookbus.handler(...)")  # fmt: skip
        if options_type_of(fn) is not options_type_of(first):
            raise HandlerError(fn, f"declares options={_type_name(options_type_of(fn))}, but "
                               f"{_qualname(first)} in the same group declares "
                               f"options={_type_name(options_type_of(first))}")  # fmt: skip
    handlers = [
        Handler(fn, name=f"{name}.{getattr(fn, '__name__', fn)}" if name else None,
                settings=settings)
        for fn in members
    ]  # fmt: skip
    names = [h.name for h in handlers]
    for found in names:
        if names.count(found) > 1:
            raise HandlerError(found, "is in its group twice")
    return handlers


def _qualname(fn: object) -> str:
    return f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', fn)}"


def _type_name(options: type | None) -> str:
    return "None" if options is None else f"{options.__module__}.{options.__qualname__}"


class Outcome(msgspec.Struct, frozen=True, kw_only=True):
    """What one handler did with one event."""

    handler: str
    status: Status
    seconds: float
    reply: Reply | None = None
    error: str | None = None
    fail_closed: bool = False


class Dispatch(msgspec.Struct, frozen=True, kw_only=True):
    """The result of one dispatch: the merged reply and each handler's outcome."""

    event: Event
    reply: Reply
    outcomes: tuple[Outcome, ...] = ()
    dropped: tuple[Dropped, ...] = ()


def _call_order(handlers: Iterable[Handler]) -> list[Handler]:
    # Higher priority first; ties keep registration order (sorted() is stable).
    return sorted(handlers, key=lambda h: -h.subscription.priority)


def _fail_reply(handler: Handler, status: Status, error: str) -> Reply | None:
    if not handler.subscription.fail_closed:
        return None
    what = "did not answer in time" if status == "timeout" else f"failed: {error}"
    return Reply.deny(f"hookbus: handler {handler.name} {what} (fail-closed)")


def check_hosts(handler: Handler, known: Collection[str]) -> None:
    """HandlerError when ``handler`` filters on a host name not in ``known`` (the bus knows
    no host: its caller passes the names it knows)."""
    for host in handler.subscription.hosts:
        if host not in known:
            raise HandlerError(handler.fn, f"unknown host {host!r}; known: {sorted(known)}")


class Bus:
    """Handlers, validated once; ``dispatch`` runs the ones an event wants. ``hosts``: the
    host names a handler may filter on (None: not checked here, as by a caller that
    checked them already)."""

    def __init__(
        self,
        handlers: Sequence[Handler | Group | Callable[..., Any]] = (),
        *,
        settings: Any = None,
        budget: float = DEFAULT_BUDGET,
        hosts: Collection[str] | None = None,
    ) -> None:
        built: list[Handler] = []
        for item in handlers:
            if isinstance(item, Handler):
                built.append(item)
            elif isinstance(item, Group):
                built += group_handlers(item)
            else:
                built.append(Handler(item))
        if hosts is not None:
            for handler in built:
                check_hosts(handler, hosts)
        names = [h.name for h in built]
        for name in names:
            if names.count(name) > 1:
                raise HandlerError(name, "is given to the bus twice")
        self.handlers: tuple[Handler, ...] = tuple(_call_order(built))
        self.settings = settings
        self.budget = budget

    def matching(
        self,
        event: Event,
        derived: Sequence[Event] = (),
        capabilities: Capabilities | None = None,
    ) -> list[tuple[Handler, Event]]:
        """The (handler, event) calls ``event`` makes, in call order, on a native event
        the host can do ``capabilities`` with.

        The driver may derive more events from one (an after-tool on an edit tool is
        also an after-edit, on hosts without a native edit event); a handler gets each
        one it wants, primary event first.
        """
        events = (event, *derived)
        return [(h, ev) for h in self.handlers for ev in events if h.wants(ev, capabilities)]

    def _deadline(self, deadline: float | None) -> float:
        own = time.monotonic() + self.budget
        return own if deadline is None else min(own, deadline)

    def _context(  # noqa: PLR0917
        self,
        handler: Handler,
        event: Event,
        caps: Capabilities,
        until: float,
        readers: HostReaders | None,
        environ: Mapping[str, str] | None,
    ) -> Context:
        timeout = handler.subscription.timeout
        if timeout is not None:
            until = min(until, time.monotonic() + timeout)
        return Context(
            event=event,
            handler=handler.name,
            options=handler.options,
            settings=self.settings,
            capabilities=caps,
            deadline=until,
            env=handler.subscription.env,
            problems=handler.problems,
            readers=readers,
            environ=environ,
        )

    def _finish(self, event: Event, caps: Capabilities, outcomes: list[Outcome]) -> Dispatch:
        replies: list[tuple[str, Reply]] = []
        for outcome in outcomes:
            if outcome.reply is not None:
                replies.append((outcome.handler, outcome.reply))
        active = isinstance(event, Stop | SubagentStop) and event.stop_hook_active
        merged: Merged = merge(replies, stop_hook_active=active, text_limit=caps.text_limit)
        return Dispatch(
            event=event, reply=merged.reply, outcomes=tuple(outcomes), dropped=merged.dropped
        )

    # -- synchronous executor ------------------------------------------------------------

    def dispatch_sync(
        self,
        event: Event,
        *,
        derived: Sequence[Event] = (),
        capabilities: Capabilities | None = None,
        deadline: float | None = None,
        readers: HostReaders | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Dispatch:
        """Dispatch without an event loop when every matching handler is synchronous;
        otherwise run :meth:`dispatch` under ``anyio.run`` (on a thread of its own when
        the caller already runs an event loop, which ``anyio.run`` may not enter)."""
        caps = capabilities or Capabilities()
        chosen = self.matching(event, derived, caps)
        if any(h.is_async for h, _ in chosen):
            return _run_loop(
                lambda: self.dispatch(event, derived=derived, capabilities=caps,
                                      deadline=deadline, readers=readers, environ=environ)
            )  # fmt: skip
        until = self._deadline(deadline)
        runs = [
            _ThreadRun(h, self._context(h, ev, caps, until, readers, environ), ev)
            for h, ev in chosen
        ]
        for run in runs:
            run.start()
        return self._finish(event, caps, [run.outcome() for run in runs])

    # -- asynchronous executor -----------------------------------------------------------

    async def dispatch(
        self,
        event: Event,
        *,
        derived: Sequence[Event] = (),
        capabilities: Capabilities | None = None,
        deadline: float | None = None,
        readers: HostReaders | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Dispatch:
        """Run every matching handler concurrently under the deadline and merge replies.

        ``readers`` (the host's driver) says where the project is and reads transcripts
        for ``ctx.project_dir`` and ``ctx.transcript``; ``environ`` is where ``ctx.env``
        is read from (default: this process's environment)."""
        import anyio

        caps = capabilities or Capabilities()
        chosen = self.matching(event, derived, caps)
        until = self._deadline(deadline)
        outcomes: list[Outcome | None] = [None] * len(chosen)

        async def run(i: int, handler: Handler, ev: Event) -> None:
            ctx = self._context(handler, ev, caps, until, readers, environ)
            started = time.monotonic()
            args = (ev, ctx) if handler.wants_context else (ev,)
            result: object = None
            error = ""
            status: Status = "ok"
            with anyio.move_on_after(max(0.0, ctx.deadline - started)) as scope:
                try:
                    if handler.is_async:
                        result = await handler.fn(*args)
                    else:
                        result = await anyio.to_thread.run_sync(
                            lambda: handler.fn(*args), abandon_on_cancel=True
                        )
                except BaseException as exc:
                    # Cancellation is how anyio ends a late handler: let it through when it
                    # is this scope's deadline. Any other BaseException, a handler's own
                    # CancelledError or SystemExit included, is that handler's failure, not
                    # the end of its siblings. (An outer cancellation is level-triggered:
                    # anyio delivers it again at the task group's next checkpoint.)
                    if isinstance(exc, anyio.get_cancelled_exc_class()) and scope.cancel_called:
                        raise
                    status, error = "error", _traceback()
            if scope.cancelled_caught:
                status = "timeout"
            outcomes[i] = _outcome(handler, status, result, error, time.monotonic() - started)

        async with anyio.create_task_group() as group:
            for i, (handler, ev) in enumerate(chosen):
                group.start_soon(run, i, handler, ev)
        return self._finish(event, caps, [o for o in outcomes if o is not None])


def _in_running_loop() -> bool:
    import sys

    asyncio = sys.modules.get("asyncio")  # no loop can run where asyncio was never imported
    return asyncio is not None and asyncio.events._get_running_loop() is not None


def _run_loop(main: Callable[[], Coroutine[Any, Any, Dispatch]]) -> Dispatch:
    import anyio

    async def run() -> Dispatch:
        return await main()

    if not _in_running_loop():
        return anyio.run(run)
    box: list[Dispatch | BaseException] = []
    done = _thread.allocate_lock()
    done.acquire()

    def thread() -> None:
        try:
            box.append(anyio.run(run))
        except BaseException as exc:
            box.append(exc)
        finally:
            done.release()

    _thread.start_new_thread(thread, ())
    done.acquire()  # the dispatch is bounded by its own deadline
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]


def _outcome(
    handler: Handler, status: Status, result: object, error: str, seconds: float
) -> Outcome:
    if status == "ok" and result is not None and not isinstance(result, Reply):
        status, error = "error", f"returned {type(result).__name__}, not Reply or None"
    if status != "ok":
        return Outcome(
            handler=handler.name,
            status=status,
            seconds=seconds,
            reply=_fail_reply(handler, status, error.strip().splitlines()[-1] if error else ""),
            error=error or None,
            fail_closed=handler.subscription.fail_closed,
        )
    reply = result if isinstance(result, Reply) else None
    return Outcome(handler=handler.name, status="ok", seconds=seconds, reply=reply)


#: A handler's traceback keeps this many of its outermost frames (hookbus's call of it,
#: the handler's own function) and of its innermost (where the exception was raised);
#: the frames between are left out, and said to be.
_OUTER, _INNER = 2, 6


def _traceback() -> str:
    """The exception being handled, as Python prints it, its frames bounded at both ends
    (a bare ``limit`` keeps one end only: a deep call lost the line that raised, or the
    handler's own), for each exception of its chain."""
    import sys
    import traceback

    class Bounded(traceback.StackSummary):
        left_out = 0

        def format(self) -> list[str]:
            lines = super().format()
            if self.left_out:
                lines.insert(_OUTER, f"  ... {self.left_out} frames left out ...\n")
            return lines

    exc = sys.exc_info()[1]
    if exc is None:
        return ""
    found = traceback.TracebackException.from_exception(exc)
    chain: list[traceback.TracebackException | None] = [found]
    seen: set[int] = set()
    while chain:
        each = chain.pop()
        if each is None or id(each) in seen:
            continue
        seen.add(id(each))
        stack = list(each.stack)
        if len(stack) > _OUTER + _INNER:
            bounded = Bounded(stack[:_OUTER] + stack[-_INNER:])
            bounded.left_out = len(stack) - _OUTER - _INNER
            each.stack = bounded
        chain += [each.__cause__, each.__context__]
    return "".join(found.format())


class _ThreadRun:
    """One synchronous handler on its own thread, joined with its deadline."""

    def __init__(self, handler: Handler, ctx: Context, event: Event) -> None:
        self.handler = handler
        self.ctx = ctx
        self.args = (event, ctx) if handler.wants_context else (event,)
        self.done = _thread.allocate_lock()
        self.result: object = None
        self.error = ""
        self.started = 0.0
        self.seconds = 0.0

    def start(self) -> None:
        self.done.acquire()
        self.started = time.monotonic()
        _thread.start_new_thread(self._run, ())

    def _run(self) -> None:
        try:
            self.result = self.handler.fn(*self.args)
        except BaseException:  # a thread must not die silently, whatever it raised
            self.error = _traceback()
        finally:
            self.seconds = time.monotonic() - self.started
            self.done.release()

    def outcome(self) -> Outcome:
        left = self.ctx.deadline - time.monotonic()
        if not self.done.acquire(timeout=max(0.0, left)):
            return _outcome(self.handler, "timeout", None, "", time.monotonic() - self.started)
        status: Status = "error" if self.error else "ok"
        return _outcome(self.handler, status, self.result, self.error, self.seconds)
