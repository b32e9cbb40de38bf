"""What a handler gets beside the event: options and their problems, time left, host
capabilities, the environment variables it declared, the project folder, the host's
transcript reader, a logger, the store, and a way to start work that must outlive the
hook.

The environment is read in one place, :func:`environment`, when the context is made: a
warm server (which is not the hook's process) will hand over the variables the client
forwarded instead, exactly those the handlers declared (``env=``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hookbus.local import state

if TYPE_CHECKING:
    from hookbus.bus.events import Event
    from hookbus.bus.host import Capabilities, HostReaders, TranscriptFacts
    from hookbus.local.store import Store


def environment() -> Mapping[str, str]:
    """The environment handlers' declared variables and the project folder are read from:
    this process's, the one place it is read."""
    return os.environ


class Context:
    """Per-call context handed to a handler as its second argument."""

    __slots__ = (
        "_environ", "_log", "_project_dir", "_readers", "_store", "_transcripts",
        "capabilities", "deadline", "env", "event", "handler", "options", "problems",
        "settings",
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
        env: Sequence[str] = (),
        problems: Sequence[str] = (),
        readers: HostReaders | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.event = event
        self.handler = handler
        #: The handler's options: its declared Struct, or None when it declares none.
        self.options = options
        #: The bus-wide settings (:class:`hookbus.runtime.config.Settings`).
        self.settings = settings
        self.capabilities = capabilities
        #: ``time.monotonic()`` value by which the handler must have answered.
        self.deadline = deadline
        self._environ = environment() if environ is None else environ
        #: The environment variables the handler declared (``env=``) that are set.
        self.env: Mapping[str, str] = {n: self._environ[n] for n in env if n in self._environ}
        #: One readable line per part of the handler's configuration that was dropped
        #: (naming its key path); the handler runs with the rest.
        self.problems: tuple[str, ...] = tuple(problems)
        self._readers = readers
        self._project_dir: str | None = None
        self._transcripts: dict[str, TranscriptFacts] = {}
        self._log: Any = None
        self._store: Store | None = None

    @property
    def project_dir(self) -> str:
        """The project's root folder: the host's documented variable (Claude Code's
        ``CLAUDE_PROJECT_DIR``) when it names an absolute path, else the event's working
        directory, else this process's."""
        if self._project_dir is None:
            if self._readers is not None:
                self._project_dir = self._readers.project_dir(self.event, self._environ)
            else:
                self._project_dir = self.event.cwd or os.getcwd()
        return self._project_dir

    def transcript(self, path: str | None = None, *, reread: bool = False) -> TranscriptFacts:
        """What the tail of a transcript says: the latest assistant turn's model, and
        whether one exists (see :class:`hookbus.bus.host.TranscriptFacts`). ``path``
        defaults to the event's ``transcript_path``. The host's driver reads at most
        :data:`hookbus.bus.host.TRANSCRIPT_TAIL` bytes from the end of the file; the answer
        is kept for this context (``reread`` reads the file again, for a handler that
        waits for the host to write), and it never raises (unknown on any failure)."""
        from hookbus.bus.host import TranscriptFacts

        path = self.event.transcript_path if path is None else path
        if not path:
            return TranscriptFacts()
        found = None if reread else self._transcripts.get(path)
        if found is None:
            found = TranscriptFacts()
            if self._readers is not None:
                try:
                    found = self._readers.read_transcript(path)
                except Exception as exc:  # a reader's bug is not the handler's failure
                    from hookbus.local import diagnostics

                    diagnostics.emit("internal-error", f"reading the transcript {path} "
                                     f"failed: {exc!r}; answered unknown",
                                     handler=self.handler)  # fmt: skip
            self._transcripts[path] = found
        return found

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
        """hookbus's SQLite store (:mod:`hookbus.local.store`), opened on first use; every wait
        for it is bounded by this handler's deadline. OSError when the state root is
        refused."""
        if self._store is None:
            from hookbus.local.store import open_store

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
