"""Cline CLI's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import HostFacts

# Cline CLI 3.0.65 (sdk/packages/core/src/hooks/subprocess.ts; real runs offline): an
# executable per event in .clinerules/hooks/, named after it; the payload's hookName
# is a wire name (tool_call), so the event comes from --event. The project root is
# the first of workspaceRoots. Tool hooks get 120000 ms (the legacy VS Code
# extension: 30 s); empty stdout is the no-opinion everywhere.
FACTS = HostFacts(
    "cline",
    driver="hookbus.hosts.cline.driver",
    manifest="hookbus.hosts.cline.manifest",
    event_required=True,
    tool_paths=(
        ("tool_call", "name"),
        ("tool_result", "name"),
        ("preToolUse", "toolName"),
        ("postToolUse", "toolName"),
    ),
    project_paths=(("workspaceRoots",),),
    no_opinion=HookOutput(),
    default_timeout=120.0,
)
