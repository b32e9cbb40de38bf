"""What every driver shares, so that a driver module is its host's tables plus a few
small functions: decode-error translation, the no-opinion and refusal per native event,
the host's timeouts, after-edit derivation, the native events of a portable kind, the
native tool names a set of tool patterns covers, and the few decode steps most hosts
take alike (the event's name, a decoder per payload type, loosely typed fields).

A driver subclasses :class:`BaseDriver`, fills the class attributes, binds its module's
``decode``, ``encode`` and ``capabilities`` functions (``encode = staticmethod(encode)``),
names the module of the realistic payloads ``hookbus try`` sends (``samples``), and its
module ends with ``driver = TheDriver()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

import msgspec

from hookbus.bus import events as ev
from hookbus.bus.errors import DecodeError, SampleError
from hookbus.bus.host import Capabilities, Dropped, Encoded, ToolRoute, TranscriptFacts
from hookbus.bus.output import HookOutput
from hookbus.bus.replies import BLOCKED, Reply
from hookbus.hosts.shared.facts import HostFacts

#: The portable event kinds whose handlers filter on tools.
TOOL_EVENT_KINDS = frozenset({"before-tool", "after-tool", "after-edit"})

T = TypeVar("T")


# -- decode steps most hosts share ---------------------------------------------------------


class Head(msgspec.Struct):
    """The event name of a payload that carries one (Claude, Codex, Gemini, Qwen)."""

    hook_event_name: str | None = None


_HEAD = msgspec.json.Decoder(Head)
#: One decoder per payload type, built on first use: a hook process decodes one event,
#: and building every type's up front costs it about a millisecond.
_decoders: dict[type[Any], msgspec.json.Decoder[Any]] = {}


def event_name(host: str, data: bytes, native: str | None) -> str:
    """The native event of a payload: its ``hook_event_name``, else ``native`` (the
    command's ``--event``). The payload wins: it is what the host says this call is."""
    name = _HEAD.decode(data).hook_event_name or native
    if not name:
        raise DecodeError(host, "no hook_event_name and no --event given")
    return name


def decoder(native_type: type[T]) -> msgspec.json.Decoder[T]:
    """The JSON decoder of ``native_type``, built once per process."""
    found = _decoders.get(native_type)
    if found is None:
        found = _decoders[native_type] = msgspec.json.Decoder(native_type)
    return found


def as_text(value: object) -> str | None:
    """``value`` if it is a string, else None: a field of a loosely typed tool input."""
    return value if isinstance(value, str) else None


_ANY = msgspec.json.Decoder()


def json_object(value: object) -> dict[str, Any]:
    """``value`` as an object: a dict as it is, a string holding a JSON object decoded
    (hosts send some tool inputs JSON-encoded), anything else empty."""
    if isinstance(value, str):
        try:
            value = _ANY.decode(value)
        except (msgspec.DecodeError, RecursionError):
            return {}
    return value if isinstance(value, dict) else {}


def absolute(cwd: str, path: str) -> str:
    """``path`` joined to ``cwd`` when it is relative (hosts send POSIX paths)."""
    import posixpath

    return posixpath.join(cwd, path) if cwd and not posixpath.isabs(path) else path


def iso_seconds(value: str | None) -> float | None:
    """An ISO-8601 timestamp as Unix seconds; None when there is none or it is unreadable."""
    if not value:
        return None
    from datetime import datetime  # off the import path of hosts that send no timestamp

    try:
        return datetime.fromisoformat(value).timestamp()
    except ValueError:
        return None


def filled(value: Any, names: Mapping[str, str]) -> Any:
    """A sample table's ``value`` with each ``{name}`` in its strings, through dicts and
    lists, replaced by ``names[name]`` (an unknown one is left as it is)."""
    if isinstance(value, str):
        import re  # samples only: off a hook's path

        return re.sub(r"\{(\w+)\}", lambda m: names.get(m[1], m[0]), value)
    if isinstance(value, dict):
        return {k: filled(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [filled(v, names) for v in value]
    return value


def sample_tool(
    tools: Mapping[str, tuple[dict[str, Any], Any]],
    name: str,
    tool_input: dict[str, object] | None,
    names: Mapping[str, str],
) -> tuple[dict[str, Any], Any]:
    """A samples module's input for tool ``name`` (``tool_input`` when one is given) and
    its result, from its ``tools`` table with ``names`` filled in; a tool the table does
    not know gets an empty input and the result ``"done"``."""
    default_input, result = tools.get(name, ({}, "done"))
    given = dict(tool_input) if tool_input is not None else filled(default_input, names)
    return given, filled(result, names)


class Drops:
    """What an encode could not send, as :class:`~hookbus.bus.host.Dropped` parts: call it
    with the reply field and why; ``parts`` is what :class:`~hookbus.bus.host.Encoded` takes."""

    __slots__ = ("found", "host", "native")

    def __init__(self, host: str, native: str) -> None:
        self.host, self.native = host, native
        self.found: list[Dropped] = []

    def __call__(self, field: str, why: str) -> None:
        self.found.append(Dropped(handler=self.host, field=field, why=f"{self.native}: {why}"))

    @property
    def parts(self) -> tuple[Dropped, ...]:
        return tuple(self.found)


def blocked_instead(
    reply: Reply, drop: Drops, block: str | None, *, host: str, blocks: bool
) -> str | None:
    """The block of an event a host can only block (Windsurf's pre_*, Goose's
    PreToolUse): a rewrite or a halt it cannot carry out becomes one, so that the call
    neither runs unrewritten nor goes on; both are reported as dropped. ``block`` is the
    reason already chosen (a deny's), which wins; ``host`` names the host in the why."""
    rewrite = (f"hookbus: a handler rewrote this call's input, which {host} cannot apply; "
               "the call is blocked rather than run unrewritten.")  # fmt: skip
    for field, wanted, reason, cannot in (
        ("updated_input", reply.updated_input, reply.reason.strip() or rewrite,
         f"{host} cannot rewrite input"),
        ("halt", reply.halt, (reply.halt or "").strip() or BLOCKED,
         f"{host} cannot stop the agent"),
    ):  # fmt: skip
        if wanted is None:
            continue
        if blocks and block is None:
            block = reason
            drop(field, f"{cannot}: the call was blocked instead")
        else:
            drop(field, cannot)
    return block


class BaseDriver:
    """The shared half of a driver (see the module docstring)."""

    name: ClassVar[str]
    facts: ClassVar[HostFacts]
    #: Every native event, in the host's own order (manifests write them in this order).
    events: ClassVar[tuple[str, ...]]
    #: Native event -> portable kind; events not listed are kind ``other``.
    kinds: ClassVar[Mapping[str, str]]
    #: Native tool name -> portable tool kind; names not listed are ``other``.
    tools: ClassVar[Mapping[str, ev.ToolKind]]
    #: How MCP tool names start (``mcp__`` for Claude); None: the host has no MCP tools.
    mcp_prefix: ClassVar[str | None] = None
    #: The module whose ``payload()`` builds sample payloads (``hookbus try``).
    samples: ClassVar[str | None] = None
    #: Registered for kind ``other`` only when a handler names them (``natives=``).
    opt_in: ClassVar[tuple[str, ...]] = ()
    #: Never registered, whatever a handler asks.
    never: ClassVar[tuple[str, ...]] = ()
    #: Tool events that only ever carry these tools (Claude's PreSkillShellCommand: a
    #: shell): not registered for a handler that wants none of them.
    event_tools: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    #: The host has a native after-edit event, so none is derived from after-tool.
    native_after_edit: ClassVar[bool] = False
    #: Without one, the after-tool events an after-edit is derived from (successes only;
    #: empty: every after-tool event).
    after_edit_from: ClassVar[tuple[str, ...]] = ()
    #: Per subagent kind, a native event of another kind that also carries it (Cline's
    #: TaskStart, Pi's and OpenCode's spawn-tool calls): registered with that kind too.
    subagent_natives: ClassVar[Mapping[str, str]] = {}
    #: How the host's transcripts are written (a key of
    #: :data:`hookbus.hosts.shared.transcript.FORMATS`); None: not documented, never read.
    transcript_format: ClassVar[str | None] = None

    # -- decode --------------------------------------------------------------------------

    def decode_payload(self, data: bytes, native: str | None) -> ev.Event:
        raise NotImplementedError

    def decode(self, data: bytes, native: str | None = None) -> ev.Event:
        """Decode strictly; every way a payload can be wrong is a :class:`DecodeError`."""
        try:
            return self.decode_payload(data, native)
        except msgspec.ValidationError as exc:
            problem, _, path = str(exc).partition(" - at ")
            raise DecodeError(self.name, problem, path.strip("`") or None) from None
        except msgspec.DecodeError as exc:
            raise DecodeError(self.name, str(exc)) from None
        except RecursionError:
            raise DecodeError(self.name, "the payload is nested too deeply") from None

    def kind_of(self, native: str) -> str:
        return self.kinds.get(native, "other")

    # -- encode --------------------------------------------------------------------------

    def encode(self, native: str, reply: Reply, /) -> Encoded:
        raise NotImplementedError

    def no_opinion(self, native: str | None) -> HookOutput:
        return self.facts.no_opinion_for(native)

    def refusal(self, native: str | None, reason: str) -> HookOutput:
        if native is None:
            return self.no_opinion(None)
        return self.encode(native, Reply.deny(reason)).output

    def capabilities(self, native: str) -> Capabilities:
        raise NotImplementedError

    def timeout(self, native: str) -> float:
        return self.facts.timeout_for(native)

    # -- samples -------------------------------------------------------------------------

    def sample_payload(
        self,
        native: str,
        tool: str | None,
        tool_input: dict[str, object] | None,
        *,
        cwd: str,
        session_id: str,
    ) -> dict[str, object]:
        """The payload of a known ``native`` as the host sends it, as JSON data; a
        :class:`SampleError` when ``tool`` does not fit the event. By default the
        ``payload`` function of the :attr:`samples` module, imported only here (a hook
        process never needs the table), for the events its ``TOOL_EVENTS`` names when a
        tool is given."""
        if self.samples is None:
            raise NotImplementedError(f"the {self.name} driver has no sample payloads")
        import importlib

        table = importlib.import_module(self.samples)
        if native not in table.TOOL_EVENTS and (tool is not None or tool_input is not None):
            raise SampleError(self.name, f"{self.name}'s {native} carries no tool", tool or "",
                              table.TOOL_EVENTS, "the events with one are")  # fmt: skip
        found: dict[str, object] = table.payload(native, tool, tool_input, cwd=cwd,
                                                  session_id=session_id)  # fmt: skip
        return found

    def sample(
        self,
        native: str,
        *,
        tool: str | None = None,
        tool_input: dict[str, object] | None = None,
        cwd: str,
        session_id: str,
    ) -> bytes:
        """A realistic payload of ``native`` as the bytes the host writes (see
        :meth:`hookbus.bus.host.Driver.sample`); a :class:`SampleError` naming the valid
        choices when the event is not the host's or the tool does not fit it."""
        if native not in self.events:
            raise SampleError(self.name, f"{self.name} has no event {native!r}", native,
                              self.events, "its events are")  # fmt: skip
        fixed = self.event_tools.get(native)
        if tool is not None and fixed is not None and tool not in fixed:
            raise SampleError(self.name, f"{self.name}'s {native} never carries {tool!r}", tool,
                              fixed, "it carries only")  # fmt: skip
        payload = self.sample_payload(native, tool, tool_input, cwd=cwd, session_id=session_id)
        return msgspec.json.encode(payload)

    # -- host readers (ctx.project_dir, ctx.transcript) ----------------------------------

    def project_dir(self, event: ev.Event, environ: Mapping[str, str], /) -> str:
        """The project root as the host names it: the first of its project variables
        (:attr:`HostFacts.project_env`, Claude Code's ``CLAUDE_PROJECT_DIR``), then of
        the payload fields it documents (Cursor's ``workspace_roots``), that holds an
        absolute path (:meth:`HostFacts.project_dir`), else the event's working
        directory, else this process's."""
        found = self.facts.project_dir(environ, None, absolute=True)
        if found is None and self.facts.project_paths:  # the payload decoded only now
            payload = json_object(bytes(event.raw).decode("utf-8", "replace"))
            found = self.facts.project_dir({}, payload, absolute=True)
        if found:
            return found
        if event.cwd:
            return event.cwd
        import os

        return os.getcwd()

    def read_transcript(self, path: str, /) -> TranscriptFacts:
        """The tail of the transcript at ``path`` read in :attr:`transcript_format`
        (unknown for a host whose format is not documented); never raises."""
        if self.transcript_format is None:
            return TranscriptFacts()
        from hookbus.hosts.shared import transcript  # only for a handler that reads one

        return transcript.read(path, self.transcript_format)

    # -- derivation ----------------------------------------------------------------------

    def derive(self, event: ev.Event) -> tuple[ev.Event, ...]:
        """A successful after-tool on an edit tool is also an after-edit, on hosts whose
        own edit event does not exist."""
        if self.native_after_edit:
            return ()
        if not (isinstance(event, ev.AfterTool) and event.ok and event.tool.kind == "edit"):
            return ()
        changes = event.changes or tuple(
            ev.FileChange(action="update", path=p) for p in event.tool.paths
        )
        common = {f: getattr(event, f) for f in ev.Event.__struct_fields__}
        return (ev.AfterEdit(**common, tool=event.tool, changes=changes),)

    # -- registration --------------------------------------------------------------------

    def natives(self, kind: str, named: tuple[str, ...] = ()) -> tuple[str, ...]:
        if kind == "after-edit" and not self.native_after_edit:
            if self.after_edit_from:
                return tuple(n for n in self.after_edit_from if not named or n in named)
            kind = "after-tool"
        found = [n for n in self.events if self.kind_of(n) == kind and n not in self.never]
        if kind == "other":
            found = [n for n in found if n not in self.opt_in or n in named]
        extra = self.subagent_natives.get(kind)
        if extra is not None and extra not in found:
            found.append(extra)
        return tuple(n for n in found if not named or n in named)

    def tool_route(self, patterns: tuple[str, ...]) -> ToolRoute | None:
        if not patterns or "any" in patterns:
            return None
        names = {n for n, k in self.tools.items() if k in patterns}
        names.update(p[5:] for p in patterns if p.startswith("name:"))
        prefixes = []
        if self.mcp_prefix is not None:
            for p in patterns:
                if p == "mcp":
                    prefixes.append(self.mcp_prefix)
                elif p.startswith("mcp:"):
                    prefixes.append(self.mcp_tool_prefix(p[4:]))
        if "other" not in patterns:
            return ToolRoute(names=tuple(sorted(names)), prefixes=tuple(prefixes))
        return ToolRoute(
            names=tuple(sorted(names)),
            prefixes=tuple(prefixes),
            unknown=True,
            known=tuple(self.tools),
            known_prefixes=(self.mcp_prefix,) if self.mcp_prefix else (),
        )

    def can_carry(self, native: str, route: ToolRoute | None) -> bool:
        """False when ``native`` never carries a tool that ``route`` covers."""
        fixed = self.event_tools.get(native)
        if fixed is None or route is None or route.unknown:
            return True
        return any(t in route.names or t.startswith(route.prefixes) for t in fixed)

    def mcp_tool_prefix(self, server: str) -> str:
        """How the names of server ``server``'s MCP tools start."""
        return f"{self.mcp_prefix}{server}__"
