"""OpenHands's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.hosts.shared.facts import HostFacts

# OpenHands (OpenHands/software-agent-sdk@611629e, openhands-sdk/.../hooks): every
# payload names its event in event_type; hooks run in the working dir with
# OPENHANDS_PROJECT_DIR set to it. Timeouts are whole seconds, 60 by default; exit 0
# with nothing printed is every event's no-opinion, and every failure fails open.
FACTS = HostFacts(
    "openhands",
    driver="hookbus.hosts.openhands.driver",
    manifest="hookbus.hosts.openhands.manifest",
    event_paths=(("event_type",),),
    tool_paths=(("tool_name",),),
    project_env=("OPENHANDS_PROJECT_DIR",),
    project_paths=(("working_dir",),),
    default_timeout=60.0,
)
