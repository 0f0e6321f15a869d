"""INSERTs that keep the row already there when another writer got to the same key first."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Insert, insert
from sqlalchemy.dialects import sqlite
from sqlalchemy.orm import Session


def insert_missing(session: Session, table: Any) -> Insert:
    """``INSERT ... ON CONFLICT DO NOTHING`` on SQLite and PostgreSQL: rows whose primary key
    exists are skipped, not an error, whichever concurrent writer committed them. Other databases
    get a plain INSERT."""
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        from sqlalchemy.dialects import postgresql  # ~50 ms to import, for PostgreSQL users only

        return postgresql.insert(table).on_conflict_do_nothing()
    if dialect == "sqlite":
        return sqlite.insert(table).on_conflict_do_nothing()
    return insert(table)


def insert_replacing(session: Session, table: Any, replaced: Sequence[str]) -> Insert:
    """``INSERT ... ON CONFLICT (primary key) DO UPDATE`` of the ``replaced`` columns on SQLite
    and PostgreSQL: a row whose key exists takes the new values, whichever writer came first."""
    dialect = session.get_bind().dialect.name
    if dialect == "postgresql":
        from sqlalchemy.dialects import postgresql

        pg = postgresql.insert(table)
        return pg.on_conflict_do_update(
            index_elements=list(table.primary_key.columns), set_={c: pg.excluded[c] for c in replaced}
        )
    lite = sqlite.insert(table)
    return lite.on_conflict_do_update(
        index_elements=list(table.primary_key.columns), set_={c: lite.excluded[c] for c in replaced}
    )
