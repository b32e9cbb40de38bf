"""hookbus's embedded store: one SQLite file in the state root, for handlers' records.

A handler reaches it as ``ctx.store`` (opened on first use, so an event no handler
stores anything for never imports :mod:`sqlite3`)::

    ctx.store.record(Dispatch(host="claude", action="cap", ...))   # one row, or StoreError
    ctx.store.session_put("claude", session_id, "parent_model", "claude-opus-4-8")
    ctx.store.session_get("claude", session_id, "parent_model")
    ctx.store.mark_once(f"refused:{child}")   # True the first time, False ever after

Many hook processes write at once, so:

- the file is in WAL mode: readers never wait for the writer, and writers queue;
- every statement waits for the database lock at most the handler's remaining time
  (SQLite's busy timeout, set before each statement), then :class:`StoreBusy` is raised:
  the handler fails within its own budget, as any failing handler does, and a row is
  either written once or not at all (each write is one statement in its own
  transaction, never retried here);
- the schema has a version (``PRAGMA user_version``) and forward migrations
  (:mod:`hookbus.local.store.schema`) applied under an immediate transaction by whichever
  process opens the file first: rows written by an older hookbus stay readable; a file
  from a newer hookbus is refused (:class:`StoreError`), never migrated back.

The file is ``store.sqlite3`` in the checked state root (``0700``), created ``0600``;
SQLite gives its ``-wal`` and ``-shm`` files the same mode.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import time

import msgspec

from hookbus.local import state
from hookbus.local.store.schema import MIGRATIONS, VERSION

FILE = "store.sqlite3"


class StoreError(Exception):
    """The store cannot be used: the message says why (a newer schema, a broken file)."""


class StoreBusy(StoreError):
    """The database stayed locked past the handler's deadline."""


class Dispatch(msgspec.Struct, frozen=True, kw_only=True):
    """One subagent spawn as the guard decided it. No prompt text: models, names, codes."""

    host: str
    action: str  # pass, fill, cap, refuse, block, log
    time: float = msgspec.field(default_factory=time.time)
    session_id: str = ""
    call_id: str = ""
    agent_type: str = ""
    tier: str = ""
    #: The brief's ``Escalation from <tier>:`` header as a tier token (``unobservable``
    #: where the host encrypts the brief).
    escalation: str = ""
    requested_model: str = ""
    decided_model: str = ""
    parent_model: str = ""
    mode: str = ""
    reasons: tuple[str, ...] = ()


_COLUMNS = tuple(f for f in Dispatch.__struct_fields__)


class Store:
    """The store as one handler call sees it: every wait bounded by ``deadline``
    (a ``time.monotonic()`` value)."""

    __slots__ = ("_connection", "deadline", "path")

    def __init__(self, path: str, deadline: float) -> None:
        self.path = path
        self.deadline = deadline
        self._connection: sqlite3.Connection | None = None

    # -- writes ----------------------------------------------------------------------

    def record(self, dispatch: Dispatch) -> int:
        """Add ``dispatch``; its row id."""
        values = [getattr(dispatch, c) for c in _COLUMNS]
        values[_COLUMNS.index("reasons")] = json.dumps(list(dispatch.reasons))
        marks = ", ".join("?" for _ in _COLUMNS)
        cursor = self._run(f"INSERT INTO dispatches ({', '.join(_COLUMNS)}) VALUES ({marks})",
                           values)  # fmt: skip
        return int(cursor.lastrowid or 0)

    def session_put(self, host: str, session_id: str, key: str, value: str) -> None:
        """Set ``key`` of one session (a parent-model cache, say), replacing it."""
        self._run(
            "INSERT INTO session_state (host, session_id, key, value, updated) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (host, session_id, key) "
            "DO UPDATE SET value = excluded.value, updated = excluded.updated",
            (host, session_id, key, value, time.time()),
        )

    def mark_once(self, name: str) -> bool:
        """Create the marker ``name``: True for the one caller that created it, False for
        every other (any process, any time after)."""
        cursor = self._run("INSERT OR IGNORE INTO markers (name, created) VALUES (?, ?)",
                           (name, time.time()))  # fmt: skip
        return cursor.rowcount == 1

    # -- reads -----------------------------------------------------------------------

    def session_get(self, host: str, session_id: str, key: str) -> str | None:
        row = self._run(
            "SELECT value FROM session_state WHERE host = ? AND session_id = ? AND key = ?",
            (host, session_id, key),
        ).fetchone()
        return None if row is None else str(row[0])

    def dispatches(self, *, session_id: str | None = None) -> list[Dispatch]:
        """The dispatch rows, oldest first (one session's, when named)."""
        query = f"SELECT {', '.join(_COLUMNS)} FROM dispatches"
        args: tuple[str, ...] = ()
        if session_id is not None:
            query, args = query + " WHERE session_id = ?", (session_id,)
        rows = self._run(query + " ORDER BY time, id", args).fetchall()
        return [_dispatch(row) for row in rows]

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    # -- the connection ----------------------------------------------------------------

    def _remaining(self) -> float:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise StoreBusy("the handler's time is up; the store was not touched")
        return remaining

    def _run(self, sql: str, args: object = ()) -> sqlite3.Cursor:
        connection = self._connect()
        connection.execute(f"PRAGMA busy_timeout = {max(1, int(self._remaining() * 1000))}")
        try:
            return connection.execute(sql, args)  # type: ignore[arg-type]
        except sqlite3.OperationalError as exc:
            raise _error(exc, self.path) from None

    def _connect(self) -> sqlite3.Connection:
        if self._connection is not None:
            return self._connection
        remaining = self._remaining()
        _create(self.path)
        try:
            connection = sqlite3.connect(self.path, timeout=remaining, isolation_level=None,
                                         check_same_thread=False)  # fmt: skip
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open ({exc})") from None
        try:
            _migrate(connection, self.path)
        except BaseException:
            connection.close()
            raise
        self._connection = connection
        return connection


def open_store(deadline: float) -> Store:
    """The store in the state root (created if missing; OSError when it is refused)."""
    state.root(create=True)
    return Store(state.path(FILE), deadline)


def _create(path: str) -> None:
    """Create the file ``0600`` before SQLite does (it would follow the umask). An
    existing file is not opened: closing any descriptor of a database file drops every
    POSIX lock this process holds on it, those of a connection still open included
    (sqlite.org/howtocorrupt.html, 2.2), and another call's store may be open here."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o600)  # fmt: skip
    except FileExistsError:
        if not os.path.islink(path):
            return
        # A link is refused, as O_NOFOLLOW refuses it on creation.
        raise StoreError(f"{path}: cannot create ({os.strerror(errno.ELOOP)})") from None
    except OSError as exc:
        raise StoreError(f"{path}: cannot create ({exc.strerror})") from None
    os.close(fd)


def _migrate(connection: sqlite3.Connection, path: str) -> None:
    """WAL mode, then the migrations this file lacks, in one immediate transaction."""
    try:
        current = _version(connection, path)  # a newer file is refused before any change
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("PRAGMA synchronous = NORMAL")
        if current == VERSION:
            return
        connection.execute("BEGIN IMMEDIATE")
        try:
            found = _version(connection, path)  # another process may have migrated it
            for script in MIGRATIONS[found:]:
                for statement in filter(str.strip, script.split(";")):
                    connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {VERSION}")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
    except sqlite3.Error as exc:
        raise _error(exc, path) from None


def _version(connection: sqlite3.Connection, path: str) -> int:
    found = int(connection.execute("PRAGMA user_version").fetchone()[0])
    if found > VERSION:
        raise StoreError(f"{path}: schema version {found} is newer than this hookbus "
                         f"knows ({VERSION}); upgrade hookbus, or move the file away")  # fmt: skip
    return found


def _error(exc: sqlite3.Error, path: str) -> StoreError:
    if "locked" in str(exc) or "busy" in str(exc):
        return StoreBusy(f"{path}: still locked at the handler's deadline ({exc})")
    return StoreError(f"{path}: {exc}")


def _dispatch(row: tuple[object, ...]) -> Dispatch:
    fields = dict(zip(_COLUMNS, row, strict=True))
    try:
        reasons = json.loads(str(fields["reasons"]))
    except ValueError:
        reasons = []
    fields["reasons"] = tuple(str(r) for r in reasons) if isinstance(reasons, list) else ()
    return msgspec.convert(fields, Dispatch)
