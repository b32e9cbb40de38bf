"""What install and uninstall refuse before anything changes: files reached through a
link out of the project, and a second way of installing a host that already has one
(:mod:`hookbus.hosts.shared.variants`). Each returns what it found; the CLI words the
refusal."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NamedTuple

if TYPE_CHECKING:
    from hookbus.hosts.shared.manifest import Manifest, Scope
    from hookbus.hosts.shared.variants import Found


class LinkOut(NamedTuple):
    """A file of the install reached through ``link``, which leads to ``leads``, outside
    the ``project``."""

    link: str
    leads: str
    project: str


def link_out(
    command: Literal["install", "uninstall"], host: str, manifest: Manifest, scope: Scope
) -> LinkOut | None:
    """The link out of the project a project or local install or uninstall would change
    files through (an agent's ``.claude`` linked to the user's ``~/.claude``:
    :mod:`hookbus.hosts.shared.confine`); None when there is none. Uninstall checks every
    variant of the host, as it removes each found in ``scope``."""
    from hookbus.hosts.shared import confine
    from hookbus.hosts.shared.variants import variants

    if scope == "user":
        return None
    manifests = [manifest] if command == "install" else [
        v.manifest for v in variants(host) if scope in v.manifest.scopes]  # fmt: skip
    project = confine.project_folder()
    found = confine.link_out([p for m in manifests for p in confine.paths(m, scope)], project)
    return None if found is None else LinkOut(*found, project)


class OtherVariant(NamedTuple):
    """Another way of installing the host found in place (``found``); ``alone``: the one
    asked about is installed nowhere."""

    found: Found
    alone: bool


def other_variant(host: str, *, plugin: bool) -> OtherVariant | None:
    """The host's plugin where its settings are asked for, or its settings where the
    plugin is (the host would run both); None when there is none."""
    from hookbus.hosts.shared.variants import installed, variant

    chosen = variant(host, plugin=plugin).name
    others = installed(host, besides=chosen)
    if not others:
        return None
    return OtherVariant(others[0], alone=len(installed(host)) == len(others))
