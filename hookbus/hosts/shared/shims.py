"""The JavaScript shims' sources: OpenCode's plugin (``opencode.js``, which Kilo runs too),
and the warm server's client (``server.js``) that it and Pi's extension inline. Package
data, read when a manifest writes a shim, never on a hook's path."""

from __future__ import annotations


def shim_source(name: str) -> str:
    """The text of ``name``, a shim source of this folder."""
    from importlib.resources import files

    return (files("hookbus.hosts.shared") / name).read_text(encoding="utf-8")


def with_server_client(text: str) -> str:
    """A shim with ``@@SERVER_CLIENT@@`` replaced by the warm server's part (the one
    source both JavaScript shims inline: ``hookbus/hosts/shared/server.js``)."""
    return text.replace("@@SERVER_CLIENT@@", shim_source("server.js").rstrip("\n"), 1)
