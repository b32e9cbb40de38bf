"""Every way hookbus installs into one host, and where each is installed now: the one
place ``doctor``, ``install`` and ``uninstall`` ask, so that none overlooks one.

Most hosts have one manifest, whatever it writes (settings entries, hook files, a
plugin or shim of hookbus's own, or, for Hermes, both a plugin and shell hooks). Claude
has two: its settings files, and hookbus's own plugin folder (``install --plugin``,
:mod:`hookbus.hosts.claude.plugin`). Claude runs the hooks of both (an identical
command in several *settings* files runs once, a plugin's copy runs again: its hooks
reference), so installed both ways every handler would run twice for every event.

Never imported on a hook's path.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from hookbus.hosts.shared.manifest import Manifest, Scope


class Variant(NamedTuple):
    """One way hookbus installs into a host."""

    #: ``default`` (what ``hookbus install --host H`` writes) or ``plugin``.
    name: str
    manifest: Manifest

    @property
    def flag(self) -> str:
        """The flag of ``hookbus install`` that selects it, with its leading space ("" or
        " --plugin"), ready to put in a command."""
        return "" if self.name == "default" else f" --{self.name}"


class Found(NamedTuple):
    """A variant installed in one scope: the files that hold hookbus's install there."""

    variant: Variant
    scope: Scope
    paths: list[str]

    def command(self, verb: str) -> str:
        """``hookbus VERB --host H [--plugin] [--scope S]`` for this install."""
        host = self.variant.manifest.facts.name
        flags = self.variant.flag + (f" --scope {self.scope}" if self.scope != "project" else "")
        return f"hookbus {verb} --host {host}{flags}"


def variants(host: str) -> tuple[Variant, ...]:
    """``host``'s variants: its manifest, then its plugin's where it has one (KeyError
    when it has no manifest)."""
    import importlib

    from hookbus.hosts import facts, manifest

    found = [Variant("default", manifest(host))]
    plugin = facts(host).plugin
    if plugin is not None:
        found.append(Variant("plugin", importlib.import_module(plugin).manifest))
    return tuple(found)


def variant(host: str, *, plugin: bool = False) -> Variant:
    """The variant ``install`` writes: the plugin's with ``--plugin``, else the default;
    HostConfigError when ``host`` has no plugin."""
    from hookbus.bus.errors import HostConfigError
    from hookbus.hosts import HOSTS

    if not plugin:
        return variants(host)[0]
    if HOSTS[host].plugin is None:
        having = ", ".join(f"--host {name}" for name, f in HOSTS.items() if f.plugin)
        raise HostConfigError(f"--plugin is for {having} only, not {host}")
    return variants(host)[1]


def installed(host: str, *, besides: str | None = None) -> list[Found]:
    """Every variant of ``host`` (but the one named ``besides``) installed in every
    scope, as seen from the project here (the host runs them all)."""
    found = []
    for each in variants(host):
        if each.name == besides:
            continue
        for scope in each.manifest.scopes:
            paths = installed_files(each.manifest, scope)
            if paths:
                found.append(Found(each, scope, paths))
    return found


def installed_files(manifest: Manifest, scope: Scope) -> list[str]:
    """The files of ``scope`` that hold hookbus's install by ``manifest``: a settings
    file holding its commands, a file it owns (holding the mark). A file that cannot
    be parsed holds none (install refuses it, saying why)."""
    import sys

    from hookbus.bus.errors import HostConfigError
    from hookbus.hosts.shared import documents
    from hookbus.hosts.shared.manifest import owned_text

    paths = []
    for document in manifest.plan(None, python=sys.executable, scope=scope).documents:
        try:
            text, current = documents.read(document.path, document.format)
        except HostConfigError:
            continue
        if text is not None and manifest.commands(current):
            paths.append(document.path)
    paths += [p for p in manifest.owned_paths(scope) if owned_text(p) is not None]
    return paths


def folder(paths: list[str]) -> str:
    """Where ``paths`` (a variant's files in one scope) sit, for a message: their
    common folder, or the one file."""
    if len(paths) == 1:
        return paths[0]
    return os.path.commonpath([os.path.dirname(p) for p in paths])
