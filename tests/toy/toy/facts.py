"""The toy host's facts: what the cold path knows of it before its driver loads
(:mod:`hookbus.hosts.shared.facts`)."""

from __future__ import annotations

from hookbus.bus.output import HookOutput
from hookbus.hosts.shared.facts import HostFacts

#: Its no-opinion, never empty: an empty answer means deny.
PASS = HookOutput(b'{"verdict":"pass"}\n')

# Its payloads never name their event (the command's --event does); the tool's name is
# nested; the project root is a payload field; timeouts are in milliseconds.
FACTS = HostFacts(
    "toy",
    driver="toy.driver",
    event_paths=(),
    event_required=True,
    tool_paths=(("call", "tool", "name"),),
    project_paths=(("roots",),),
    no_opinion=PASS,
    # On Ping nothing is ever expected back.
    no_opinion_by_event={"Ping": HookOutput()},
    default_timeout=20.0,
    timeouts={"Halt": 3.0},
    timeout_unit="ms",
)
