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

import os
from typing import Any

from hookbus.hosts.shared.manifest import client_argv, client_file


def shim_argv(python: str, host: str, native: str, seconds: float | None) -> list[str]:
    """The command a shim runs when no server answers: the client's (it runs the cold
    path and starts the server for the next call)."""
    return client_argv(python, host, native, seconds)


def timeout_of(argv: list[str]) -> float:
    """The ``--timeout`` a client command names (it always names one): the request's."""
    return float(argv[argv.index("--timeout") + 1])


def server_config() -> dict[str, Any]:
    """What the shim sends besides the call (and, as the client, its host's whole
    environment): the protocol and this hookbus's version, as the client sends them
    (:func:`protocol`)."""
    import hookbus

    proto, version = protocol(client_file(os.path.dirname(hookbus.__file__ or "")))
    return {"proto": proto, "version": version}


def protocol(path: str) -> tuple[int, str]:
    """``PROTO`` and ``VERSION`` as the client's file at ``path`` states them. The client
    imports nothing, so it states the protocol itself, once; a shim speaks it as the
    client's peer, and its manifest, on the floor below the runtime, reads the two
    constants from the client's text (the file every installed command names by path)
    rather than importing the runtime."""
    import ast

    with open(path, encoding="utf-8") as file:
        tree = ast.parse(file.read(), path)
    found: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if name in {"PROTO", "VERSION"}:
                found[name] = ast.literal_eval(node.value)
    proto, version = found["PROTO"], found["VERSION"]
    if not isinstance(proto, int) or not isinstance(version, str):
        raise TypeError(f"{path}: PROTO and VERSION are not a number and a string")
    return proto, version
