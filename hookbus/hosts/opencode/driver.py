"""The OpenCode driver: OpenCode's plugin API (:mod:`hookbus.hosts.shared.opencode_api`,
where the shim's wire format is described) with OpenCode's facts and samples."""

from typing import ClassVar

from hookbus.hosts.opencode.facts import FACTS
from hookbus.hosts.shared.opencode_api import OpenCodeApiDriver


class OpenCodeDriver(OpenCodeApiDriver):
    name: ClassVar[str] = "opencode"
    facts = FACTS
    samples: ClassVar[str | None] = "hookbus.hosts.opencode.samples"


driver = OpenCodeDriver()
