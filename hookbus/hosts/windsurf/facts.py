"""Windsurf's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import HostFacts

# Windsurf Cascade Hooks (https://docs.windsurf.com/windsurf/cascade/hooks): the event
# in agent_action_name; the reply is the exit code alone (2 blocks a pre_* hook),
# so exit 0 with nothing printed is every event's no-opinion. hooks.json has no
# timeout field and the page names no limit: 30 s is hookbus's own bound when the
# command gives none. No project-root variable: hooks run in the workspace root.
FACTS = HostFacts(
    "windsurf",
    driver="hookbus.hosts.windsurf.driver",
    manifest="hookbus.hosts.windsurf.manifest",
    event_paths=(("agent_action_name",),),
    no_opinion=HookOutput(),
    default_timeout=30.0,
)
