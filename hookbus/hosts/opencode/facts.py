"""OpenCode's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import HostFacts

# OpenCode 1.18.33 (plugin API v1; docs/hosts/opencode.md): plugins run in its own
# process, so hookbus's plugin (hookbus/hosts/shared/opencode.js) hands each hook to the
# command as one JSON object naming it in "hook", with the project in "directory"
# and the tool in input.tool. OpenCode waits on a plugin without any limit: the shim
# bounds its own wait a little past the command's --timeout. "{}" changes nothing.
FACTS = HostFacts(
    "opencode",
    driver="hookbus.hosts.opencode.driver",
    manifest="hookbus.hosts.opencode.manifest",
    event_paths=(("hook",),),
    tool_paths=(("input", "tool"),),
    project_paths=(("directory",),),
    no_opinion=HookOutput(b"{}\n"),
    default_timeout=10.0,
)
