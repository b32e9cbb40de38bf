"""Kilo CLI's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import HostFacts

# Kilo CLI 7.7.7, an OpenCode descendant: the same plugin API and the same shim,
# from .kilo/plugin/ (docs/hosts/kilo.md).
FACTS = HostFacts(
    "kilo",
    driver="hookbus.hosts.kilo.driver",
    manifest="hookbus.hosts.kilo.manifest",
    event_paths=(("hook",),),
    tool_paths=(("input", "tool"),),
    project_paths=(("directory",),),
    no_opinion=HookOutput(b"{}\n"),  # the shim changes nothing
    default_timeout=10.0,
)
