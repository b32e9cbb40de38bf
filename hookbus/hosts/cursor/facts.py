"""Cursor's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import HostFacts

# Cursor (cursor.com/docs/hooks, 2026-08): every input names its event in
# hook_event_name (camelCase); hooks get CURSOR_PROJECT_DIR (and CLAUDE_PROJECT_DIR),
# else the first workspace root. "{}" is the no-opinion, except where an answer is
# owed: subagentStart always says allow or deny, beforeSubmitPrompt says continue.
# timeout is whole seconds; the "platform default" is not published: 60 assumed.
FACTS = HostFacts(
    "cursor",
    driver="hookbus.hosts.cursor.driver",
    manifest="hookbus.hosts.cursor.manifest",
    event_paths=(("hook_event_name",),),
    tool_paths=(("tool_name",),),
    project_env=("CURSOR_PROJECT_DIR",),
    project_paths=(("workspace_roots",), ("cwd",)),
    # Valid JSON on every event (a permission hook whose output is not JSON is a failure,
    # and failClosed turns that into a block), never a grant.
    no_opinion=HookOutput(b"{}\n"),
    no_opinion_by_event={
        "subagentStart": HookOutput(b'{"permission":"allow"}\n'),
        "beforeSubmitPrompt": HookOutput(b'{"continue":true}\n'),
    },
    default_timeout=60.0,
)
