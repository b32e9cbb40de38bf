"""What an in-process host's shim is given to reach the warm server itself.

OpenCode's and Kilo's plugin, Pi's extension (Node) and Hermes's plugin (Python) live in
the host's own process: for them the cheapest warm path is not the client's interpreter
but the server's socket, spoken to directly (wire protocol v1, docs/client.md). With the
server form (install's default) their baked configuration carries :func:`server_config`;
each event keeps a command, the client's (:func:`hookbus.hosts.shared.manifest.client_argv`),
which the shim runs when no server answers: the client then runs the cold path and
starts a server for the next call under its lock, exactly as an installed command hook
would. With ``--no-server`` the configuration carries ``None`` and the shims spawn
``hookbus run``.
"""

from __future__ import annotations

from typing import Any

from hookbus.hosts.shared.manifest import client_argv


def shim_argv(python: str, host: str, native: str, seconds: float | None) -> list[str]:
    """The command a shim runs when no server answers: the client's (it runs the cold
    path and starts the server for the next call)."""
    return client_argv(python, host, native, seconds)


def timeout_of(argv: list[str]) -> float:
    """The ``--timeout`` a client command names (it always names one): the request's."""
    return float(argv[argv.index("--timeout") + 1])


def server_config() -> dict[str, Any]:
    """What the shim sends besides the call (and, as the client, its host's whole
    environment): the protocol and this hookbus's version."""
    from hookbus.runtime.warm import client

    return {"proto": client.PROTO, "version": client.VERSION}
