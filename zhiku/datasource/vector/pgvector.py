"""The dense vector store on PostgreSQL: a pgvector ``vector`` column with an HNSW cosine index.

How a search is run, so that a filtered one finds what an exact search finds:

- restricted to a list of documents or to a section: the admitted points are counted first, up
  to ``exact_scan_max``; as few as that, they are scanned exactly (index scans off, so the planner
  reads them through the ``document_id`` or ``sections`` index and sorts them): about what the
  graph walk for them costs, and unlike the walk it does not grow with the table;
- otherwise (and with more admitted points) the HNSW graph, built by ``optimize``, is searched
  with pgvector's iterative scan in strict order: the graph walk goes on past ``ef_search``
  candidates until ``limit`` admitted points are found, or ``hnsw.max_scan_tuples`` were visited
  (set from the table's size and ``exact_scan_max`` so that the rarest filter that reaches the
  graph still fills ``limit``). Without it, pgvector filters the ``ef_search`` nearest points
  afterwards and a 1% filter returns one point or none. Before ``optimize`` there is no graph
  and every search scans exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pgvector.sqlalchemy import VECTOR
from sqlalchemy import Column, Connection, Index, any_, func, literal, select, text
from sqlalchemy.dialects.postgresql import insert

from zhiku.core.config import Settings
from zhiku.core.errors import StoreError
from zhiku.core.scope import DocumentScope
from zhiku.core.sections import ancestors
from zhiku.datasource.points.collection import DocumentPayloads, canonical_ids
from zhiku.datasource.points.pg_reads import QueryVector, admitted_at_most, served
from zhiku.datasource.points.pgvector import (
    ID_ARRAY,
    PgPointStore,
    cancellable_build,
    store_url,
    table_prefix,
)
from zhiku.datasource.vector.base import VectorRecord
from zhiku.datasource.vector.dense import DEFAULT_HNSW_EF, checked_values
from zhiku.datasource.vector.restricted import is_restricted

#: Admitted points up to which a restricted search scans them exactly (see the module docstring).
EXACT_SCAN_MAX = 10_000
#: ``maintenance_work_mem`` an index build may raise itself to, and what a point of the graph
#: takes beside its vector (neighbour lists of m = 16, tuple headers).
_BUILD_MEMORY_KB_MAX = 1024 * 1024
_GRAPH_BYTES_PER_POINT = 400
#: pgvector's largest ``hnsw.ef_search``.
_MAX_EF_SEARCH = 1000
#: The settings of a graph search, for this transaction: the beam width, iterative scan in strict
#: order, no sorting (the graph gives the order: a plan sorting the admitted points read through
#: the ``document_id`` index would read them all), and the points the walk may visit, from the
#: table's size as the planner knows it (``reltuples``, refreshed by ``optimize``).
_GRAPH_SEARCH = (
    "SELECT set_config('hnsw.ef_search', %(ef)s, true),"
    " set_config('hnsw.iterative_scan', 'strict_order', true),"
    " set_config('enable_sort', 'off', true),"
    " set_config('hnsw.max_scan_tuples',"
    " least(2147483647, greatest(20000, ceil(%(visits)s * greatest(reltuples, 0))))::bigint::text, true)"
    " FROM pg_class WHERE oid = to_regclass(%(table)s)"
)


class PgVectorStore(PgPointStore):
    """Cosine search over one dataset's segment embeddings in ``table`` (created if missing).

    ``dim`` must be the table's: a table made for another size raises :class:`StoreError` at
    open. ``hnsw_ef`` is the beam width at query time (``hnsw.ef_search``, at least ``limit``);
    ``exact_scan_max`` the admitted points up to which a restricted search is exact. Vectors need
    not be normalised; a vector of the wrong size, with NaN/inf or all zeros raises
    :class:`~zhiku.core.errors.InvalidInput`.
    """

    def __init__(
        self,
        url: str,
        table: str,
        dim: int,
        hnsw_ef: int = DEFAULT_HNSW_EF,
        exact_scan_max: int = EXACT_SCAN_MAX,
    ) -> None:
        self.dim = dim
        self.hnsw_ef = hnsw_ef
        self.exact_scan_max = exact_scan_max
        super().__init__(url, table, [Column("embedding", VECTOR(dim), nullable=False)])

    def _create(self, connection: Connection) -> None:
        embedding = self.table.c.embedding
        Index(f"{self.table_name}_sections", self.table.c.sections, postgresql_using="gin")
        super()._create(connection)
        held = connection.scalar(
            text(
                "SELECT atttypmod FROM pg_attribute"
                " WHERE attrelid = to_regclass(:table) AND attname = :column"
            ),
            {"table": self.table_name, "column": embedding.name},
        )
        if held != self.dim:
            raise StoreError(
                f"{self._where} holds vectors of {held} dimensions (vector size {held}), the embedding "
                f"model gives {self.dim}: search with the model the dataset was built with, or "
                "re-index the dataset into a new one"
            )

    def upsert(self, records: Sequence[VectorRecord]) -> None:
        """Insert or replace records (the last one wins for a repeated id)."""
        ids = canonical_ids(r.id for r in records)
        rows = {
            point_id: {
                "id": point_id,
                "document_id": r.document_id,
                "enabled": r.enabled,
                "summary": r.summary,
                "sections": ancestors(r.section) if r.section else None,
                "embedding": checked_values(r.vector, self.dim),
            }
            for point_id, r in zip(ids, records, strict=True)
        }
        if not rows:
            return
        statement = insert(self.table)
        statement = statement.on_conflict_do_update(
            index_elements=[self.table.c.id],
            set_={name: statement.excluded[name] for name in next(iter(rows.values())) if name != "id"},
        )
        with self._errors("upsert"), self.engine.begin() as connection:
            connection.execute(statement, list(rows.values()))

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of these ids; absent ones are left out."""
        points = canonical_ids(ids)
        if not points:
            return {}
        table = self.table
        statement = select(table.c.id, table.c.embedding).where(table.c.id == any_(literal(points, ID_ARRAY)))
        with self._errors("read vectors"), self.engine.connect() as connection:
            rows = connection.execute(statement).all()
        return {point_id: np.asarray(embedding, dtype=np.float32) for point_id, embedding in rows}

    def search(
        self, vector: np.ndarray, limit: int, scope: DocumentScope | None = None, *, summaries: bool = False
    ) -> list[tuple[str, float]]:
        """``(segment_id, cosine)`` best first, enabled records (of documents in ``scope``) only."""
        if limit <= 0 or (scope is not None and scope.empty):
            return []
        query = QueryVector(checked_values(vector, self.dim))
        admitted = served(scope, summaries)
        statement = (
            f'SELECT id::text, embedding <=> %(query)s::vector AS distance FROM "{self.table_name}"'
            f" WHERE {admitted.where} ORDER BY distance LIMIT %(limit)s"
        )
        with self._errors("search"), self.engine.begin() as connection:
            # a scope that may admit few points has them counted (through the document_id or
            # sections index); one leaving some documents out admits most of them
            counted = is_restricted(scope)
            if counted and admitted_at_most(connection, self.table_name, admitted, self.exact_scan_max):
                connection.exec_driver_sql("SET LOCAL enable_indexscan = off")  # HNSW is an index scan
            else:
                # an admitted share s needs ~ef/s visits to collect ef points; s is at least
                # exact_scan_max / points here (twice that, for margin; 20,000: pgvector's default)
                visits = 2.0 * self.hnsw_ef / max(self.exact_scan_max, 1) if counted else 0.0
                ef = min(max(self.hnsw_ef, limit), _MAX_EF_SEARCH)
                connection.exec_driver_sql(
                    _GRAPH_SEARCH, {"ef": str(ef), "visits": visits, "table": self.table_name}
                )
            rows = connection.exec_driver_sql(
                statement, {**admitted.params, "query": query, "limit": limit}
            ).all()
        return [(point_id, 1.0 - float(found)) for point_id, found in rows]

    def optimize(self, payloads: DocumentPayloads | None = None) -> None:
        """Build the HNSW graph if the table has none yet, then refresh the planner's statistics.

        Until then every search scans exactly, as the embedded store does before its first
        ``optimize``: inserting into a graph costs about ten times what building it at once does
        (5,000 384-d points: 150 against 1,700 a second, then 2.5 s to build). Once built, every
        write keeps the graph up to date. The build blocks writes, not searches, and has up to
        1 GB of ``maintenance_work_mem`` (a graph that does not fit builds many times slower).
        A delete of the dataset or a stopping server cancels the build (its transaction rolls
        back, and the next optimize starts it again).
        """
        with (
            cancellable_build(self.engine) as build,
            self._errors("build the HNSW index"),
            self.engine.begin() as connection,
        ):
            build.watch(connection)
            points = int(connection.scalar(select(func.count()).select_from(self.table)) or 0)
            wanted_kb = min(_BUILD_MEMORY_KB_MAX, points * (4 * self.dim + _GRAPH_BYTES_PER_POINT) // 1024)
            held_kb = int(
                connection.scalar(text("SELECT setting FROM pg_settings WHERE name = 'maintenance_work_mem'"))
            )
            if wanted_kb > held_kb:
                connection.execute(select(func.set_config("maintenance_work_mem", f"{wanted_kb}kB", True)))
            connection.execute(
                text(
                    f'CREATE INDEX IF NOT EXISTS "{self.table_name}_hnsw" ON "{self.table_name}"'
                    " USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 100)"
                )
            )
            build.stop()  # before the connection goes back to the pool
        super().optimize()


def open_pgvector_vector(settings: Settings, dataset_id: str, dim: int) -> PgVectorStore:
    """A dataset's dense store on the pgvector database of ``settings`` (see ``store_url``)."""
    return PgVectorStore(store_url(settings), f"{table_prefix(dataset_id)}_dense", dim)
