"""xAI Grok Build's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.hosts.shared.facts import HostFacts

# xAI Grok Build (xai-org/grok-build@19d42e3, crates/codegen/xai-grok-hooks): a camelCase
# envelope whose hookEventName is the snake_case event (pre_tool_use), with the
# workspace root in GROK_WORKSPACE_ROOT and workspaceRoot. Timeouts are whole seconds,
# 5 by default, 600 for the stop gates (config.rs). Every failure fails open and exit 0
# with nothing printed is every event's no-opinion.
FACTS = HostFacts(
    "grok",
    driver="hookbus.hosts.grok.driver",
    manifest="hookbus.hosts.grok.manifest",
    event_paths=(("hookEventName",),),
    tool_paths=(("toolName",),),
    project_env=("GROK_WORKSPACE_ROOT",),
    project_paths=(("workspaceRoot",), ("cwd",)),
    default_timeout=5.0,
    timeouts={"stop": 600.0, "subagent_stop": 600.0},
)
