"""SQLite backend specifics (the only place with SQLite-only settings).

WAL journal so readers do not block the writer, foreign keys on (SQLite leaves them off), a busy
timeout so concurrent writers in threads wait instead of failing, and one connection per thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url


def make_sqlite_engine(url: str) -> Engine:
    parsed = make_url(url)
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    return engine


def begin_exclusive(connection: Connection) -> None:
    """Begin a write transaction now rather than at the first write, so that two processes
    migrating one new file take turns (the busy timeout makes the second wait) and the DDL of
    a migration is all-or-nothing."""
    connection.exec_driver_sql("BEGIN IMMEDIATE")
