"""The SQLite engine: a new database file opened by many connections at once."""

from __future__ import annotations

import threading
from pathlib import Path

from sqlalchemy import Engine

from zhiku.core.db.sqlite import make_sqlite_engine


def _open_together(engines: list[Engine]) -> tuple[list[str], list[Exception]]:
    """Each engine's first connection, all at once: the journal modes they see, and the errors."""
    start = threading.Barrier(len(engines))
    modes: list[str] = []
    errors: list[Exception] = []

    def connect(engine: Engine) -> None:
        start.wait()
        try:
            with engine.connect() as connection:
                modes.append(connection.exec_driver_sql("PRAGMA journal_mode").scalar_one())
        except Exception as exc:  # noqa: BLE001 - reported by the caller's assertion
            errors.append(exc)

    threads = [threading.Thread(target=connect, args=(engine,)) for engine in engines]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return modes, errors


def test_connections_opening_a_new_file_together_all_get_wal(tmp_path: Path) -> None:
    # SQLite answers a journal-mode change made while another connection holds the new file with
    # "database is locked" at once, without the busy timeout: every connection must still open.
    # One engine per connection, as in processes opening the file together (one engine runs its
    # first connection's setup alone). Without the retry, about one attempt in ten failed.
    for attempt in range(30):
        engines = [make_sqlite_engine(f"sqlite:///{tmp_path / f'new-{attempt}.db'}") for _ in range(6)]
        try:
            modes, errors = _open_together(engines)
        finally:
            for engine in engines:
                engine.dispose()
        assert errors == [], f"attempt {attempt}"
        assert modes == ["wal"] * 6
