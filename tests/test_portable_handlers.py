"""The bus and the handlers are portable: no module of ``hookbus/bus/`` or
``hookbus/handlers/`` names a host or imports a host's module (issue 27). What a handler
needs to know of a host is a capability the host's driver declares."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import msgspec
import pytest

import hookbus
from hookbus.bus.dispatch import Bus
from hookbus.bus.errors import HandlerError
from hookbus.bus.events import Agent
from hookbus.bus.host import Capabilities
from hookbus.bus.replies import Reply
from hookbus.hosts import NAMES

PACKAGE = Path(hookbus.__file__).parent
PORTABLE = ("bus", "handlers")


def _modules() -> list[Path]:
    return sorted(p for folder in PORTABLE for p in (PACKAGE / folder).rglob("*.py"))


def host_mentions(source: str) -> list[str]:
    """Each string constant of ``source`` that is a host's name, or a ``host/tool`` key,
    and each import of :mod:`hookbus.hosts`, as ``line: what``. A string that only
    begins like a host's name (Anthropic's model ids begin ``claude-``) is not one."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in NAMES or node.value.partition("/")[0] in NAMES:
                found.append(f"{node.lineno}: the string {node.value!r}")
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names
                      if a.name == "hookbus.hosts" or a.name.startswith("hookbus.hosts.")]  # fmt: skip
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = [a.name for a in node.names]
            if module == "hookbus.hosts" or module.startswith("hookbus.hosts."):
                found.append(f"{node.lineno}: from {module} import {', '.join(names)}")
            elif module == "hookbus" and "hosts" in names:
                found.append(f"{node.lineno}: from hookbus import hosts")
    return sorted(found, key=lambda line: int(line.partition(":")[0]))


def test_the_checker_tells_a_host_name_from_a_model_id_prefix() -> None:
    """The check flags a host's name, a ``host/tool`` key and an import of a host module,
    and not a string that merely starts like a host's name."""
    source = (
        'A = "claude"\nB = "opencode/task"\nC = "claude-"\nD = "claude-sonnet-4-5"\n'
        "import hookbus.hosts.codex.driver\nfrom hookbus import hosts\n"
        "from hookbus.hosts import HOSTS\n"
    )
    assert host_mentions(source) == [
        "1: the string 'claude'",
        "2: the string 'opencode/task'",
        "5: import hookbus.hosts.codex.driver",
        "6: from hookbus import hosts",
        "7: from hookbus.hosts import HOSTS",
    ]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_host_name_in_the_bus_or_the_handlers(path: Path) -> None:
    """No module of the bus or of the built-in handlers names a host or imports one."""
    assert host_mentions(path.read_text(encoding="utf-8")) == []


#: The hosts each guard function named before its hosts became capabilities (issue 27):
#: its routes, and so every installed hook, must be the same.
GUARD_HOSTS = {
    "guard.on_spawn": tuple(h for h in NAMES if h != "cursor"),
    "guard.on_subagent_start": ("cursor",),
    "guard.on_session_start": tuple(
        h for h in NAMES if h not in ("codex", "cursor", "hermes", "pi", "opencode", "kilo")
    ),
    "guard.on_model_switch": tuple(
        h for h in NAMES if h not in ("codex", "cursor", "hermes", "pi")
    ),
    "guard.on_prompt_submit": ("opencode", "kilo"),
}


def _routes(host: str, handlers: list[Any]) -> dict[str, object]:
    from hookbus.runtime.compile import routes

    return {native: ([handlers[i].name for i in r["handlers"]], r["tools"])
            for native, r in routes(host, handlers).items()}  # fmt: skip


@pytest.mark.parametrize("host", NAMES)
def test_the_guard_routes_by_capability_as_it_did_by_host(host: str) -> None:
    """Each guard function is routed to the same native events and tools of every host
    as when it listed host names."""
    from hookbus.bus.dispatch import group_handlers
    from hookbus.handlers.guard.handler import GUARD
    from hookbus.runtime.compile import _Declared

    handlers = group_handlers(GUARD, name="guard")
    by_name = [
        _Declared(h.name, msgspec.structs.replace(h.subscription, capabilities={},
                                                  hosts=GUARD_HOSTS[h.name]))
        for h in handlers
    ]  # fmt: skip
    assert set(GUARD_HOSTS) == {h.name for h in handlers}
    assert _routes(host, list(handlers)) == _routes(host, by_name)


def test_a_capability_filter_is_checked_when_the_bus_is_built() -> None:
    """A capability no host declares, or a filter value that is not true or false, fails
    when the bus is built, naming the handler."""

    @hookbus.handler("before-tool", capabilities={"spawn_at_strat": True})
    def typo(event: object, ctx: object) -> None: ...

    @hookbus.handler("before-tool", capabilities={"spawn_at_start": "yes"})  # type: ignore[dict-item]
    def not_a_bool(event: object, ctx: object) -> None: ...

    with pytest.raises(HandlerError, match="unknown capability 'spawn_at_strat'"):
        Bus([typo])
    with pytest.raises(HandlerError, match="must be true or false"):
        Bus([not_a_bool])


def test_the_bus_dispatches_by_the_capabilities_of_the_native_event() -> None:
    """A handler that asks for a capability runs where the host declares it, and a
    handler that asks for its absence runs where it does not."""
    from hookbus.bus.events import SubagentStart

    @hookbus.handler("subagent-start", capabilities={"spawn_at_start": True})
    def at_start(event: object, ctx: object) -> Reply:
        return Reply.deny("at start")

    @hookbus.handler("subagent-start", capabilities={"spawn_at_start": False})
    def elsewhere(event: object, ctx: object) -> Reply:
        return Reply.deny("elsewhere")

    bus = Bus([at_start, elsewhere])
    event = SubagentStart(host="toy", native="SubagentStart", child=Agent(type="x"))
    cases = {True: "at start", False: "elsewhere"}
    for declared, reason in cases.items():
        caps = Capabilities(spawn_at_start=declared)
        got = bus.dispatch_sync(event, capabilities=caps).reply
        assert (got.decision, got.reason) == ("deny", reason)
    assert [h.name for h, _ in bus.matching(event)] == [
        elsewhere.__module__ + ":" + elsewhere.__qualname__
    ]
