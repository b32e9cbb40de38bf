"""Qoder CLI's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.hosts.shared.facts import HostFacts

# Qoder CLI (docs.qoder.com/en/cli/hooks; Qoder Agent SDK reference): hook_event_name
# in every input; timeouts in seconds, the default 600 in the newer page and 60 in the
# older one and the SDK (the shorter is assumed). No project-root variable is
# documented (QODER_PROJECT_DIR is only reported): the input's cwd is the root.
# Claude-style replies: exit 0 with nothing printed is every event's no-opinion.
FACTS = HostFacts(
    "qoder",
    driver="hookbus.hosts.qoder.driver",
    manifest="hookbus.hosts.qoder.manifest",
    event_paths=(("hook_event_name",),),
    tool_paths=(("tool_name",),),
    project_paths=(("cwd",),),
    default_timeout=60.0,
)
