"""Codex CLI's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import HostFacts

# Codex CLI 0.171.0 (embedded hook schemas, hooks docs, real runs offline): every input
# names its event in hook_event_name; no project-root variable, the session's cwd is
# the root. Timeouts are whole seconds, 600 by default; SessionEnd and Interrupt hooks
# are clamped to 3 s. Empty stdout is the no-opinion of every event (a bare allow is
# an error there), so the generic one serves them all.
FACTS = HostFacts(
    "codex",
    driver="hookbus.hosts.codex.driver",
    manifest="hookbus.hosts.codex.manifest",
    event_paths=(("hook_event_name",),),
    tool_paths=(("tool_name",),),
    project_paths=(("cwd",),),
    no_opinion=HookOutput(),
    default_timeout=600.0,
    timeouts={"SessionEnd": 3.0, "Interrupt": 3.0},
)
