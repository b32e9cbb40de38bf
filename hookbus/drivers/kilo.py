"""The Kilo driver: Kilo CLI 7.7.7 (``@kilocode/cli``), an OpenCode descendant.

Kilo keeps OpenCode's plugin API v1 unchanged (the same hooks, inputs, outputs and tool
names in real 7.7.7 runs, ``tests/golden/kilo``), reads plugins from ``.kilo/plugin/``
and runs the same shim. So this is OpenCode's driver (:mod:`hookbus.drivers.opencode`,
where the wire format is described) with Kilo's facts and samples.
"""

from typing import ClassVar

from hookbus.drivers.opencode import OpenCodeDriver
from hookbus.hosts import HOSTS


class KiloDriver(OpenCodeDriver):
    name: ClassVar[str] = "kilo"
    facts = HOSTS["kilo"]
    samples: ClassVar[str | None] = "hookbus.drivers.opencode_samples"


driver = KiloDriver()
