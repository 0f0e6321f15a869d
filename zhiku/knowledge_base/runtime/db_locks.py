"""Locks that hold across processes sharing one PostgreSQL database.

A thread lock only serialises the threads of one process. With several API processes and Celery
workers on one PostgreSQL database, two of them could each read the same "next free position",
or an edit could write back a segment another process just deleted. So on PostgreSQL:

- :class:`DatasetLock` adds a session advisory lock per dataset to the thread lock. A dataset's
  write spans several transactions with store writes between them (points are written before
  their rows, see ``dataset_index``), so a transaction-scoped lock would end too early; the
  session lock is held on a connection of its own for exactly as long as the thread lock, and
  PostgreSQL drops it with the connection if the process dies.
- :class:`ServerPresence` lets a process recover interrupted documents only when no other
  process that may be indexing in its own threads is connected: each such process holds a
  shared advisory lock while it runs, and recovery needs the exclusive one.

On SQLite the database serialises writers and one process owns the data directory (its owner
lock file), so both are the plain in-process behaviour.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine, text


def is_postgresql(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


def lock_key(name: str) -> int:
    """A stable signed 64-bit advisory-lock key for a name (the same in every process)."""
    digest = hashlib.blake2b(f"zhiku:{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def dataset_key(dataset_id: str) -> int:
    return lock_key(f"dataset:{dataset_id}")


def servers_key(schema: str) -> int:
    """Advisory locks are per database, not per schema: two knowledge bases in two schemas of one
    database must not see each other as servers of theirs."""
    return lock_key(f"servers:{schema}")


class DatasetLock:
    """Re-entrant lock on one dataset's writes: this process's threads, and on PostgreSQL every
    process on the database. Threads queue on the thread lock first, so a process waits on
    PostgreSQL with one connection at most."""

    def __init__(self, engine: Engine, dataset_id: str) -> None:
        self._engine = engine
        self._key = dataset_key(dataset_id)
        self._local = threading.RLock()
        self._depth = 0  # guarded by ``_local``
        self._connection: Connection | None = None

    @contextmanager
    def hold(self) -> Iterator[None]:
        with self._local:
            if self._depth == 0 and is_postgresql(self._engine):
                self._connection = self._acquire()
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._connection is not None:
                    connection, self._connection = self._connection, None
                    _release(connection, self._key)

    def _acquire(self) -> Connection:
        connection = self._engine.connect()
        try:
            connection.execute(text("SELECT pg_advisory_lock(:key)"), {"key": self._key})
            connection.commit()  # the session lock outlives the transaction; no idle transaction
        except BaseException:
            connection.invalidate()  # a lock possibly taken goes with the connection
            connection.close()
            raise
        return connection


def _release(connection: Connection, key: int) -> None:
    """Unlock and give the connection back; a connection that fails to unlock is discarded, which
    ends its session and so its locks."""
    try:
        connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": key})
        connection.commit()
    except BaseException:
        connection.invalidate()
        raise
    finally:
        connection.close()


@contextmanager
def try_lock(engine: Engine, name: str) -> Iterator[bool]:
    """Hold the advisory lock ``name`` for the block if no other process on the PostgreSQL
    database holds it; yields whether it was taken (not waiting for it). On SQLite, always True:
    one process serves a SQLite database (the caller serialises its own threads)."""
    if not is_postgresql(engine):
        yield True
        return
    key = lock_key(name)
    connection = engine.connect()
    try:
        taken = bool(connection.scalar(text("SELECT pg_try_advisory_lock(:key)"), {"key": key}))
        connection.commit()
    except BaseException:
        connection.invalidate()
        connection.close()
        raise
    if not taken:
        connection.close()
        yield False
        return
    try:
        yield True
    finally:
        _release(connection, key)


class ServerPresence:
    """This process's mark on the database while it may index in its own threads.

    ``alone`` says whether no other such process was connected when this one arrived: only then
    may it fail or requeue documents left mid-ingest without a lease, since another live process
    may be indexing them. Two processes arriving together: one gets the exclusive lock and
    recovers, the other waits for it to finish, then just runs. Always ``alone`` on SQLite.
    """

    def __init__(self, engine: Engine) -> None:
        self._connection: Connection | None = None
        self._exclusive = False
        self._key = 0
        self.alone = True
        if not is_postgresql(engine):
            return
        connection = engine.connect()
        try:
            self._key = servers_key(str(connection.scalar(text("SELECT current_schema()"))))
            self._exclusive = bool(
                connection.scalar(text("SELECT pg_try_advisory_lock(:key)"), {"key": self._key})
            )
            # waits while another process holds the exclusive lock, i.e. is recovering
            connection.execute(text("SELECT pg_advisory_lock_shared(:key)"), {"key": self._key})
            connection.commit()
        except BaseException:
            connection.invalidate()
            connection.close()
            raise
        self._connection = connection
        self.alone = self._exclusive

    def recovered(self) -> None:
        """Recovery is done: let the next processes in (keeps this one's shared mark)."""
        if self._connection is not None and self._exclusive:
            self._exclusive = False
            self._connection.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": self._key})
            self._connection.commit()

    def release(self) -> None:
        if self._connection is not None:
            connection, self._connection = self._connection, None
            connection.invalidate()  # ends the session: every lock it holds goes with it
            connection.close()
