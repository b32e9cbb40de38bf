"""What git says of a settings file: whether it is tracked (shared with the project),
whether it is ignored. The repository's own configuration is the project's, which an
agent can write: its ``core.fsmonitor`` is a command git would run, as the user, for
these index reads; it is turned off for hookbus's calls."""

from __future__ import annotations

import os


def tracks(path: str) -> bool | None:
    """Whether git tracks ``path`` (in its index); None when it lies in no repository
    (or git cannot be run)."""
    code = _git("ls-files", "--error-unmatch", "--", path, cwd=os.path.dirname(path))
    if code == 0:
        return True
    # "did not match any file(s) known to git" (1) in a repository; 128 outside one.
    return False if code == 1 else None


def unignored(path: str) -> bool:
    """Whether ``path`` lies in a repository that does not ignore it (git would add it)."""
    return _git("check-ignore", "-q", path, cwd=os.path.dirname(path)) == 1


def shared_file(tracked: bool | None) -> str:
    """What a settings file shared with the project is, as git has it (``tracked``:
    :func:`tracks`)."""
    if tracked is None:
        return "the project's shared settings file (not in a git repository)"
    if tracked:
        return "committed with the project"
    return "the project's shared settings file, not tracked by git yet"


def _git(*args: str, cwd: str) -> int | None:
    """The exit code of ``git ARGS`` in ``cwd`` (None when git cannot be run)."""
    import subprocess

    try:
        return subprocess.run(["git", "-c", "core.fsmonitor=false", *args], cwd=cwd,
                              capture_output=True, timeout=30, check=False).returncode  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
