"""Google Antigravity's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import HostFacts

# Google Antigravity agy 1.2.17-1.3.1 (live captures and probe in ajms/orchestrator;
# docs/hosts/antigravity.md): payloads never name their event, so the manifest passes
# --event; hooks run in .agents/, the project is workspacePaths[0]. PreToolUse fails
# closed ({} or nothing denies): its no-opinion is {"decision":"ask"}; every other
# result message takes {} (an unknown field rejects a reply). Timeouts are whole
# seconds; the host's default is not published (30 s assumed; ours are always set).
FACTS = HostFacts(
    "antigravity",
    driver="hookbus.hosts.antigravity.driver",
    manifest="hookbus.hosts.antigravity.manifest",
    event_required=True,
    tool_paths=(("toolCall", "name"),),
    project_paths=(("workspacePaths",),),
    no_opinion=HookOutput(b"{}\n"),
    no_opinion_by_event={"PreToolUse": HookOutput(b'{"decision":"ask"}\n')},
    default_timeout=30.0,
)
