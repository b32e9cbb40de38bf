"""The ``@handler`` marker: it annotates a function and registers nothing anywhere.

A bus is given its handlers explicitly; the marker only says what a function wants.
Validation happens when the bus is built (:mod:`hookbus.bus.dispatch`), so a typo fails
there, with the handler's name, and not at import time of the user's module.
"""

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

if TYPE_CHECKING:
    from hookbus.bus.events import Event
    from hookbus.bus.host import Capabilities

F = TypeVar("F", bound=Callable[..., Any])

MARK = "__hookbus__"
OPTIONS_MARK = "__hookbus_options__"


class Subscription(msgspec.Struct, frozen=True, kw_only=True):
    """What a handler wants: event kinds and the filters that narrow them.

    Empty filters mean "all". ``tools`` takes tool kinds (``shell``, ``edit``, ``read``,
    ``web``, ``agent``, ``mcp``, ``mcp:<server>``, ``other``, ``any``) or one native tool
    by name (``name:SubagentHandback``: only that tool is registered with the host), and
    only applies to tool events. ``agents`` takes ``main``, ``subagent``, ``unknown`` (a
    host that does not say) or agent type names (for subagent-start/stop: the child's).
    ``natives`` narrows to native event names (the way to pick events of kind ``other``).
    ``env`` names the environment variables the handler reads (``ctx.env`` holds those
    that are set); a warm server forwards exactly these. ``capabilities`` narrows to the
    native events whose :class:`hookbus.bus.host.Capabilities` field of each name is
    (true) or is not (false) set: the portable way to want what some hosts do (a spawn
    decided at the subagent's start), where naming hosts would tie a handler to them.
    """

    kinds: tuple[str, ...]
    tools: tuple[str, ...] = ()
    hosts: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    natives: tuple[str, ...] = ()
    priority: int = 0
    timeout: float | None = None
    fail_closed: bool = False
    env: tuple[str, ...] = ()
    capabilities: dict[str, bool] = msgspec.field(default_factory=dict)


class Group(msgspec.Struct, frozen=True):
    """Several ``@handler`` functions configured as one handler: one configuration name,
    one options section. Made by :func:`group`; each member becomes its own bus handler,
    named ``<configuration name>.<function name>``, with its own subscription."""

    members: tuple[Callable[..., Any], ...]


def group(*members: Callable[..., Any]) -> Group:
    """A handler made of several marked functions sharing one ``[handlers.<name>]``
    section (options, ``priority``, ``timeout``, ``fail_closed``). Enable the module
    attribute holding it (``mypkg.hooks:GUARD``). Members are checked when the bus is
    built: each must be marked, and all must declare the same ``options=`` type."""
    return Group(members=members)


def _tuple(value: str | Iterable[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


def _kinds(kinds: tuple[object, ...]) -> tuple[str, ...]:
    # @handler(["stop", "session-end"]) means @handler("stop", "session-end").
    if len(kinds) == 1 and isinstance(kinds[0], list | tuple):
        return tuple(kinds[0])
    return kinds  # type: ignore[return-value]  # checked when the bus is built


def handler(
    *kinds: str,
    tools: str | Iterable[str] | None = None,
    hosts: str | Iterable[str] | None = None,
    agents: str | Iterable[str] | None = None,
    natives: str | Iterable[str] | None = None,
    priority: int = 0,
    timeout: float | None = None,
    fail_closed: bool = False,
    options: type[msgspec.Struct] | None = None,
    env: str | Iterable[str] | None = None,
    capabilities: dict[str, bool] | None = None,
) -> Callable[[F], F]:
    """Mark ``fn`` as a hookbus handler for ``kinds`` (``"before-tool"``, ``"stop"``...).

    ``options`` is a Struct type: the handler's section of the configuration is converted
    to it when the bus is built, and handed to the handler as ``ctx.options``. ``env``
    names the environment variables it reads, as ``ctx.env``.
    """

    subscription = Subscription(
        kinds=_kinds(kinds),
        tools=_tuple(tools),
        hosts=_tuple(hosts),
        agents=_tuple(agents),
        natives=_tuple(natives),
        priority=priority,
        timeout=timeout,
        fail_closed=fail_closed,
        env=_tuple(env),
        capabilities=dict(capabilities or {}),
    )

    def mark(fn: F) -> F:
        setattr(fn, MARK, subscription)
        setattr(fn, OPTIONS_MARK, options)
        return fn

    return mark


def subscribed(
    sub: Subscription, event: "Event", capabilities: "Capabilities | None" = None
) -> bool:
    """True when ``sub`` wants ``event`` (kind, host, native name, capability, tool and
    agent filters); ``capabilities`` are the host's for the event (None: the defaults)."""
    if event.kind not in sub.kinds:
        return False
    if sub.capabilities and not capable(sub, capabilities):
        return False
    if sub.hosts and event.host not in sub.hosts:
        return False
    if sub.natives and event.native not in sub.natives:
        return False
    if sub.tools:
        tool = getattr(event, "tool", None)
        if tool is None or not any(tool.matches(p) for p in sub.tools):
            return False
    if sub.agents:
        agent = getattr(event, "child", None) or event.agent
        labels = {agent.role, agent.type}
        if not labels.intersection(sub.agents):
            return False
    return True


def capable(sub: Subscription, capabilities: "Capabilities | None") -> bool:
    """True when ``capabilities`` (None: the defaults, a host that can do nothing
    special) have each field ``sub.capabilities`` names set as it asks."""
    if capabilities is None:
        from hookbus.bus.host import Capabilities

        capabilities = Capabilities()
    # A name the build did not check (an index written by another version) is unset.
    return all(bool(getattr(capabilities, name, None)) is want
               for name, want in sub.capabilities.items())  # fmt: skip


def subscription_of(fn: object) -> Subscription | None:
    found = getattr(fn, MARK, None)
    return found if isinstance(found, Subscription) else None


def options_type_of(fn: object) -> type[msgspec.Struct] | None:
    found = getattr(fn, OPTIONS_MARK, None)
    return found if isinstance(found, type) and issubclass(found, msgspec.Struct) else None
