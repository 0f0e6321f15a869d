"""SQLite backend specifics (the only place with SQLite-only settings).

WAL journal so readers do not block the writer, foreign keys on (SQLite leaves them off), a busy
timeout so concurrent writers in threads wait instead of failing, and one connection per thread.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url

from zhiku.core.errors import ConfigError

#: Seconds a connection waits for another's lock (SQLite's busy timeout), and for WAL mode.
BUSY_TIMEOUT = 30.0


def make_sqlite_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": BUSY_TIMEOUT})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        _use_wal(cursor)
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    return engine


def _use_wal(cursor: sqlite3.Cursor) -> None:
    """Put the file in WAL mode (it stays so). Processes opening a new file together race to
    switch it, and SQLite answers a switch it cannot make now with "database is locked" at once,
    without waiting the busy timeout; so retry, with a growing pause, until the file is in WAL
    mode (one of them switched it) or the busy timeout has passed."""
    deadline = time.monotonic() + BUSY_TIMEOUT
    pause = 0.005
    while True:
        try:
            if cursor.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                return
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.2)


def begin_exclusive(connection: Connection) -> None:
    """Begin a write transaction now rather than at the first write, so that two processes
    migrating one new file take turns (the busy timeout makes the second wait) and the DDL of
    a migration is all-or-nothing."""
    connection.exec_driver_sql("BEGIN IMMEDIATE")


@contextmanager
def foreign_keys_off(connection: Connection) -> Iterator[None]:
    """Foreign keys off on ``connection`` meanwhile (call it outside a transaction, where SQLite
    takes the switch). A migration that changes a table's columns copies the table and drops the
    old one; with foreign keys on, that drop deletes by cascade every row referring to it."""
    connection.exec_driver_sql("PRAGMA foreign_keys=OFF")
    try:
        yield
    finally:
        connection.rollback()  # a failed migration's transaction ends before the switch back
        connection.exec_driver_sql("PRAGMA foreign_keys=ON")


def check_foreign_keys(connection: Connection) -> None:
    """ConfigError if a row refers to a row that does not exist (what a migration run with
    foreign keys off must not leave)."""
    broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
    if broken:
        table, _rowid, parent, _key = broken[0]
        raise ConfigError(
            f"the schema migration left {len(broken)} rows referring to missing rows "
            f"(first: {table} → {parent}); the database was left as it was"
        )
