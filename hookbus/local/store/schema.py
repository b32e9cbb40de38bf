"""The store's schema, as forward migrations.

``MIGRATIONS[n]`` takes a database from schema version ``n`` to ``n + 1`` (SQLite's
``PRAGMA user_version`` holds the version). A migration only adds: new tables, new
columns with defaults, new indexes. So a row written by any older hookbus stays readable
by every newer one, and two hookbus versions can share one file while the older one
still knows the version it finds (it refuses a newer file instead of guessing).
"""

from __future__ import annotations

MIGRATIONS: tuple[str, ...] = (
    # 1: subagent dispatches (the guard's one row per spawn), per-session state (a
    # parent-model cache) and once-only markers ("refuse once per child").
    """
    CREATE TABLE dispatches (
        id INTEGER PRIMARY KEY,
        time REAL NOT NULL,
        host TEXT NOT NULL,
        session_id TEXT NOT NULL DEFAULT '',
        call_id TEXT NOT NULL DEFAULT '',
        agent_type TEXT NOT NULL DEFAULT '',
        tier TEXT NOT NULL DEFAULT '',
        escalation TEXT NOT NULL DEFAULT '',
        requested_model TEXT NOT NULL DEFAULT '',
        decided_model TEXT NOT NULL DEFAULT '',
        parent_model TEXT NOT NULL DEFAULT '',
        action TEXT NOT NULL,
        mode TEXT NOT NULL DEFAULT '',
        reasons TEXT NOT NULL DEFAULT '[]'
    );
    CREATE INDEX dispatches_by_session ON dispatches (session_id, time);
    CREATE TABLE session_state (
        host TEXT NOT NULL,
        session_id TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        updated REAL NOT NULL,
        PRIMARY KEY (host, session_id, key)
    ) WITHOUT ROWID;
    CREATE TABLE markers (
        name TEXT PRIMARY KEY,
        created REAL NOT NULL
    ) WITHOUT ROWID;
    """,
)

#: The schema version this hookbus writes.
VERSION = len(MIGRATIONS)
