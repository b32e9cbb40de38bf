"""Hermes Agent's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import HostFacts

# Hermes Agent 0.19.0 (agent/shell_hooks.py, hermes_cli/plugins.py; real runs offline):
# shell hooks and hookbus's plugin hand the same envelope, hook_event_name in it; the
# hook runs in the agent's working folder, which the envelope's cwd names. Shell hook
# timeouts are whole seconds (60 by default, at most 300); plugin callbacks have no
# timeout in 0.19.0, so hookbus's plugin bounds each call at 10 s and hookbus answers
# within 8. Nothing printed is every event's no-opinion (exit codes are not read).
FACTS = HostFacts(
    "hermes",
    driver="hookbus.hosts.hermes.driver",
    manifest="hookbus.hosts.hermes.manifest",
    event_paths=(("hook_event_name",),),
    tool_paths=(("tool_name",),),
    project_paths=(("cwd",),),
    no_opinion=HookOutput(),
    default_timeout=8.0,
)
