"""What a handler gets beside the event: options, time left, host capabilities, a logger,
and a way to start work that must outlive the hook."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hookbus import state

if TYPE_CHECKING:
    from hookbus.bus.events import Event
    from hookbus.store import Store
    from hookbus.types import Capabilities


class Context:
    """Per-call context handed to a handler as its second argument."""

    __slots__ = (
        "_log", "_store", "capabilities", "deadline", "event", "handler", "options", "settings",
    )  # fmt: skip

    def __init__(
        self,
        *,
        event: Event,
        handler: str,
        options: Any,
        settings: Any,
        capabilities: Capabilities,
        deadline: float,
    ) -> None:
        self.event = event
        self.handler = handler
        #: The handler's options: its declared Struct, or None when it declares none.
        self.options = options
        #: The bus-wide settings (:class:`hookbus.config.Settings`).
        self.settings = settings
        self.capabilities = capabilities
        #: ``time.monotonic()`` value by which the handler must have answered.
        self.deadline = deadline
        self._log: Any = None
        self._store: Store | None = None

    @property
    def remaining(self) -> float:
        """Seconds left before this handler's deadline (never negative)."""
        return max(0.0, self.deadline - time.monotonic())

    @property
    def state_dir(self) -> str:
        """The checked state root (created if missing); OSError when it is refused."""
        state.root(create=True)
        return state.root_path()

    @property
    def log(self) -> Any:
        """A structlog logger bound to this handler and event, writing JSON lines to the
        diagnostics log. structlog is imported on first use only."""
        if self._log is None:
            from hookbus.bus.log import handler_logger

            self._log = handler_logger(self)
        return self._log

    @property
    def store(self) -> Store:
        """hookbus's SQLite store (:mod:`hookbus.store`), opened on first use; every wait
        for it is bounded by this handler's deadline. OSError when the state root is
        refused."""
        if self._store is None:
            from hookbus.store import open_store

            self._store = open_store(self.deadline)
        return self._store

    def spawn_detached(
        self,
        argv: Sequence[str],
        *,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> int:
        """Start ``argv`` in a new session with stdio on /dev/null and return its pid at once.

        The child outlives the hook process (and the host's kill of it). Use it for work
        that must not hold the reply, like a reconciler started at session end.
        """
        return spawn_detached(argv, cwd=cwd, env=env)


def spawn_detached(
    argv: Sequence[str],
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """See :meth:`Context.spawn_detached`."""
    if not argv:
        raise ValueError("spawn_detached needs a program to run")
    devnull = os.devnull
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_OPEN, 2, devnull, os.O_WRONLY, 0),
    ]
    program = argv[0]
    if os.sep not in program:
        from shutil import which

        program = which(program) or program
    environ = dict(os.environ if env is None else env)
    if cwd is None:
        # posix_spawn has no chdir action before Python 3.13's; spawn through the
        # interpreter-independent route of a tiny sh only when a cwd is asked for.
        return os.posix_spawn(program, list(argv), environ, file_actions=actions, setsid=True)
    return os.posix_spawn(
        "/bin/sh",
        ["/bin/sh", "-c", 'cd "$0" && exec "$@"', cwd, program, *argv[1:]],
        environ,
        file_actions=actions,
        setsid=True,
    )
