"""Whether a file may decide what code hookbus runs as this user.

A configuration file names modules to import, a handler's module *is* code, and the
subscription index decides which modules get imported: each must be one that only this
user (or root) could have written. The rule, the same everywhere: the file is owned by
this user or root and is not writable by others, and so is the folder holding it
(whoever can write the folder can replace the file). Group write is allowed only through
the user's own private group (Debian and Ubuntu give every user one, and a ``umask 002``
makes every file group-writable there).

Standard library only: the cold path checks every configuration file it reads.
"""

from __future__ import annotations

import os
import stat

_TRUSTED_OWNERS = frozenset({0, os.geteuid()})
_private_group: dict[int, bool] = {}


def _is_private_group(gid: int) -> bool:
    """True when ``gid`` is this user's own group, named after the user."""
    found = _private_group.get(gid)
    if found is None:
        found = False
        if gid == os.getegid():
            try:
                import grp
                import pwd

                group = grp.getgrgid(gid)
                me = pwd.getpwuid(os.geteuid()).pw_name
                found = group.gr_name == me and set(group.gr_mem) <= {me}
            except (KeyError, ImportError):
                found = False
        _private_group[gid] = found
    return found


def writable_by_others(st: os.stat_result) -> str | None:
    """Why someone other than this user (or root) could write what ``st`` describes."""
    if st.st_uid not in _TRUSTED_OWNERS:
        return f"owned by uid {st.st_uid}, not by this user (uid {os.geteuid()}) or root"
    if st.st_mode & stat.S_IWOTH:
        return "writable by every user"
    if st.st_mode & stat.S_IWGRP and not _is_private_group(st.st_gid):
        return f"writable by group {st.st_gid}"
    return None


def file_problem(path: str) -> str | None:
    """Why ``path`` (a file naming or holding code to run) cannot be trusted; None if it can.

    A symbolic link is followed (dotfiles are often links); the file it ends at and that
    file's folder are what is checked.
    """
    try:
        # A path that is not itself a link reaches the real file and folder (the kernel
        # follows links among its folders), so realpath (an lstat per component, on every
        # hook call) is needed only for a link, and to name the folder in a problem.
        real = path
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            real = os.path.realpath(path)
            st = os.stat(real)
    except OSError as exc:
        return f"cannot be checked ({exc.strerror or exc})"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    why = writable_by_others(st)
    if why:
        return f"is {why}"
    try:
        folder_st = os.stat(os.path.dirname(real))
    except OSError as exc:
        return f"has a folder that cannot be checked ({exc.strerror or exc})"
    why = writable_by_others(folder_st)
    if why:
        return f"is in {os.path.dirname(os.path.realpath(real))}, which is {why}"
    return None
