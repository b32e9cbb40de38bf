"""Kimi Code CLI's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import HostFacts

# Kimi Code CLI 1.49.0 (MoonshotAI/kimi-cli@4a550ef, hooks/runner.py): hook_event_name
# in every input; the hook runs in the session's work dir with Kimi's environment and
# no variable of its own, so the project is the input's cwd. timeout is whole seconds
# (1 to 600), 30 by default; empty stdout is every event's no-opinion.
FACTS = HostFacts(
    "kimi",
    driver="hookbus.hosts.kimi.driver",
    manifest="hookbus.hosts.kimi.manifest",
    event_paths=(("hook_event_name",),),
    tool_paths=(("tool_name",),),
    project_paths=(("cwd",),),
    no_opinion=HookOutput(),
    default_timeout=30.0,
)
