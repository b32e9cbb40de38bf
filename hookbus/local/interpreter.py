"""How hookbus starts a Python of its own, so that nothing in the working folder (an
agent writes any file in its project) is imported before the standard library or
hookbus, whatever the caller's environment holds.

``-P`` keeps the script's (or ``-c``'s, ``-m``'s) folder off the import path, but
``PYTHONPATH`` still goes ahead of the standard library, and an empty or relative
entry in it (``:/opt/x``, ``.``: ``export PYTHONPATH=$PYTHONPATH:/opt/x`` with the
variable unset writes the first) is the working folder; ``PYTHONHOME``,
``PYTHONUSERBASE``, ``PYTHONPYCACHEPREFIX`` (bytecode read from a folder of the agent's
choosing), ``PYTHONSTARTUP``/``PYTHONINSPECT``, ``PYTHONWARNINGS`` (which imports the
category it names) reach code too. ``-E`` ignores every ``PYTHON*`` variable; unlike
``-I`` it keeps the user's site-packages, where a ``pip install --user`` puts hookbus
and msgspec. The variables stay in ``os.environ``: a handler sees the hook's
environment as the host gave it.

A command that cannot take flags (the ``hookbus`` console script, whose ``#!`` line
pip writes) is run with :data:`IMPORT_ENV` unset by the shell before it starts.

The warm server is started from ``/`` with :func:`server_environ`: it answers every
project, so nothing of the caller that started it (its folder, its variables) may
stay in it; each call gets its caller's own environment (:mod:`hookbus.runtime.warm.served`).

Standard library only, and nothing imported: the client's cold fallback loads it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

#: The flags of every Python hookbus starts (see the module docstring).
FLAGS = ("-E", "-P")

#: The variables that change what an interpreter imports, or runs before its program,
#: unset before a command that cannot be given ``-E`` (CPython's ``Py_Initialize`` and
#: ``site`` read them all).
IMPORT_ENV = (
    "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONNOUSERSITE", "PYTHONPLATLIBDIR",
    "PYTHONPYCACHEPREFIX", "PYTHONSTARTUP", "PYTHONINSPECT", "PYTHONWARNINGS",
    "PYTHONEXECUTABLE", "PYTHONOPTIMIZE",
)  # fmt: skip

#: What the warm server keeps of the environment of the process that starts it: where
#: the user's files are (configuration, state, socket: ``HOME``, ``XDG_*``), hookbus's
#: own settings (``HOOKBUS_*``), and what the C library and a plain process expect
#: (``PATH``, the locale, ``TZ``, ``TMPDIR``, who the user is).
SERVER_ENV = ("HOME", "PATH", "LANG", "LANGUAGE", "TZ", "TMPDIR", "USER", "LOGNAME")
SERVER_ENV_PREFIXES = ("LC_", "XDG_", "HOOKBUS_")


def server_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` cut down to what the warm server keeps (:data:`SERVER_ENV`)."""
    return {name: value for name, value in environ.items()
            if name in SERVER_ENV or name.startswith(SERVER_ENV_PREFIXES)}  # fmt: skip


def python_argv(python: str, *args: str) -> list[str]:
    """``python`` run with :data:`FLAGS` and ``args`` (a script and its arguments, or
    ``-c``/``-m`` and theirs)."""
    return [python, *FLAGS, *args]


def spawn_server(main: str, *args: str, keep_fd: int | None = None) -> int:
    """Start the warm server (``main``: hookbus's ``__main__.py``; ``args`` after
    ``serve``) in a session of its own, stdio on /dev/null, with :data:`FLAGS` and
    :func:`server_environ`, keeping ``keep_fd`` open in it; its pid. (It moves to ``/``
    itself, first thing: ``posix_spawn`` cannot.)"""
    import os
    import sys

    actions = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    if keep_fd is not None:
        os.set_inheritable(keep_fd, True)
    argv = python_argv(sys.executable, main, "serve", *args)
    return os.posix_spawn(sys.executable, argv, server_environ(os.environ),
                          file_actions=actions, setsid=True)  # fmt: skip
