"""Claude Code's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.hosts.shared.facts import Dialect, HostFacts
from hookbus.hosts.shared.names import CLAUDE_EVENTS, COPILOT_EVENTS

# Claude Code hooks reference: every input names its event in hook_event_name; 600 s
# per command hook, UserPromptSubmit 30 s, SessionEnd hooks 1.5 s in all.
FACTS = HostFacts(
    "claude",
    driver="hookbus.hosts.claude.driver",
    manifest="hookbus.hosts.claude.manifest",
    plugin="hookbus.hosts.claude.plugin",
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
)
