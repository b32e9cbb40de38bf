"""The state root: hookbus's private folder (the subscription index, the diagnostics log).

``$HOOKBUS_STATE_DIR``, else ``$XDG_STATE_HOME/hookbus``, else ``~/.local/state/hookbus``.

What is in it decides which modules a hook imports, so it is private and checked, never
trusted as found:

- it is created ``0700`` whatever the umask;
- an existing root that is a symbolic link, not a folder, not owned by this user, or
  writable by group or others is **refused**: never used, never reset, and every use says
  why (:class:`StateRefused`); hooks then work without a cache;
- everything inside is opened relative to the root's own descriptor with ``O_NOFOLLOW``,
  so no path within it can be a symbolic link, and only regular files this user owns
  are read or appended to (``O_NONBLOCK``: a FIFO planted as the log cannot block);
- an appended file can be rotated (:func:`rotate`): renamed, within its folder's own
  descriptor, to ``NAME.1`` as older generations shift and the oldest is dropped.

Standard library only: this is on every hook's cold path.
"""

from __future__ import annotations

import os
import stat

_NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


class StateRefused(OSError):
    """The state root (or a path in it) failed its checks; ``reason`` says which."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"state folder {path} {reason}; refused (fix or remove it)")


def root_path() -> str:
    explicit = os.environ.get("HOOKBUS_STATE_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return os.path.join(os.path.abspath(base), "hookbus")


_root: tuple[str, int] | None = None


def _check_dir(st: os.stat_result, path: str) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise StateRefused(path, "is a symbolic link")
    if not stat.S_ISDIR(st.st_mode):
        raise StateRefused(path, "is not a folder")
    if st.st_uid != os.geteuid():
        raise StateRefused(path, f"is owned by uid {st.st_uid}, not by this user")
    # Stricter than for configuration files: hookbus creates it 0700, so any group or
    # world write bit was put there by someone else.
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        who = "every user" if st.st_mode & stat.S_IWOTH else f"group {st.st_gid}"
        raise StateRefused(path, f"is writable by {who}")


def root(*, create: bool = False) -> int:
    """A descriptor of the checked state root. Raises :class:`StateRefused` when it fails
    a check, FileNotFoundError when it is missing and ``create`` is false."""
    global _root
    path = root_path()
    if _root is not None:
        if _root[0] == path:
            return _root[1]
        forget()  # HOOKBUS_STATE_DIR changed (tests, in-process hosts)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        if not create:
            raise
        parent = os.path.dirname(path)
        os.makedirs(parent, exist_ok=True)
        try:
            os.mkdir(path, 0o700)
            os.chmod(path, 0o700, follow_symlinks=False)  # the umask took nothing away
        except FileExistsError:
            pass  # another hook created it first: check it like any existing one
        st = os.lstat(path)
    _check_dir(st, path)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
    opened = os.fstat(fd)
    if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):  # swapped in between
        os.close(fd)
        raise StateRefused(path, "changed while it was being opened")
    _root = (path, fd)
    return fd


def forget() -> None:
    """Drop the cached root descriptor (tests change ``HOOKBUS_STATE_DIR``)."""
    global _root
    if _root is not None:
        os.close(_root[1])
        _root = None


def _folder(parts: tuple[str, ...], *, create: bool) -> int:
    """A descriptor of the folder ``parts[:-1]`` inside the root (the caller closes it
    unless it is the root itself)."""
    fd = root(create=create)
    for name in parts[:-1]:
        try:
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            try:  # noqa: SIM105 (contextlib is not loaded on the cold path)
                os.mkdir(name, 0o700, dir_fd=fd)
            except FileExistsError:
                pass
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=fd)
        except OSError as exc:
            raise StateRefused(os.path.join(root_path(), *parts[:-1]), _why(exc)) from None
        try:
            _check_dir(os.fstat(child), os.path.join(root_path(), name))
        except StateRefused:
            os.close(child)
            raise
        if fd != root():
            os.close(fd)
        fd = child
    return fd


def _why(exc: OSError) -> str:
    import errno

    if exc.errno == errno.ELOOP:
        return "holds a symbolic link"
    return f"cannot be opened ({exc.strerror or exc})"


def _close_folder(fd: int) -> None:
    if _root is None or fd != _root[1]:
        os.close(fd)


def _checked_file(fd: int, where: str) -> None:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise StateRefused(where, "is not a regular file")
    if st.st_uid != os.geteuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise StateRefused(where, "is not this user's own private file")


def path(*parts: str) -> str:
    """The path of ``parts`` inside the state root (for messages and users)."""
    return os.path.join(root_path(), *parts)


def _open(parts: tuple[str, ...], flags: int, *, create: bool) -> int:
    """A descriptor of the regular file at ``parts``, this user's own, opened without
    following links; FileNotFoundError when it is missing, :class:`StateRefused` else."""
    folder = _folder(parts, create=create)
    try:
        fd = os.open(parts[-1], flags | os.O_NONBLOCK | _NOFOLLOW, 0o600, dir_fd=folder)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise StateRefused(path(*parts), _why(exc)) from None
    finally:
        _close_folder(folder)
    try:
        _checked_file(fd, path(*parts))
    except StateRefused:
        os.close(fd)
        raise
    return fd


def read(*parts: str, limit: int = 64 << 20) -> bytes:
    """The whole file at ``parts`` inside the root (at most ``limit`` bytes and a chunk).
    OSError: FileNotFoundError when it is missing, :class:`StateRefused` when it fails a
    check."""
    fd = open_read(*parts)
    try:
        chunks = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write(*parts: str, data: bytes) -> None:
    """Replace the file at ``parts`` with ``data`` in one rename (created ``0600``)."""
    folder = _folder(parts, create=True)
    try:
        tmp = f".{parts[-1]}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NOFOLLOW, 0o600, dir_fd=folder)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, parts[-1], src_dir_fd=folder, dst_dir_fd=folder)
    finally:
        _close_folder(folder)


def append(*parts: str, data: bytes) -> int:
    """Append ``data`` to the file at ``parts`` in one write (created ``0600``); the
    size of the file written to, after the write.

    One ``O_APPEND`` write of whole lines is never interleaved with another process's
    on a local file system (Linux holds the file's lock for the whole write), so
    concurrent hooks cannot tear each other's lines."""
    fd = _open(parts, os.O_WRONLY | os.O_APPEND | os.O_CREAT, create=True)
    try:
        view = memoryview(data)
        # Short only when the disk is full or a signal interrupts: the rest is still
        # better in the file than lost, though it may then land after another's line.
        while view:
            view = view[os.write(fd, view) :]
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def generation(name: str, age: int) -> str:
    """The name of generation ``age`` of the rotated file ``name``: ``name`` itself for
    0 (the one appended to), then ``name.1`` (the newest rotated away) and older."""
    return f"{name}.{age}" if age else name


def rotate(*parts: str, at: int, keep: int) -> bool:
    """Rotate the file at ``parts`` once it has ``at`` bytes or more: ``.{keep-1}`` ...
    ``.1`` become ``.{keep}`` ... ``.2`` (the old ``.{keep}`` is dropped), and the file
    itself becomes ``.1``; the next :func:`append` creates it afresh. Whether this call
    rotated it.

    Many processes append at once, so the rotation is theirs to race for: it is done
    under a non-blocking ``flock`` of ``NAME.lock`` (opened afresh, so no descriptor a
    fork shares can hold it for two processes), and a process that does not get the
    lock leaves it to the one that has it. The size is checked again by name under the
    lock: the file found large may already be ``.1``, rotated by the previous holder,
    and the new one must not be rotated while it is still small. No line is lost: a
    process that opened the file before the rename writes into ``.1``, and each rename
    replaces its target in one step. A failed rename (a folder planted as ``.2``) stops
    the shift there, so no generation is renamed onto one not yet moved away."""
    if keep < 1:
        raise ValueError(f"keep={keep}: at least one generation is kept")
    import fcntl  # here, not at the top: only a rotating process needs it

    name = parts[-1]
    lock = _open((*parts[:-1], f"{name}.lock"), os.O_RDWR | os.O_CREAT, create=False)
    try:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # another process is rotating it: this one has appended, enough
        folder = _folder(parts, create=False)
        try:
            try:
                st = os.stat(name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                return False  # rotated, and nothing appended since
            if not stat.S_ISREG(st.st_mode) or st.st_size < at:
                return False
            for age in range(keep, 0, -1):
                try:
                    os.rename(generation(name, age - 1), generation(name, age),
                              src_dir_fd=folder, dst_dir_fd=folder)  # fmt: skip
                except FileNotFoundError:
                    if age == 1:
                        return False  # gone since the check: not this process's doing
            return True
        finally:
            _close_folder(folder)
    finally:
        os.close(lock)  # releases the lock


def open_read(*parts: str) -> int:
    """A read-only descriptor of the file at ``parts`` (the caller closes it), checked
    like every file here. OSError: FileNotFoundError when it is missing,
    :class:`StateRefused` when it fails a check."""
    return _open(parts, os.O_RDONLY, create=False)
