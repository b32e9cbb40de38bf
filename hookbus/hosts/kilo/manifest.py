"""Kilo's plugin: hookbus's shim (:mod:`hookbus.hosts.shared.opencode_plugin`) in Kilo's
folders. Kilo CLI 7.7.7 loads plugins from ``.kilo/plugin/`` (project) and
``~/.config/kilo/plugin/`` (user), and installs ``@kilocode/plugin`` into each of its
config folders the way OpenCode installs ``@opencode-ai/plugin``."""

from __future__ import annotations

from typing import ClassVar

from hookbus.hosts.kilo.driver import driver
from hookbus.hosts.kilo.facts import FACTS
from hookbus.hosts.shared.opencode_plugin import OpenCodePluginManifest


class KiloManifest(OpenCodePluginManifest):
    facts = FACTS
    driver = driver
    folder: ClassVar[str] = ".kilo"
    user_folder: ClassVar[str] = "kilo"
    package: ClassVar[str] = "@kilocode/plugin"


manifest = KiloManifest()
