"""VS Code agent hooks's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import Dialect, HostFacts

# VS Code agent hooks, the Local harness (hooks reference; Copilot Chat's
# hookExecutor.ts): hookEventName in every input; the hook runs in the home folder
# (the entry's cwd aside) with VSCODE_*, GITHUB_* and COPILOT_* taken out of its
# environment, so the project is the payload's cwd. timeout is whole seconds, 30 by
# default; exit 0 with empty stdout is every event's no-opinion. Copilot CLI reads
# the same .github/hooks/ folder, and its PascalCase payloads carry hook_event_name.
FACTS = HostFacts(
    "vscode",
    driver="hookbus.hosts.vscode.driver",
    manifest="hookbus.hosts.vscode.manifest",
    event_paths=(("hookEventName",),),
    tool_paths=(("tool_name",),),
    project_paths=(("cwd",),),
    dialects=(Dialect("copilot", keys=("hook_event_name",)),),
    no_opinion=HookOutput(),
    default_timeout=30.0,
)
