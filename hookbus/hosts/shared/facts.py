"""The shape of what the cold path knows of a host before it loads anything heavy.

Every hook call reads one host's facts (``hookbus/hosts/<host>/facts.py``, a
:class:`HostFacts`) on its cold path, so this module is standard library only and holds
plain data. Per host the facts say where a payload comes from and where the event and
tool names sit in it, which environment variables or payload field name the project
root, how to recognise a second dialect reaching the same command, the unit the host's
configuration writes timeouts in, and the host's "no opinion" reply per native event
(which must be known before the driver is: an event nobody subscribes to is answered
without it). Everything else about a host lives in its driver and its manifest, in the
same folder.
"""

from __future__ import annotations

from hookbus.bus.output import HookOutput

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Literal

    #: How a payload spells its event's name (see :class:`Dialect`).
    Spelling = Literal["snake_case", "PascalCase"]

#: A path into the payload: ``("tool_name",)`` or ``("toolCall", "name")``.
Path = tuple[str, ...]


class Dialect:
    """Another host's payload reaching this host's command, recognised by a payload key,
    an environment variable, or how the payload spells its event (Copilot, Cursor, Grok
    and VS Code also run ``.claude/settings.json`` hooks, with payloads of their own).

    ``spelled`` is a key and a spelling of its value: Grok and VS Code both name the
    event in ``hookEventName``, Grok in snake_case (``pre_tool_use``), VS Code in
    PascalCase (``PreToolUse``).

    A payload that names one of this host's own events where this host names it
    (:meth:`HostFacts.names_own_event`) is this host's whatever else it carries: only a
    ``decisive`` dialect's keys, which this host could not plausibly ever send (Cursor's
    ``cursor_version``), make it another's. The others are looked for only in a payload
    that does not name an event of this host's: a key a future version of this host may
    add (a ``timestamp``, a ``sessionId``) must never turn its deny into a dialect it
    ignores."""

    __slots__ = ("decisive", "env", "events", "host", "keys", "spelled")

    def __init__(
        self, host: str, *, keys: tuple[str, ...] = (), env: tuple[str, ...] = (),
        spelled: tuple[str, Spelling] | None = None, decisive: bool = False,
        events: frozenset[str] | None = None,
    ) -> None:  # fmt: skip
        self.host = host
        self.keys = keys
        self.env = env
        self.spelled = spelled
        self.decisive = decisive
        #: The only event names (where this host names its event) the other host sends
        #: in this dialect; None: any, or none at all.
        self.events = events

    def matches(self, payload: Mapping[str, object], environ: Mapping[str, str]) -> bool:
        if any(k in payload for k in self.keys) or any(v in environ for v in self.env):
            return True
        if self.spelled is None:
            return False
        key, spelling = self.spelled
        value = payload.get(key)
        if not isinstance(value, str) or not value:
            return False
        if spelling == "snake_case":
            return value.islower() or "_" in value
        return value[0].isupper() and "_" not in value


class HostFacts:
    """What the cold path and the registry know of one host (see the module docstring)."""

    __slots__ = (
        "default_timeout", "dialects", "driver", "event_paths", "event_required", "events",
        "manifest", "name", "no_opinion", "no_opinion_by_event", "payload_env", "plugin",
        "project_env", "project_paths", "timeout_unit", "timeouts", "tool_paths",
    )  # fmt: skip

    def __init__(
        self,
        name: str,
        *,
        driver: str,
        manifest: str | None = None,
        plugin: str | None = None,
        event_paths: tuple[Path, ...] = (),
        event_required: bool = False,
        tool_paths: tuple[Path, ...] = (),
        project_env: tuple[str, ...] = (),
        project_paths: tuple[Path, ...] = (),
        payload_env: str | None = None,
        dialects: tuple[Dialect, ...] = (),
        events: frozenset[str] = frozenset(),
        no_opinion: HookOutput | None = None,
        no_opinion_by_event: Mapping[str, HookOutput] | None = None,
        default_timeout: float = 60.0,
        timeouts: Mapping[str, float] | None = None,
        timeout_unit: str = "s",
    ) -> None:
        self.name = name
        #: Module of the driver (ends with ``driver = ...``) and of the manifest.
        self.driver = driver
        self.manifest = manifest
        #: Module of the manifest of hookbus's own plugin folder (``install --plugin``),
        #: which the host runs beside its settings (:mod:`hookbus.hosts.shared.variants`).
        self.plugin = plugin
        #: Where the native event name sits; the first path present wins. Empty: the
        #: payload never names its event and ``--event`` must (``event_required``).
        self.event_paths = event_paths
        self.event_required = event_required
        self.tool_paths = tool_paths
        #: Environment variables naming the project root, in order of preference, then
        #: payload fields (a string, or a list whose first item is the root).
        self.project_env = project_env
        self.project_paths = project_paths
        #: The payload comes from this environment variable instead of stdin.
        self.payload_env = payload_env
        self.dialects = dialects
        #: The host's own event names, which make a payload naming one its own (see
        #: :class:`Dialect`); empty: only its dialects' markers are looked at.
        self.events = events
        self.no_opinion = no_opinion or HookOutput()
        self.no_opinion_by_event = dict(no_opinion_by_event or {})
        #: Seconds the host gives a hook before killing it, by default and per event.
        self.default_timeout = default_timeout
        self.timeouts = dict(timeouts or {})
        #: The unit the host's configuration writes timeouts in: "s" or "ms".
        self.timeout_unit = timeout_unit

    def no_opinion_for(self, native: str | None) -> HookOutput:
        """The host's own "no opinion" for ``native`` (its generic one when unknown)."""
        if native is None:
            return self.no_opinion
        return self.no_opinion_by_event.get(native, self.no_opinion)

    def named_event(self, payload: Mapping[str, object]) -> object:
        """What ``payload`` holds where this host puts its event's name (the first of its
        event paths present), or None."""
        for path in self.event_paths:
            value = find(payload, path)
            if value is not None:
                return value
        return None

    def names_own_event(self, payload: Mapping[str, object]) -> bool:
        """True when ``payload`` names one of this host's own events where the host puts
        its event's name."""
        value = self.named_event(payload)
        return isinstance(value, str) and value in self.events

    def timeout_for(self, native: str | None) -> float:
        """Seconds the host waits for this event's hook before it kills it."""
        if native is None:
            return self.default_timeout
        return self.timeouts.get(native, self.default_timeout)

    def project_dir(
        self,
        environ: Mapping[str, str],
        payload: Mapping[str, object] | None,
        *,
        absolute: bool = False,
    ) -> str | None:
        """The project root the host names (hooks may run in a folder the agent cd-ed to):
        the first of its project variables, then of its payload fields (a string, or a
        list whose first item is one), that holds a non-empty path; with ``absolute``, an
        absolute one (what ``ctx.project_dir`` takes: a relative one is relative to no
        folder the handler knows). The warm server's client restates this rule
        (``client.project_dir``): a test holds them equal."""
        for name in self.project_env:
            value = environ.get(name)
            if value and (not absolute or value.startswith("/")):
                return value
        for path in self.project_paths if payload is not None else ():
            found = find(payload, path)  # type: ignore[arg-type]
            if isinstance(found, list) and found:
                found = found[0]
            if isinstance(found, str) and found and (not absolute or found.startswith("/")):
                return found
        return None

    @property
    def project_word(self) -> str:
        """:attr:`project_env` and :attr:`project_paths` as one word of the client's
        command (``--project``): the variables, a colon, the paths, each list
        comma-separated and each path's keys dotted (Cursor's
        ``CURSOR_PROJECT_DIR:workspace_roots,cwd``), so the client needs no table of
        hosts and the word needs no shell quoting."""
        names = [*self.project_env, *(key for path in self.project_paths for key in path)]
        if any(not name or set(name) & set(":,.") for name in names):
            raise ValueError(f"{self.name}: a project variable or key holds ':', ',' or '.'")
        paths = ",".join(".".join(path) for path in self.project_paths)
        return f"{','.join(self.project_env)}:{paths}"

    def timeout_value(self, seconds: float) -> int:
        """``seconds`` as the host's configuration writes a timeout (whole units, rounded up)."""
        import math

        return math.ceil(seconds * 1000) if self.timeout_unit == "ms" else math.ceil(seconds)


def find(payload: Mapping[str, object], path: Path) -> object:
    """The value at ``path`` in ``payload``, or None."""
    value: object = payload
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value
