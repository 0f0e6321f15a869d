"""The store contract on PostgreSQL with pgvector: one table per dataset and retrieval family.

Every row is one point: the segment (or child, or summary) id as a ``uuid`` primary key, its
``document_id`` (btree), ``enabled``, ``summary`` and the heading paths ``sections`` (GIN), as
the Qdrant payload has them; the dense family adds a ``vector`` column and the BM25 family a
``sparsevec`` (``vector/pgvector.py``, ``fulltext/pgvector.py``). A write commits before it
returns, so ``flush`` has nothing to do, and any number of processes may read and write the same
tables: the state lives in the database only.

Tables are created at first open, under a transaction-scoped advisory lock so that two processes
opening the same dataset at once do not race. The ``vector`` extension is created there too when
the role may; when it cannot be, the error says what to run. Iterative index scans (filtered
search that fills ``limit``) need pgvector 0.8, which is checked at open.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Self

from psycopg.pq import Format
from sqlalchemy import (
    Boolean,
    Column,
    ColumnElement,
    Connection,
    Engine,
    MetaData,
    Table,
    Text,
    Uuid,
    any_,
    create_engine,
    delete,
    event,
    func,
    literal,
    make_url,
    select,
    text,
    true,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError

from zhiku.core.cancellation import current_token
from zhiku.core.config import Settings
from zhiku.core.db.postgresql import replace_closed_connections
from zhiku.core.errors import Cancelled, ConfigError, InvalidInput, StoreError, ZhikuError
from zhiku.datasource.points.collection import DocumentPayloads, canonical_ids, store_errors

#: The oldest pgvector with iterative index scans (``hnsw.iterative_scan``).
MIN_PGVECTOR = (0, 8, 0)
#: Both halves of the advisory lock held while the extension and a store's tables are created.
_CREATE_LOCK = (0x7A68696B, 0x70677663)  # "zhik", "pgvc"
#: A table name: lower-case letters, digits and ``_``, short enough for its indexes' suffixes
#: within PostgreSQL's 63 characters.
_TABLE_NAME = re.compile(r"[a-z_][a-z0-9_]{0,47}")
_FIX = (
    "install pgvector 0.8 or later on the database server (package postgresql-NN-pgvector, or "
    "the extension list of a managed database), then run CREATE EXTENSION vector; in that "
    "database as its owner or a superuser"
)

ID_ARRAY = ARRAY(Uuid(as_uuid=False))
TEXT_ARRAY = ARRAY(Text)


def table_prefix(dataset_id: str) -> str:
    """``zhiku_<id>``: a dataset's tables start with it (the id without dashes when it is a UUID
    or otherwise plain, else a hash of it)."""
    plain = dataset_id.lower().replace("-", "")
    if not re.fullmatch(r"[a-z0-9_]{1,32}", plain):
        plain = hashlib.blake2b(dataset_id.encode("utf-8"), digest_size=16).hexdigest()
    return f"zhiku_{plain}"


def store_url(settings: Settings) -> str:
    """The database of the pgvector stores: ``pgvector_url``, else the metadata database when it
    is PostgreSQL."""
    if settings.pgvector_url:
        return settings.pgvector_url
    if settings.database_url and make_url(settings.database_url).get_backend_name() == "postgresql":
        return settings.database_url
    raise ConfigError(
        "the pgvector stores need a PostgreSQL database: set pgvector_url, or a PostgreSQL "
        "database_url (postgresql+psycopg://user:password@host/db)"
    )


def _engine_url(url: str) -> URL:
    """``url`` with psycopg 3 as its driver (SQLAlchemy's default for ``postgresql://`` is psycopg2)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "postgresql":
        raise ConfigError(f"the pgvector stores need a PostgreSQL URL, got {parsed.drivername!r}")
    return parsed.set(drivername="postgresql+psycopg") if parsed.drivername == "postgresql" else parsed


#: An execution option: this statement's rows come in PostgreSQL's binary format. A ``bytea``
#: comes as its bytes instead of twice as many hex digits to decode: a search's postings (850 KB)
#: in 0.9 ms instead of 6.8.
BINARY_RESULTS = "zhiku_binary_results"


def _binary_results(
    connection: Connection, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
) -> None:
    """Ask psycopg for binary rows when the statement's execution options say so."""
    if (
        context is not None
        and context.execution_options.get(BINARY_RESULTS)
        and connection.dialect.driver == "psycopg"
    ):
        cursor.format = Format.BINARY


class _Engines:
    """One pooled engine per database URL, shared by every store of the process and disposed of
    when the last one closes (a dataset opens two stores; a server opens many datasets)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._engines: dict[str, tuple[Engine, int]] = {}

    def acquire(self, url: str) -> Engine:
        key = _engine_url(url).render_as_string(hide_password=False)
        with self._lock:
            engine, users = self._engines.get(key, (None, 0))
            if engine is None:
                # a connection the server dropped (restart, idle timeout) is replaced before use
                # instead of failing the next search
                engine = create_engine(key)
                replace_closed_connections(engine)
                event.listen(engine, "before_cursor_execute", _binary_results)
            self._engines[key] = (engine, users + 1)
            return engine

    def release(self, engine: Engine) -> None:
        with self._lock:
            key = next(key for key, (held, _) in self._engines.items() if held is engine)
            _, users = self._engines[key]
            if users > 1:
                self._engines[key] = (engine, users - 1)
            else:
                del self._engines[key]
                engine.dispose()


_engines = _Engines()


def ensure_pgvector(connection: Connection, where: str) -> None:
    """Create the ``vector`` extension if it is missing; StoreError naming the fix when it cannot
    be created or is older than :data:`MIN_PGVECTOR`."""
    version = connection.scalar(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'"))
    if version is None:
        try:
            with connection.begin_nested():
                connection.execute(text("CREATE EXTENSION IF NOT EXISTS vector"))
        except Exception as exc:  # not installed on the server, or no privilege to create it
            reason = str(getattr(exc, "orig", exc)).strip().splitlines()[0]
            raise StoreError(f"{where}: the pgvector extension is missing ({reason}): {_FIX}") from exc
        version = connection.scalar(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'"))
    numbers = tuple(int(part) for part in re.findall(r"\d+", str(version))[:3])
    if numbers < MIN_PGVECTOR:
        raise StoreError(
            f"{where}: pgvector {version} has no iterative index scans: update it to 0.8 or later "
            "(ALTER EXTENSION vector UPDATE; after installing the new version on the server)"
        )


def check_database(settings: Settings) -> None:
    """StoreError naming the fix unless the pgvector stores' database is reachable and has
    pgvector 0.8 or later (creating the extension when the role may): what ``zhiku serve``
    checks before it listens, rather than failing every request that touches a store."""
    engine = _engines.acquire(store_url(settings))
    try:
        with store_errors("connect", "the pgvector database"), engine.begin() as connection:
            connection.execute(select(func.pg_advisory_xact_lock(*_CREATE_LOCK)))
            ensure_pgvector(connection, "the pgvector database")
    finally:
        _engines.release(engine)


#: Seconds between two looks at whether a running index build was cancelled.
_CANCEL_POLL_SECONDS = 0.2


class BuildWatch:
    """Stops a statement running on the connection given to :meth:`watch` when this thread's
    work is cancelled (a background optimize gives way to a delete or a stopping server): a
    thread polls the work's token and asks the server to cancel the statement
    (``pg_cancel_backend``), which rolls its transaction back. See :func:`cancellable_build`."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._token = current_token()
        self._done = threading.Event()
        self._lock = threading.Lock()  # a cancel is never sent once stop() has begun
        self._thread: threading.Thread | None = None
        self.reason: str | None = None

    def watch(self, connection: Connection) -> None:
        if self._token is None:
            return
        pid = int(connection.scalar(select(func.pg_backend_pid())) or 0)
        self._thread = threading.Thread(target=self._poll, args=(pid,), name="zhiku-build-watch", daemon=True)
        self._thread.start()

    def _poll(self, pid: int) -> None:
        assert self._token is not None
        while not self._done.wait(_CANCEL_POLL_SECONDS):
            try:
                self._token.check()
            except ZhikuError as exc:  # cancelled, or out of time
                with self._lock:
                    if self._done.is_set():
                        return
                    self.reason = str(exc)
                    with self._engine.connect() as other:
                        other.execute(select(func.pg_cancel_backend(pid)))
                return

    def stop(self) -> None:
        """Stop watching; call it before the watched connection goes back to the pool, so that no
        cancel reaches another statement on it."""
        with self._lock:
            self._done.set()
        if self._thread is not None:
            self._thread.join()


@contextmanager
def cancellable_build(engine: Engine) -> Iterator[BuildWatch]:
    """``with cancellable_build(engine) as build:`` then ``build.watch(connection)`` before a long
    statement (an HNSW index build): cancelling this thread's work stops the statement and the
    block raises :class:`~zhiku.core.errors.Cancelled` with the work's reason."""
    build = BuildWatch(engine)
    try:
        yield build
    except StoreError as exc:
        if build.reason is not None:
            raise Cancelled(build.reason) from exc
        raise
    finally:
        build.stop()


class PgPointStore:
    """The :class:`~zhiku.datasource.points.base.SegmentStore` bookkeeping on one table.

    A family passes its own columns, adds its indexes (and any table it keeps beside the points)
    to ``metadata`` in ``_create``, so they are created and dropped with the points, and adds
    ``upsert`` and ``search``. ``enabled`` and ``summary`` are booleans; a point without a section
    has no ``sections``.
    """

    #: a search waits on the database, without the GIL
    holds_gil = False
    keeps_metadata = False  # a search tests ``document_id`` against the scope's list

    def __init__(self, url: str, table: str, columns: Sequence[Column[Any]]) -> None:
        if not _TABLE_NAME.fullmatch(table):
            raise InvalidInput(f"table name must match {_TABLE_NAME.pattern}, got {table!r}")
        self.table_name = table
        self._where = f"pgvector table {table!r}"
        self.metadata = MetaData()
        self.table = Table(
            table,
            self.metadata,
            Column("id", Uuid(as_uuid=False), primary_key=True),
            Column("document_id", Text, nullable=False, index=True),
            Column("enabled", Boolean, nullable=False),
            Column("summary", Boolean, nullable=False),
            Column("sections", TEXT_ARRAY),
            *columns,
        )
        self._engine: Engine | None = _engines.acquire(url)
        try:
            with self._errors("create tables"), self.engine.begin() as connection:
                connection.execute(select(func.pg_advisory_xact_lock(*_CREATE_LOCK)))
                ensure_pgvector(connection, self._where)
                self._create(connection)
        except BaseException:
            self.close()
            raise

    def _create(self, connection: Connection) -> None:
        """Create what is missing (the lock is held); a family checks what exists against itself."""
        self.metadata.create_all(connection)

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            raise StoreError(f"{self._where}: the store is closed")
        return self._engine

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        """StoreError naming the store and the action, with the database's own words only (not
        the statement and its parameters: a query's vector, a document's terms)."""
        with store_errors(action, self._where):
            try:
                yield
            except DBAPIError as exc:
                reason = str(exc.orig or exc).strip().splitlines()[0]
                if exc.connection_invalidated:
                    raise StoreError(
                        f"{self._where}: {action} failed: the connection to the database was lost "
                        f"({reason}); the next request connects again"
                    ) from exc
                raise StoreError(f"{self._where}: {action} failed: {reason}") from exc

    def _delete(self, connection: Connection, condition: ColumnElement[bool]) -> None:
        """Delete the points matching ``condition`` (a family may keep statistics up to date)."""
        connection.execute(delete(self.table).where(condition))

    # -- writes ------------------------------------------------------------------------------

    def delete(self, ids: Sequence[str]) -> None:
        points = canonical_ids(ids)
        if points:
            with self._errors("delete"), self.engine.begin() as connection:
                self._delete(connection, self.table.c.id == any_(literal(points, ID_ARRAY)))

    def delete_document(self, document_id: str) -> None:
        with self._errors("delete document"), self.engine.begin() as connection:
            self._delete(connection, self.table.c.document_id == document_id)

    def set_enabled(self, ids: Sequence[str], enabled: bool) -> None:
        points = canonical_ids(ids)
        if points:
            statement = (
                update(self.table)
                .where(self.table.c.id == any_(literal(points, ID_ARRAY)))
                .values(enabled=enabled)
            )
            with self._errors("set enabled"), self.engine.begin() as connection:
                connection.execute(statement)

    def set_metadata(self, payloads: DocumentPayloads) -> None:
        """Nothing kept: a search here tests ``document_id`` against the scope's list."""

    # -- reads -------------------------------------------------------------------------------

    def ids(self) -> set[str]:
        with self._errors("read ids"), self.engine.connect() as connection:
            return set(connection.scalars(select(self.table.c.id)))

    def disabled_ids(self) -> set[str]:
        """Records search leaves out, to compare with the rows' flags."""
        statement = select(self.table.c.id).where(self.table.c.enabled.is_not(true()))
        with self._errors("read ids"), self.engine.connect() as connection:
            return set(connection.scalars(statement))

    def count(self) -> int:
        with self._errors("count"), self.engine.connect() as connection:
            return int(connection.scalar(select(func.count()).select_from(self.table)) or 0)

    # -- lifecycle ---------------------------------------------------------------------------

    def flush(self) -> None:
        """Nothing to do: every write has committed before it returned."""

    def optimize(self, payloads: DocumentPayloads | None = None) -> None:
        """Vacuum the tables and refresh the planner's statistics (the indexes are kept up to date
        by every write; no payload kept: a search here tests ``document_id``). The vacuum marks
        the pages every transaction sees, so that an index answers a count alone: a restricted
        search counts its scope's points through the ``document_id`` index, which on a table
        just written reads each point's row too (until the server's autovacuum comes by)."""
        with self._errors("vacuum"), self.engine.connect() as connection:
            autocommit = connection.execution_options(isolation_level="AUTOCOMMIT")  # VACUUM's need
            for table in self.metadata.sorted_tables:
                autocommit.execute(text(f'VACUUM (ANALYZE) "{table.name}"'))

    def drop(self) -> None:
        """Drop the tables, then close."""
        with self._errors("drop"), self.engine.begin() as connection:
            self.metadata.drop_all(connection)
        self.close()

    def close(self) -> None:
        if self._engine is not None:
            engine, self._engine = self._engine, None
            _engines.release(engine)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
