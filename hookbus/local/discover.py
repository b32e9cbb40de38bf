"""Which configuration files are in effect (standard library only: every hook's cold
path asks).

Lowest precedence first: the user's ``$XDG_CONFIG_HOME/hookbus/config.toml``, then the
nearest ``.hookbus.toml`` at or above the project folder, looking no higher than the
repository root (a folder with ``.git``) or the home folder. ``HOOKBUS_CONFIG`` names
the one file to read instead of both.

A configuration names code to run, so a file another user could have written is
not read, with a ``config-ignored`` diagnostic (the rule is :mod:`hookbus.local.trust`'s).
The user's own file stays *in effect* even then, and so does one that cannot be read, or
was replaced by a folder, a FIFO, a socket or a link to one: the subscription index is
the one of the same files, so the handlers of its last good version are kept (fail-closed
ones deny what they cannot check), as for a file that stops parsing
(:func:`hookbus.runtime.compile._keep_previous`). Its content is never read
(:func:`read_config`). Only a file that is gone, from a folder nobody else could remove
it from, is gone with its handlers: that is the user's own doing.
"""

from __future__ import annotations

import os
import stat

from hookbus.local import diagnostics
from hookbus.local.trust import file_problem, writable_by_others

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

PROJECT_FILE = ".hookbus.toml"


def is_project_file(path: str) -> bool:
    """Whether ``path`` (a file in effect) is a project's: a ``.hookbus.toml`` found by
    discovery, not the one file ``HOOKBUS_CONFIG`` names (that one is the user's choice)."""
    return os.path.basename(path) == PROJECT_FILE and not os.environ.get("HOOKBUS_CONFIG")


def user_folder() -> str:
    """``$XDG_CONFIG_HOME/hookbus`` (default ``~/.config/hookbus``): the user's
    configuration and trust store."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "hookbus")


def user_config_path() -> str:
    return os.path.join(user_folder(), "config.toml")


def _trusted(path: str) -> bool:
    problem = file_problem(path)
    if problem is None:
        return True
    diagnostics.emit(
        "config-ignored",
        f"{path} {problem}: its handlers would run as this user, so it is not read",
        file=path,
    )
    return False


def _users_file(path: str) -> bool:
    """Whether the user's configuration ``path`` is in effect: a trusted file, or one in
    any other state but gone by the user's own doing (see the module docstring)."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        if _removable_by_me_only(path):
            return False  # removed (or never written): its handlers are gone
        problem: str | None = "is missing from a folder that other users can write"
    except OSError:
        problem = file_problem(path)
    else:
        problem = file_problem(path)
        if problem is None and not os.access(path, os.R_OK):
            problem = "cannot be read by you"  # chmod 000: the index of before still serves
    if problem is None:
        return True
    diagnostics.emit(
        "config-ignored",
        f"{path} {problem}: it is not read (its handlers would run as you), and the "
        "handlers of its last good version are kept, fail-closed ones denying; fix: make "
        "it a regular file only you can write, in a folder only you can write (chown, "
        "chmod go-w), or remove it to switch its handlers off",
        file=path,
    )
    return True


def _removable_by_me_only(path: str) -> bool:
    """True when only this user (or root) could have removed ``path``: its nearest
    existing folder passes the trust rule, or is sticky (``/tmp``: no one removes
    another's entry there)."""
    folder = os.path.dirname(os.path.abspath(path))
    while True:
        try:
            st = os.stat(folder)
        except (FileNotFoundError, NotADirectoryError):
            parent = os.path.dirname(folder)
            if parent == folder:
                return True
            folder = parent
            continue
        except OSError:
            return False
        if writable_by_others(st) is None:
            return True
        return bool(st.st_mode & stat.S_ISVTX) and st.st_uid in (0, os.geteuid())


def read_config(path: str) -> bytes:
    """The bytes of configuration file ``path``; OSError saying why not (another user
    could have written it, it is not a regular file, it cannot be read). Never blocks:
    a FIFO put in its place is not opened for reading."""
    problem = file_problem(path)
    if problem is not None:
        raise OSError(f"{path} {problem}")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped since it was checked
            raise OSError(f"{path} is not a regular file")
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def project_candidates(start: str) -> Iterator[str]:
    """Where a ``.hookbus.toml`` is looked for, nearest first: ``start`` and its parents,
    up to the repository root (a folder with ``.git``) or the home folder."""
    here = os.path.abspath(start)
    home = os.path.expanduser("~")
    while True:
        yield os.path.join(here, PROJECT_FILE)
        parent = os.path.dirname(here)
        if here in (parent, home) or os.path.exists(os.path.join(here, ".git")):
            return
        here = parent


def find_project_config(start: str) -> str | None:
    """The nearest trusted ``.hookbus.toml`` at or above ``start`` (see the module doc)."""
    for candidate in project_candidates(start):
        if os.path.isfile(candidate) and _trusted(candidate):
            return candidate
    return None


def working_folder() -> str:
    """The working folder, or where it was (``$PWD``) when it has been deleted under us:
    the user's configuration must still be found, and a project's above it."""
    try:
        return os.getcwd()
    except OSError:
        return os.environ.get("PWD") or "/"


def config_paths(
    project: str | None = None, *, user_only: bool = False, project_only: bool = False
) -> list[str]:
    """The trusted configuration files in effect for ``project`` (default: the working
    directory), lowest precedence first; with ``user_only``, the user's alone (what
    applies in every project), with ``project_only`` the project's alone."""
    explicit = os.environ.get("HOOKBUS_CONFIG")
    if explicit:
        path = os.path.abspath(os.path.expanduser(explicit))
        if not os.path.lexists(path) and _removable_by_me_only(path):
            diagnostics.emit("config-invalid", f"HOOKBUS_CONFIG names {path}, which does not "
                             "exist; no handler is enabled", file=path)  # fmt: skip
            return []
        return [path] if _users_file(path) else []
    paths = []
    user = user_config_path()
    if not project_only and _users_file(user):
        paths.append(user)
    if user_only:
        return paths
    found = find_project_config(project or working_folder())
    if found and found not in paths:
        paths.append(found)
    return paths
