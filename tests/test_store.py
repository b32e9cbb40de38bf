"""The store (hookbus/store/): a real SQLite file in the state root, WAL, migrations,
bounded waits, and many real processes writing at once."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hookbus.local import store as store_module
from hookbus.local.store import Dispatch, Store, StoreBusy, StoreError, open_store
from hookbus.local.store.schema import VERSION

ROOT = Path(__file__).resolve().parent.parent
LATER = 30.0  # a deadline far enough away never to be what a test measures


def later() -> float:
    return time.monotonic() + LATER


def test_rows_state_and_markers_round_trip(isolated_environment: Path) -> None:
    db = open_store(later())
    first = Dispatch(host="claude", action="cap", session_id="s1", call_id="toolu_1",
                     agent_type="general-purpose", tier="standard", requested_model="opus",
                     decided_model="sonnet", parent_model="claude-sonnet-4-5", mode="enforce",
                     reasons=("over-parent", "capped-to-family"))  # fmt: skip
    second = Dispatch(host="codex", action="pass", session_id="s2", time=first.time + 1)
    assert db.record(first) != db.record(second)
    assert db.dispatches() == [first, second]
    assert db.dispatches(session_id="s2") == [second]
    assert db.session_get("claude", "s1", "parent_model") is None
    db.session_put("claude", "s1", "parent_model", "claude-opus-4-8")
    db.session_put("claude", "s1", "parent_model", "claude-sonnet-4-5")
    assert db.session_get("claude", "s1", "parent_model") == "claude-sonnet-4-5"
    assert db.session_get("codex", "s1", "parent_model") is None
    assert db.mark_once("refused:child-1") is True
    assert db.mark_once("refused:child-1") is False
    assert db.mark_once("refused:child-2") is True


def test_the_file_is_private_in_wal_mode_at_the_current_version(isolated_environment: Path) -> None:
    db = open_store(later())
    db.record(Dispatch(host="claude", action="pass"))
    path = isolated_environment / "store.sqlite3"
    assert db.path == str(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(isolated_environment.stat().st_mode) == 0o700
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("PRAGMA user_version").fetchone()[0] == VERSION
    wal = path.with_name("store.sqlite3-wal")
    assert not wal.exists() or stat.S_IMODE(wal.stat().st_mode) == 0o600


def test_rows_of_an_older_schema_stay_readable_after_a_migration(
    isolated_environment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row written at version 1, read by a hookbus whose schema adds a column: the
    migration runs once, and the old row is there with the new column's default."""
    db = open_store(later())
    old = Dispatch(host="claude", action="fill", session_id="s", decided_model="haiku")
    db.record(old)
    db.close()
    newer = (*store_module.MIGRATIONS,
             "ALTER TABLE dispatches ADD COLUMN lens TEXT NOT NULL DEFAULT ''")  # fmt: skip
    monkeypatch.setattr(store_module, "MIGRATIONS", newer)
    monkeypatch.setattr(store_module, "VERSION", len(newer))
    again = open_store(later())
    assert again.dispatches() == [old]
    with sqlite3.connect(again.path) as raw:
        assert raw.execute("PRAGMA user_version").fetchone()[0] == VERSION + 1
        assert raw.execute("SELECT lens FROM dispatches").fetchall() == [("",)]


def test_a_file_of_a_newer_hookbus_is_refused_untouched(isolated_environment: Path) -> None:
    path = isolated_environment / "store.sqlite3"
    isolated_environment.mkdir(mode=0o700, exist_ok=True)
    with sqlite3.connect(path) as raw:
        raw.execute(f"PRAGMA user_version = {VERSION + 1}")
    before = path.read_bytes()
    with pytest.raises(StoreError, match=rf"schema version {VERSION + 1} is newer"):
        open_store(later()).record(Dispatch(host="claude", action="pass"))
    assert path.read_bytes() == before


def test_a_locked_database_raises_store_busy_at_the_deadline(isolated_environment: Path) -> None:
    """Another process holds the write lock: the write gives up at the handler's deadline
    with StoreBusy, instead of waiting for the lock (or for ever)."""
    open_store(later()).record(Dispatch(host="claude", action="pass"))
    path = isolated_environment / "store.sqlite3"
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sqlite3, sys, time
            db = sqlite3.connect({str(path)!r}, isolation_level=None)
            db.execute("BEGIN IMMEDIATE")
            print("locked", flush=True)
            time.sleep(120)
        """)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        started = time.monotonic()
        with pytest.raises(StoreBusy, match="still locked at the handler's deadline"):
            Store(str(path), started + 0.5).record(Dispatch(host="claude", action="pass"))
        assert time.monotonic() - started < LATER  # it gave up; it did not wait for the lock
    finally:
        holder.kill()
        holder.communicate()
    assert len(open_store(later()).dispatches()) == 1


def test_no_time_left_touches_nothing(isolated_environment: Path) -> None:
    with pytest.raises(StoreBusy, match="time is up"):
        open_store(time.monotonic() - 1).record(Dispatch(host="claude", action="pass"))
    assert not (isolated_environment / "store.sqlite3").exists()


WRITER = """
import sys, time
from hookbus.local.store import Dispatch, open_store
worker, rows = sys.argv[1], int(sys.argv[2])
db = open_store(time.monotonic() + 120)
for n in range(rows):
    db.record(Dispatch(host="claude", action="pass", session_id=f"s{worker}", call_id=f"{worker}-{n}"))
"""

MARKER = """
import sys, time
from hookbus.local.store import open_store
print(open_store(time.monotonic() + 120).mark_once("refused:the-child"))
"""


def start(script: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=os.environ.copy())  # fmt: skip


@pytest.mark.stress
def test_32_processes_writing_200_rows_each_leave_exactly_6400(isolated_environment: Path) -> None:
    """32 real processes open a fresh file at once (all racing to migrate it) and write
    200 rows each: every row is there exactly once."""
    writers = [start(WRITER, str(w), "200") for w in range(32)]
    for writer in writers:
        _, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err
    rows = open_store(later()).dispatches()
    assert len(rows) == 6400
    assert {r.call_id for r in rows} == {f"{w}-{n}" for w in range(32) for n in range(200)}


def test_one_process_of_many_creates_a_marker(isolated_environment: Path) -> None:
    racers = [start(MARKER) for _ in range(12)]
    answers = []
    for racer in racers:
        out, err = racer.communicate(timeout=120)
        assert racer.returncode == 0, err
        answers.append(out.strip())
    assert sorted(answers) == ["False"] * 11 + ["True"]


def test_the_store_is_not_imported_until_a_handler_uses_it(tmp_path: Path) -> None:
    """A handler that never touches ctx.store costs no sqlite3 import; one that does gets
    the file in the state root."""
    probe = textwrap.dedent("""
        import sys, time
        from hookbus.bus.context import Context
        from hookbus.bus.events import SessionEnd
        from hookbus.bus.host import Capabilities
        ctx = Context(event=SessionEnd(host="claude", native="SessionEnd", session_id="s"),
                      handler="h", options=None, settings=None, capabilities=Capabilities(),
                      deadline=time.monotonic() + 30)
        before = "sqlite3" in sys.modules
        ctx.store.session_put("claude", "s", "k", "v")
        print(before, "sqlite3" in sys.modules, ctx.store.session_get("claude", "s", "k"))
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True", "v"]
