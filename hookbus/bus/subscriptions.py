"""The compiled subscription index's shape, and who in it counts as a guard.

:mod:`hookbus.runtime.compile` writes the index (plain JSON in the state root) from the
configuration and the handlers' declarations; the runtime reads it on every call
(:mod:`hookbus.runtime.index`), and the manifests and ``doctor`` read it to plan and check
an install. All of them read it through the shapes and the two readers here, so that
which handler a refusal is owed to is one rule wherever it is applied. Standard library
only: the cold path imports it before anything heavy.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import NotRequired, TypedDict

    #: ``[path, mtime_ns, size]``; the last two None when the file is missing.
    Stat = list[object]

    class ToolsData(TypedDict):
        names: list[str]
        prefixes: list[str]
        unknown: bool
        known: list[str]
        known_prefixes: list[str]

    class RouteData(TypedDict):
        handlers: list[int]
        #: None: every tool (or the event has no tool).
        tools: ToolsData | None

    class SubscriptionData(TypedDict, total=False):
        kinds: list[str]
        tools: list[str]
        hosts: list[str]
        agents: list[str]
        natives: list[str]
        priority: int
        timeout: float | None
        fail_closed: bool
        env: list[str]
        capabilities: dict[str, bool]

    class HandlerData(TypedDict):
        #: The bus handler's name: the configuration's, or ``<config>.<function>`` for
        #: a member of a group.
        name: str
        #: The configuration name it is enabled as (absent in an index of hookbus 0.1
        #: before groups: then ``name``), and its function name in a group (else None).
        config: NotRequired[str]
        member: NotRequired[str | None]
        target: str
        #: Its configuration section (:class:`hookbus.runtime.config.HandlerRef` settings).
        settings: dict[str, object]
        #: Its declaration; None when its module never loaded (unknown).
        subscription: SubscriptionData | None
        #: Why it is not loaded now (None: it is).
        unavailable: str | None

    class ProblemData(TypedDict):
        #: The diagnostic's code (``config-invalid``, ``handler-unavailable``...).
        code: str
        #: The handler or file it is about.
        subject: str
        message: str
        #: True when the configuration is wrong (install refuses it); False for a note.
        invalid: bool

    class OutputData(TypedDict):
        stdout: str
        stderr: str
        exit_code: int

    class ClientData(TypedDict):
        """One host's facts for the warm server's client (:mod:`hookbus.runtime.warm.client`), which
        imports nothing of hookbus: enough to answer an event nobody wants by itself,
        and to send the server exactly the variables the handlers declare."""

        #: :class:`hookbus.hosts.shared.facts.HostFacts`'s paths (its project variables and paths,
        #: needed to find the index, are in the client's command: ``--project``).
        event_paths: list[list[str]]
        tool_paths: list[list[str]]
        #: The host's own event names (:attr:`hookbus.hosts.shared.facts.HostFacts.events`): a
        #: payload naming one at its event path is the host's own, but for ``decisive_keys``.
        events: list[str]
        #: Payload keys and variables that may mean another host's dialect: with any of
        #: them present the client leaves the call to hookbus; in a payload naming an
        #: event of the host's own, only the decisive keys count.
        dialect_keys: list[str]
        decisive_keys: list[str]
        dialect_env: list[str]
        #: The payload comes from a variable, not stdin (the client never answers then).
        payload_env: bool
        #: Where the host names its project (:attr:`HostFacts.project_word`): the client
        #: reads an index only for a command whose ``--project`` says the same.
        project: str
        #: The no-opinion reply per native event; ``""``: any other event.
        no_opinion: dict[str, OutputData]
        #: :meth:`hookbus.runtime.index.Lookup.declared_env` for this host.
        env: list[str]

    class IndexData(TypedDict):
        format: int
        hookbus: str
        python: str
        configs: list[Stat]
        watch: list[Stat]
        complete: bool
        retry_at: float
        problems: list[ProblemData]
        settings: dict[str, object]
        handlers: list[HandlerData]
        routes: dict[str, dict[str, RouteData]]
        #: host -> native -> its refusal, when a handler is (or may be) fail-closed.
        refusals: dict[str, dict[str, OutputData]]
        #: host -> what the warm server's client reads (see :class:`ClientData`).
        clients: dict[str, ClientData]


def guards(entries: Sequence[HandlerData]) -> list[HandlerData]:
    """The fail-closed handlers among ``entries``, counting as fail-closed every handler
    whose declaration is unknown unless its configuration says it is not (see
    :class:`hookbus.runtime.index.Unloaded` for why)."""
    found = []
    for entry in entries:
        configured = entry["settings"].get("fail_closed")
        sub = entry["subscription"]
        declared = bool(sub.get("fail_closed")) if sub is not None else None
        effective = configured if isinstance(configured, bool) else declared
        if effective or (effective is None and sub is None):
            found.append(entry)
    return found


def fail_closed(entries: Sequence[HandlerData]) -> list[str]:
    """Names of :func:`guards`."""
    return [entry["name"] for entry in guards(entries)]
