"""goose's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import HostFacts

# goose (block/goose crates/goose/src/hooks/mod.rs): hooks in plugins, the event in
# "event"; 30 s per command unless its entry says otherwise, in seconds. Only
# PreToolUse and Stop read a decision; exit 0 with nothing printed is an allow there
# and ignored everywhere else: every event's no-opinion. The session's folder is
# working_dir (tool events only).
FACTS = HostFacts(
    "goose",
    driver="hookbus.hosts.goose.driver",
    manifest="hookbus.hosts.goose.manifest",
    event_paths=(("event",),),
    tool_paths=(("tool_name",),),
    project_paths=(("working_dir",),),
    no_opinion=HookOutput(),
    default_timeout=30.0,
)
