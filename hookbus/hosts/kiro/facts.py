"""Kiro's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import HostFacts

# Kiro (docs and third-party captures; docs/hosts/kiro.md): the CLI's agent-config
# hooks and the IDE 1.x / CLI V3 hook files name their event in hook_event_name; the
# IDE 0.x passes a payload naming none in USER_PROMPT (stdin never closes there), so
# the manifest passes --event. Exit 0 with nothing printed is every event's
# no-opinion. The CLI waits 30 s by default (timeout_ms 30000), the hook files
# write whole seconds.
FACTS = HostFacts(
    "kiro",
    driver="hookbus.hosts.kiro.driver",
    manifest="hookbus.hosts.kiro.manifest",
    event_paths=(("hook_event_name",),),
    event_required=True,
    tool_paths=(("tool_name",), ("toolName",)),
    project_paths=(("cwd",),),
    payload_env="USER_PROMPT",
    no_opinion=HookOutput(),
    default_timeout=30.0,
)
