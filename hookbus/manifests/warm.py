"""What an in-process host's shim is given to reach the warm server itself.

OpenCode's and Kilo's plugin, Pi's extension (Node) and Hermes's plugin (Python) live in
the host's own process: for them the cheapest warm path is not the client's interpreter
but the server's socket, spoken to directly (wire protocol v1, docs/client.md). With the
server form (install's default) their baked configuration carries :func:`server_config`;
each event keeps a command, the client's (:func:`hookbus.manifests.base.client_argv`),
which the shim runs when no server answers: the client then runs the cold path and
starts a server for the next call under its lock, exactly as an installed command hook
would. With ``--no-server`` the configuration carries ``None`` and the shims spawn
``hookbus run``.
"""

from __future__ import annotations

from typing import Any

from hookbus.manifests.base import client_argv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookbus.runtime.index import IndexData


def declared_env(host: str, index: IndexData | None) -> tuple[str, ...]:
    """The variables the enabled handlers declare for ``host``'s events."""
    from hookbus.runtime.index import Lookup

    return tuple(Lookup([], "fresh", index).declared_env(host))


def shim_argv(
    python: str, host: str, native: str, seconds: float | None, index: IndexData | None
) -> list[str]:
    """The command a shim runs when no server answers: the client's, forwarding what the
    handlers declare (it runs the cold path and starts the server for the next call)."""
    return client_argv(python, host, native, seconds, declared_env(host, index))


def timeout_of(argv: list[str]) -> float:
    """The ``--timeout`` a client command names (it always names one): the request's."""
    return float(argv[argv.index("--timeout") + 1])


def server_config(argvs: list[list[str]]) -> dict[str, Any]:
    """What the shim sends besides the call: the protocol, this hookbus's version, and
    exactly the variables the client would forward (its ``--env`` names, then the ones it
    always forwards; ``HOOKBUS_*`` are added by the shim, as by the client). ``argvs``:
    the client commands of the wanted events (one ``--env`` for all of a host's)."""
    from hookbus import client

    return {"proto": client.PROTO, "version": client.VERSION,
            "env": [*env_names(argvs), *client.OWN_ENV]}  # fmt: skip


def env_names(argvs: list[list[str]]) -> list[str]:
    """The ``--env`` names of client commands (one list for all of a host's)."""
    names: set[str] = set()
    for argv in argvs:
        if "--env" in argv:
            names.update(argv[argv.index("--env") + 1].split(","))
    return sorted(names)
