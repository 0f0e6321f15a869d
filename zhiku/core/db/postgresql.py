"""PostgreSQL backend specifics (the only place with PostgreSQL-only SQL), through psycopg 3.

PostgreSQL's text types cannot hold NUL characters, which SQLite stores: a document name, a
query or an id with one would fail the statement there. Strings are sent without their NULs
instead, so the same input works on both databases.
"""

from __future__ import annotations

import select
from typing import Any

from psycopg.types.string import StrDumperUnknown
from sqlalchemy import Connection, Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DisconnectionError

from zhiku.core.errors import ConfigError

#: Key of the advisory lock that serialises migrations of one database ("zhiku" in ASCII).
MIGRATION_LOCK = 0x7A68696B75


class NulFreeStrDumper(StrDumperUnknown):
    """psycopg's default string dumper, dropping NUL characters rather than failing on them."""

    def dump(self, obj: str) -> Any:
        return super().dump(obj.replace("\x00", ""))


def make_postgresql_engine(url: str) -> Engine:
    """An engine for ``postgresql://`` or ``postgresql+psycopg://`` (psycopg 3 in both cases)."""
    parsed = make_url(url)
    if parsed.drivername == "postgresql":  # SQLAlchemy before 2.1 would pick psycopg2
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.drivername != "postgresql+psycopg":
        raise ConfigError(f"use postgresql+psycopg:// (psycopg 3), not {parsed.drivername}://")
    engine = create_engine(parsed)
    replace_closed_connections(engine)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.adapters.register_dumper(str, NulFreeStrDumper)

    return engine


def replace_closed_connections(engine: Engine) -> None:
    """Before a pooled connection is used, replace it if the server has closed it (a restart, a
    failover, an idle timeout, a terminated session): the server's last words (an error message,
    then the end of the stream) wait on a socket that is otherwise silent between statements, so a
    look at it without waiting tells. SQLAlchemy's pre-ping asks the server instead (``SELECT 1``):
    a round trip and ~0.1 ms of Python for every checkout, which a hybrid search pays twice."""
    event.listen(engine, "checkout", _closed_by_server)


def _closed_by_server(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
    if dbapi_connection.closed or dbapi_connection.broken or _readable(dbapi_connection.pgconn.socket):
        raise DisconnectionError("the server closed the connection")  # the pool connects anew


def _readable(socket: int) -> bool:
    """Whether data (or the end of the stream) waits on ``socket``."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(socket, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([socket], [], [], 0)[0])  # Windows


def lock_migrations(connection: Connection) -> None:
    """Begin the transaction holding the migration lock; it is released when that transaction ends."""
    connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
