"""The Kilo driver: Kilo CLI 7.7.7 (``@kilocode/cli``), an OpenCode descendant.

Kilo keeps OpenCode's plugin API v1 unchanged (the same hooks, inputs, outputs and tool
names in real 7.7.7 runs, ``tests/golden/kilo``), reads plugins from ``.kilo/plugin/``
and runs the same shim. So this is OpenCode's plugin API
(:mod:`hookbus.hosts.shared.opencode_api`, where the wire format is described) with
Kilo's facts and samples.
"""

from typing import ClassVar

from hookbus.hosts.kilo.facts import FACTS
from hookbus.hosts.shared.opencode_api import OpenCodeApiDriver


class KiloDriver(OpenCodeApiDriver):
    name: ClassVar[str] = "kilo"
    facts = FACTS
    samples: ClassVar[str | None] = "hookbus.hosts.kilo.samples"


driver = KiloDriver()
