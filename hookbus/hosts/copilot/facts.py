"""GitHub Copilot CLI's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import Dialect, HostFacts

# GitHub Copilot CLI 1.0.102 (runtime settings schema, hooks reference, real runs
# offline): camelCase hooks get no event name (permissionRequest aside, hookName), so
# the manifest passes --event; PascalCase ones (and .claude/settings.json hooks) get
# hook_event_name. Exit 0 with empty stdout is every event's no-opinion (exit 1
# blocks). timeoutSec is whole seconds, 30 by default.
FACTS = HostFacts(
    "copilot",
    driver="hookbus.hosts.copilot.driver",
    manifest="hookbus.hosts.copilot.manifest",
    event_paths=(("hook_event_name",), ("hookName",)),
    event_required=True,
    tool_paths=(("toolName",), ("tool_name",)),
    # Copilot 1.0.102 sets both for a .claude/settings.json hook (a real run); a
    # Claude payload taken for Copilot's (its timestamp) has Claude's alone.
    project_env=("COPILOT_PROJECT_DIR", "CLAUDE_PROJECT_DIR"),
    project_paths=(("cwd",),),
    # VS Code runs .github/hooks/*.json too, camelCase events renamed PascalCase,
    # with its own payload: hookEventName, which no Copilot payload carries.
    dialects=(Dialect("vscode", spelled=("hookEventName", "PascalCase")),),
    no_opinion=HookOutput(),
    default_timeout=30.0,
)
