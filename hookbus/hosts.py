"""The one registry of hosts: what hookbus knows of each before it loads anything heavy.

Every hook call reads this module on its cold path, so it is standard library only and
holds plain data. Per host it says where a payload comes from and where the event and
tool names sit in it, which environment variables or payload field name the project
root, how to recognise a second dialect reaching the same command, the unit the host's
configuration writes timeouts in, and the host's "no opinion" reply per native event
(which must be known before the driver is: an event nobody subscribes to is answered
without it). Everything else about a host lives in its driver
(``hookbus/drivers/<host>.py``) and its manifest (``hookbus/manifests/<host>.py``).

The CLI, the subscription index and handler validation all take host names from here.
"""

from __future__ import annotations

from hookbus.output import HookOutput

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
        #: which the host runs beside its settings (:mod:`hookbus.manifests.variants`).
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
        self, environ: Mapping[str, str], payload: Mapping[str, object] | None
    ) -> str | None:
        """The project root the host names (hooks may run in a folder the agent cd-ed to)."""
        for name in self.project_env:
            value = environ.get(name)
            if value:
                return value
        for path in self.project_paths if payload is not None else ():
            found = find(payload, path)  # type: ignore[arg-type]
            if isinstance(found, list) and found:
                found = found[0]
            if isinstance(found, str) and found:
                return found
        return None

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


#: Claude Code's events (hooks reference, 2.1.33x): read by its driver, and by the cold
#: path to tell a Claude payload from another host's that reaches a Claude command.
CLAUDE_EVENTS: tuple[str, ...] = (
    "SessionStart", "Setup", "InstructionsLoaded", "UserPromptSubmit", "UserPromptExpansion",
    "PreToolUse", "PermissionRequest", "PermissionDenied", "PostToolUse", "PostToolUseFailure",
    "PostToolBatch", "PreSkillShellCommand", "Notification", "MessageDisplay", "SubagentStart",
    "SubagentStop", "TaskCreated", "TaskCompleted", "TeammateIdle", "Stop", "StopFailure",
    "PreCompact", "PostCompact", "PreModelSwitch", "PostModelSwitch", "ConfigChange",
    "CwdChanged", "DirectoryAdded", "FileChanged", "WorktreeCreate", "WorktreeRemove",
    "Elicitation", "ElicitationResult", "SessionEnd",
)  # fmt: skip

#: Copilot CLI's camelCase events and their PascalCase aliases (the runtime's two name
#: lists, 1.0.102): read by its driver, and by a Claude command that gets a Copilot
#: payload (``hookbus.runtime.native_install``).
COPILOT_EVENTS: dict[str, str] = {
    "sessionStart": "SessionStart", "userPromptSubmitted": "UserPromptSubmit",
    "preToolUse": "PreToolUse", "permissionRequest": "PermissionRequest",
    "postToolUse": "PostToolUse", "postToolUseFailure": "PostToolUseFailure",
    "agentStop": "Stop", "subagentStart": "SubagentStart", "subagentStop": "SubagentStop",
    "preCompact": "PreCompact", "errorOccurred": "ErrorOccurred", "sessionEnd": "SessionEnd",
}  # fmt: skip

#: Claude Code's event names as Cursor reads them in a ``.claude/settings.json`` it runs
#: (cursor.com/docs/hooks, "third-party hooks": PreToolUse is its preToolUse ...): read by
#: its driver, and by a Claude command that gets a Cursor payload.
CURSOR_EVENTS: dict[str, str] = {
    "SessionStart": "sessionStart", "SessionEnd": "sessionEnd",
    "UserPromptSubmit": "beforeSubmitPrompt", "PreToolUse": "preToolUse",
    "PostToolUse": "postToolUse", "PostToolUseFailure": "postToolUseFailure",
    "SubagentStart": "subagentStart", "SubagentStop": "subagentStop",
    "PreCompact": "preCompact", "Stop": "stop",
}  # fmt: skip
#: Cursor's no-opinion: valid JSON on every event (a permission hook whose output is not
#: JSON is a failure, and ``failClosed`` turns that into a block), never a grant.
_CURSOR_QUIET = HookOutput(b"{}\n")
#: What the OpenCode and Kilo shim reads as "change nothing".
_OPENCODE_QUIET = HookOutput(b"{}\n")

HOSTS: dict[str, HostFacts] = {
    # Claude Code hooks reference: every input names its event in hook_event_name; 600 s
    # per command hook, UserPromptSubmit 30 s, SessionEnd hooks 1.5 s in all.
    "claude": HostFacts(
        "claude",
        driver="hookbus.drivers.claude",
        manifest="hookbus.manifests.claude",
        plugin="hookbus.manifests.claude_plugin",
        event_paths=(("hook_event_name",),),
        tool_paths=(("tool_name",),),
        project_env=("CLAUDE_PROJECT_DIR",),
        # Other hosts run .claude/settings.json hooks with payloads of their own. A payload
        # whose hook_event_name is a Claude event is Claude's, whatever else it carries (a
        # key Claude may add one day must not send its deny in a dialect it ignores),
        # unless it has a mark Claude could not plausibly send, or one that leaves hookbus
        # unsure. Cursor's cursor_version (cursor.com/docs/hooks, "third-party hooks") is
        # the first. Copilot CLI's PascalCase dialect is the second: a copy of Claude's
        # (hook_event_name "PreToolUse") whose only mark is an ISO timestamp, so a
        # Claude-named payload with a timestamp is decoded as Copilot's, the host that
        # sends such payloads today, and answered in a form both hosts act on (the
        # Copilot driver's reply to a Claude-named event), for a Claude that adds a
        # timestamp one day; only for the events Copilot sends so: a Claude-only event
        # (PreSkillShellCommand ...) with a timestamp stays Claude's. The others
        # are looked for only in a payload naming no Claude event: Grok's and VS Code's
        # hookEventName (Grok in snake_case, VS Code in PascalCase), and Copilot's
        # camelCase dialect (sessionId, timestamp, hookName, toolName; no event name).
        events=frozenset(CLAUDE_EVENTS),
        dialects=(
            Dialect("cursor", keys=("cursor_version",), decisive=True),
            # Before Copilot's: their payloads carry a timestamp too.
            Dialect("grok", spelled=("hookEventName", "snake_case")),
            Dialect("vscode", spelled=("hookEventName", "PascalCase")),
            Dialect(
                "copilot",
                keys=("timestamp",),
                decisive=True,
                events=frozenset(COPILOT_EVENTS.values()),
            ),
            Dialect("copilot", keys=("sessionId", "hookName", "toolName")),
        ),
        default_timeout=600.0,
        timeouts={"UserPromptSubmit": 30.0, "SessionEnd": 1.5, "MessageDisplay": 10.0},
    ),
    # Codex CLI 0.171.0 (embedded hook schemas, hooks docs, real runs offline): every input
    # names its event in hook_event_name; no project-root variable, the session's cwd is
    # the root. Timeouts are whole seconds, 600 by default; SessionEnd and Interrupt hooks
    # are clamped to 3 s. Empty stdout is the no-opinion of every event (a bare allow is
    # an error there), so the generic one serves them all.
    "codex": HostFacts(
        "codex",
        driver="hookbus.drivers.codex",
        manifest="hookbus.manifests.codex",
        event_paths=(("hook_event_name",),),
        tool_paths=(("tool_name",),),
        project_paths=(("cwd",),),
        no_opinion=HookOutput(),
        default_timeout=600.0,
        timeouts={"SessionEnd": 3.0, "Interrupt": 3.0},
    ),
    # Gemini CLI 0.61.0 (hooks/hookRunner.ts): hook_event_name in every input; 60000 ms per
    # hook unless its entry says otherwise, configured in milliseconds. Hooks get
    # GEMINI_PROJECT_DIR (and CLAUDE_PROJECT_DIR, GEMINI_CWD), all = the input's cwd. Any
    # text that is not JSON, with exit 2 or more, is a deny: "{}" is the no-opinion, except
    # on BeforeToolSelection, where any output rewrites the tool config.
    "gemini": HostFacts(
        "gemini",
        driver="hookbus.drivers.gemini",
        manifest="hookbus.manifests.gemini",
        event_paths=(("hook_event_name",),),
        tool_paths=(("tool_name",),),
        project_env=("GEMINI_PROJECT_DIR",),
        project_paths=(("cwd",),),
        no_opinion=HookOutput(b"{}\n"),
        no_opinion_by_event={"BeforeToolSelection": HookOutput()},
        default_timeout=60.0,
        timeout_unit="ms",
    ),
    # Cline CLI 3.0.65 (sdk/packages/core/src/hooks/subprocess.ts; real runs offline): an
    # executable per event in .clinerules/hooks/, named after it; the payload's hookName
    # is a wire name (tool_call), so the event comes from --event. The project root is
    # the first of workspaceRoots. Tool hooks get 120000 ms (the legacy VS Code
    # extension: 30 s); empty stdout is the no-opinion everywhere.
    "cline": HostFacts(
        "cline",
        driver="hookbus.drivers.cline",
        manifest="hookbus.manifests.cline",
        event_required=True,
        tool_paths=(
            ("tool_call", "name"),
            ("tool_result", "name"),
            ("preToolUse", "toolName"),
            ("postToolUse", "toolName"),
        ),
        project_paths=(("workspaceRoots",),),
        no_opinion=HookOutput(),
        default_timeout=120.0,
    ),
    # Qwen Code 0.24.4 (hooks/hookRunner.ts): hook_event_name in every input; 60000 ms per
    # hook unless its entry says otherwise, configured in milliseconds. Hooks get
    # QWEN_PROJECT_DIR (and GEMINI_PROJECT_DIR, CLAUDE_PROJECT_DIR), all = the input's cwd.
    # Claude-style replies: exit 0 with nothing printed is the no-opinion of every event.
    "qwen": HostFacts(
        "qwen",
        driver="hookbus.drivers.qwen",
        manifest="hookbus.manifests.qwen",
        event_paths=(("hook_event_name",),),
        tool_paths=(("tool_name",),),
        project_env=("QWEN_PROJECT_DIR",),
        project_paths=(("cwd",),),
        default_timeout=60.0,
        timeout_unit="ms",
    ),
    # GitHub Copilot CLI 1.0.102 (runtime settings schema, hooks reference, real runs
    # offline): camelCase hooks get no event name (permissionRequest aside, hookName), so
    # the manifest passes --event; PascalCase ones (and .claude/settings.json hooks) get
    # hook_event_name. Exit 0 with empty stdout is every event's no-opinion (exit 1
    # blocks). timeoutSec is whole seconds, 30 by default.
    "copilot": HostFacts(
        "copilot",
        driver="hookbus.drivers.copilot",
        manifest="hookbus.manifests.copilot",
        event_paths=(("hook_event_name",), ("hookName",)),
        event_required=True,
        tool_paths=(("toolName",), ("tool_name",)),
        # Copilot 1.0.102 sets both for a .claude/settings.json hook (a real run); a
        # Claude payload taken for Copilot's (its timestamp) has Claude's alone.
        project_env=("COPILOT_PROJECT_DIR", "CLAUDE_PROJECT_DIR"),
        project_paths=(("cwd",),),
        # VS Code runs .github/hooks/*.json too, camelCase events renamed PascalCase,
        # with its own payload: hookEventName, which no Copilot payload carries.
        dialects=(Dialect("vscode", spelled=("hookEventName", "PascalCase")),),
        no_opinion=HookOutput(),
        default_timeout=30.0,
    ),
    # VS Code agent hooks, the Local harness (hooks reference; Copilot Chat's
    # hookExecutor.ts): hookEventName in every input; the hook runs in the home folder
    # (the entry's cwd aside) with VSCODE_*, GITHUB_* and COPILOT_* taken out of its
    # environment, so the project is the payload's cwd. timeout is whole seconds, 30 by
    # default; exit 0 with empty stdout is every event's no-opinion. Copilot CLI reads
    # the same .github/hooks/ folder, and its PascalCase payloads carry hook_event_name.
    "vscode": HostFacts(
        "vscode",
        driver="hookbus.drivers.vscode",
        manifest="hookbus.manifests.vscode",
        event_paths=(("hookEventName",),),
        tool_paths=(("tool_name",),),
        project_paths=(("cwd",),),
        dialects=(Dialect("copilot", keys=("hook_event_name",)),),
        no_opinion=HookOutput(),
        default_timeout=30.0,
    ),
    # Kimi Code CLI 1.49.0 (MoonshotAI/kimi-cli@4a550ef, hooks/runner.py): hook_event_name
    # in every input; the hook runs in the session's work dir with Kimi's environment and
    # no variable of its own, so the project is the input's cwd. timeout is whole seconds
    # (1 to 600), 30 by default; empty stdout is every event's no-opinion.
    "kimi": HostFacts(
        "kimi",
        driver="hookbus.drivers.kimi",
        manifest="hookbus.manifests.kimi",
        event_paths=(("hook_event_name",),),
        tool_paths=(("tool_name",),),
        project_paths=(("cwd",),),
        no_opinion=HookOutput(),
        default_timeout=30.0,
    ),
    # Cursor (cursor.com/docs/hooks, 2026-08): every input names its event in
    # hook_event_name (camelCase); hooks get CURSOR_PROJECT_DIR (and CLAUDE_PROJECT_DIR),
    # else the first workspace root. "{}" is the no-opinion, except where an answer is
    # owed: subagentStart always says allow or deny, beforeSubmitPrompt says continue.
    # timeout is whole seconds; the "platform default" is not published: 60 assumed.
    "cursor": HostFacts(
        "cursor",
        driver="hookbus.drivers.cursor",
        manifest="hookbus.manifests.cursor",
        event_paths=(("hook_event_name",),),
        tool_paths=(("tool_name",),),
        project_env=("CURSOR_PROJECT_DIR",),
        project_paths=(("workspace_roots",), ("cwd",)),
        no_opinion=_CURSOR_QUIET,
        no_opinion_by_event={
            "subagentStart": HookOutput(b'{"permission":"allow"}\n'),
            "beforeSubmitPrompt": HookOutput(b'{"continue":true}\n'),
        },
        default_timeout=60.0,
    ),
    # Google Antigravity agy 1.2.17-1.3.1 (live captures and probe in ajms/orchestrator;
    # docs/hosts/antigravity.md): payloads never name their event, so the manifest passes
    # --event; hooks run in .agents/, the project is workspacePaths[0]. PreToolUse fails
    # closed ({} or nothing denies): its no-opinion is {"decision":"ask"}; every other
    # result message takes {} (an unknown field rejects a reply). Timeouts are whole
    # seconds; the host's default is not published (30 s assumed; ours are always set).
    "antigravity": HostFacts(
        "antigravity",
        driver="hookbus.drivers.antigravity",
        manifest="hookbus.manifests.antigravity",
        event_required=True,
        tool_paths=(("toolCall", "name"),),
        project_paths=(("workspacePaths",),),
        no_opinion=HookOutput(b"{}\n"),
        no_opinion_by_event={"PreToolUse": HookOutput(b'{"decision":"ask"}\n')},
        default_timeout=30.0,
    ),
    # Factory Droid (hooks reference, Factory-AI/factory@a80aa7c5): hook_event_name in every
    # input; FACTORY_PROJECT_DIR is the project root ("where Droid was started"); 60 s
    # per command unless its entry says otherwise, in seconds. Claude-style replies: exit
    # 0 with nothing printed is the no-opinion of every event.
    "droid": HostFacts(
        "droid",
        driver="hookbus.drivers.droid",
        manifest="hookbus.manifests.droid",
        event_paths=(("hook_event_name",),),
        tool_paths=(("tool_name",),),
        project_env=("FACTORY_PROJECT_DIR",),
        project_paths=(("cwd",),),
        default_timeout=60.0,
    ),
    # Qoder CLI (docs.qoder.com/en/cli/hooks; Qoder Agent SDK reference): hook_event_name
    # in every input; timeouts in seconds, the default 600 in the newer page and 60 in the
    # older one and the SDK (the shorter is assumed). No project-root variable is
    # documented (QODER_PROJECT_DIR is only reported): the input's cwd is the root.
    # Claude-style replies: exit 0 with nothing printed is every event's no-opinion.
    "qoder": HostFacts(
        "qoder",
        driver="hookbus.drivers.qoder",
        manifest="hookbus.manifests.qoder",
        event_paths=(("hook_event_name",),),
        tool_paths=(("tool_name",),),
        project_paths=(("cwd",),),
        default_timeout=60.0,
    ),
    # Kiro (docs and third-party captures; docs/hosts/kiro.md): the CLI's agent-config
    # hooks and the IDE 1.x / CLI V3 hook files name their event in hook_event_name; the
    # IDE 0.x passes a payload naming none in USER_PROMPT (stdin never closes there), so
    # the manifest passes --event. Exit 0 with nothing printed is every event's
    # no-opinion. The CLI waits 30 s by default (timeout_ms 30000), the hook files
    # write whole seconds.
    "kiro": HostFacts(
        "kiro",
        driver="hookbus.drivers.kiro",
        manifest="hookbus.manifests.kiro",
        event_paths=(("hook_event_name",),),
        event_required=True,
        tool_paths=(("tool_name",), ("toolName",)),
        project_paths=(("cwd",),),
        payload_env="USER_PROMPT",
        no_opinion=HookOutput(),
        default_timeout=30.0,
    ),
    # Windsurf Cascade Hooks (https://docs.windsurf.com/windsurf/cascade/hooks): the event
    # in agent_action_name; the reply is the exit code alone (2 blocks a pre_* hook),
    # so exit 0 with nothing printed is every event's no-opinion. hooks.json has no
    # timeout field and the page names no limit: 30 s is hookbus's own bound when the
    # command gives none. No project-root variable: hooks run in the workspace root.
    "windsurf": HostFacts(
        "windsurf",
        driver="hookbus.drivers.windsurf",
        manifest="hookbus.manifests.windsurf",
        event_paths=(("agent_action_name",),),
        no_opinion=HookOutput(),
        default_timeout=30.0,
    ),
    # goose (block/goose crates/goose/src/hooks/mod.rs): hooks in plugins, the event in
    # "event"; 30 s per command unless its entry says otherwise, in seconds. Only
    # PreToolUse and Stop read a decision; exit 0 with nothing printed is an allow there
    # and ignored everywhere else: every event's no-opinion. The session's folder is
    # working_dir (tool events only).
    "goose": HostFacts(
        "goose",
        driver="hookbus.drivers.goose",
        manifest="hookbus.manifests.goose",
        event_paths=(("event",),),
        tool_paths=(("tool_name",),),
        project_paths=(("working_dir",),),
        no_opinion=HookOutput(),
        default_timeout=30.0,
    ),
    # xAI Grok Build (xai-org/grok-build@19d42e3, crates/codegen/xai-grok-hooks): a camelCase
    # envelope whose hookEventName is the snake_case event (pre_tool_use), with the
    # workspace root in GROK_WORKSPACE_ROOT and workspaceRoot. Timeouts are whole seconds,
    # 5 by default, 600 for the stop gates (config.rs). Every failure fails open and exit 0
    # with nothing printed is every event's no-opinion.
    "grok": HostFacts(
        "grok",
        driver="hookbus.drivers.grok",
        manifest="hookbus.manifests.grok",
        event_paths=(("hookEventName",),),
        tool_paths=(("toolName",),),
        project_env=("GROK_WORKSPACE_ROOT",),
        project_paths=(("workspaceRoot",), ("cwd",)),
        default_timeout=5.0,
        timeouts={"stop": 600.0, "subagent_stop": 600.0},
    ),
    # OpenHands (OpenHands/software-agent-sdk@611629e, openhands-sdk/.../hooks): every
    # payload names its event in event_type; hooks run in the working dir with
    # OPENHANDS_PROJECT_DIR set to it. Timeouts are whole seconds, 60 by default; exit 0
    # with nothing printed is every event's no-opinion, and every failure fails open.
    "openhands": HostFacts(
        "openhands",
        driver="hookbus.drivers.openhands",
        manifest="hookbus.manifests.openhands",
        event_paths=(("event_type",),),
        tool_paths=(("tool_name",),),
        project_env=("OPENHANDS_PROJECT_DIR",),
        project_paths=(("working_dir",),),
        default_timeout=60.0,
    ),
    # Pi's coding agent 0.73.1 (@mariozechner/pi-coding-agent: dist/core/extensions): no
    # hook commands; hookbus's extension (.pi/extensions/hookbus.ts) forwards each wanted
    # event as one JSON object naming it in "event", with the session's cwd beside it,
    # and applies one JSON object back: "{}" is every event's no-opinion. Pi waits for
    # extensions without any limit, so the extension bounds its own wait (the command's
    # --timeout plus 2 s); 30 s is hookbus's bound for a call that names none.
    "pi": HostFacts(
        "pi",
        driver="hookbus.drivers.pi",
        manifest="hookbus.manifests.pi",
        event_paths=(("event",),),
        tool_paths=(("payload", "toolName"),),
        project_paths=(("cwd",),),
        no_opinion=HookOutput(b"{}\n"),
        default_timeout=30.0,
    ),
    # Hermes Agent 0.19.0 (agent/shell_hooks.py, hermes_cli/plugins.py; real runs offline):
    # shell hooks and hookbus's plugin hand the same envelope, hook_event_name in it; the
    # hook runs in the agent's working folder, which the envelope's cwd names. Shell hook
    # timeouts are whole seconds (60 by default, at most 300); plugin callbacks have no
    # timeout in 0.19.0, so hookbus's plugin bounds each call at 10 s and hookbus answers
    # within 8. Nothing printed is every event's no-opinion (exit codes are not read).
    "hermes": HostFacts(
        "hermes",
        driver="hookbus.drivers.hermes",
        manifest="hookbus.manifests.hermes",
        event_paths=(("hook_event_name",),),
        tool_paths=(("tool_name",),),
        project_paths=(("cwd",),),
        no_opinion=HookOutput(),
        default_timeout=8.0,
    ),
    # OpenCode 1.18.33 (plugin API v1; docs/hosts/opencode.md): plugins run in its own
    # process, so hookbus's plugin (hookbus/shims/opencode.js) hands each hook to the
    # command as one JSON object naming it in "hook", with the project in "directory"
    # and the tool in input.tool. OpenCode waits on a plugin without any limit: the shim
    # bounds its own wait a little past the command's --timeout. "{}" changes nothing.
    "opencode": HostFacts(
        "opencode",
        driver="hookbus.drivers.opencode",
        manifest="hookbus.manifests.opencode",
        event_paths=(("hook",),),
        tool_paths=(("input", "tool"),),
        project_paths=(("directory",),),
        no_opinion=_OPENCODE_QUIET,
        default_timeout=10.0,
    ),
    # Kilo CLI 7.7.7, an OpenCode descendant: the same plugin API and the same shim,
    # from .kilo/plugin/ (docs/hosts/kilo.md).
    "kilo": HostFacts(
        "kilo",
        driver="hookbus.drivers.kilo",
        manifest="hookbus.manifests.kilo",
        event_paths=(("hook",),),
        tool_paths=(("input", "tool"),),
        project_paths=(("directory",),),
        no_opinion=_OPENCODE_QUIET,
        default_timeout=10.0,
    ),
}

#: Host names a handler may filter on before their driver exists: a typo fails when the
#: bus is built, while a handler written for a host whose driver comes later does not.
PLANNED_HOSTS: frozenset[str] = frozenset()


def is_known(host: str) -> bool:
    """True for a host with a driver, or one whose driver is planned."""
    return host in HOSTS or host in PLANNED_HOSTS


def known_names() -> list[str]:
    return sorted({*HOSTS, *PLANNED_HOSTS})


def facts(host: str) -> HostFacts:
    """The facts of ``host``; KeyError naming the known hosts."""
    found = HOSTS.get(host)
    if found is None:
        raise KeyError(f"unknown host {host!r}; known: {', '.join(sorted(HOSTS))}")
    return found


def register(host: HostFacts) -> None:
    """Add a host (tests register a toy one through their own launcher, never hooks)."""
    HOSTS[host.name] = host
