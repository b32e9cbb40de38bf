"""Pi's coding agent's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import HostFacts

# Pi's coding agent 0.73.1 (@mariozechner/pi-coding-agent: dist/core/extensions): no
# hook commands; hookbus's extension (.pi/extensions/hookbus.ts) forwards each wanted
# event as one JSON object naming it in "event", with the session's cwd beside it,
# and applies one JSON object back: "{}" is every event's no-opinion. Pi waits for
# extensions without any limit, so the extension bounds its own wait (the command's
# --timeout plus 2 s); 30 s is hookbus's bound for a call that names none.
FACTS = HostFacts(
    "pi",
    driver="hookbus.hosts.pi.driver",
    manifest="hookbus.hosts.pi.manifest",
    event_paths=(("event",),),
    tool_paths=(("payload", "toolName"),),
    project_paths=(("cwd",),),
    no_opinion=HookOutput(b"{}\n"),
    default_timeout=30.0,
)
