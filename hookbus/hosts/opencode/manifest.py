"""OpenCode's plugin: hookbus's shim (:mod:`hookbus.hosts.shared.opencode_plugin`) in
OpenCode's folders. OpenCode 1.18.33 loads plugins from ``.opencode/plugin/`` (project)
and ``~/.config/opencode/plugin/`` (user), and installs ``@opencode-ai/plugin`` into each
of its config folders."""

from __future__ import annotations

from typing import ClassVar

from hookbus.hosts.opencode.driver import driver
from hookbus.hosts.opencode.facts import FACTS
from hookbus.hosts.shared.opencode_plugin import OpenCodePluginManifest


class OpenCodeManifest(OpenCodePluginManifest):
    facts = FACTS
    driver = driver
    folder: ClassVar[str] = ".opencode"
    user_folder: ClassVar[str] = "opencode"
    package: ClassVar[str] = "@opencode-ai/plugin"


manifest = OpenCodeManifest()
