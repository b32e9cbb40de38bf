"""Factory Droid's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.hosts.shared.facts import HostFacts

# Factory Droid (hooks reference, Factory-AI/factory@a80aa7c5): hook_event_name in every
# input; FACTORY_PROJECT_DIR is the project root ("where Droid was started"); 60 s
# per command unless its entry says otherwise, in seconds. Claude-style replies: exit
# 0 with nothing printed is the no-opinion of every event.
FACTS = HostFacts(
    "droid",
    driver="hookbus.hosts.droid.driver",
    manifest="hookbus.hosts.droid.manifest",
    event_paths=(("hook_event_name",),),
    tool_paths=(("tool_name",),),
    project_env=("FACTORY_PROJECT_DIR",),
    project_paths=(("cwd",),),
    default_timeout=60.0,
)
