"""BM25 on PostgreSQL: each record's saturated term frequencies as a pgvector ``sparsevec``, the IDF
in the query vector.

The scores are those of ``sparse.py`` (Lucene's BM25, the dataset's own tokens, see
``bm25_math``); what Qdrant's IDF modifier does at query time is done here from a table of
document frequencies: the query vector holds each term's count times its IDF, and the score is
the inner product (``<#>``) with the record's stored weights.

The records' table (``<table>``: ``length``, ``terms`` and their ``counts``, the ``weights``
and the corpus statistics each record was weighted with) has two statistics tables beside it
(:mod:`.pg_statistics`): records per term, and the number of records and their total length.

Every write updates the three in one transaction holding the stats row's lock, so the
statistics cannot drift from the records and any number of processes may write (one at a time
per dataset) and read.

Search is exact: the records sharing a query term are found through a GIN index on ``terms``
and ranked by ``<#>``. (An HNSW index on ``sparsevec`` would be approximate and refuses records
of more than 1,000 distinct terms.) Term ids are the 32-bit hashes of ``bm25_math.term_id``
folded below pgvector's 10⁹ sparse dimensions, which merges about four pairs of terms in a
90,000-token vocabulary instead of one.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from pgvector import SparseVector
from pgvector.sqlalchemy import SPARSEVEC
from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    Connection,
    Float,
    Index,
    Integer,
    any_,
    bindparam,
    delete,
    literal,
    select,
    text,
    update,
)
from sqlalchemy.dialects.postgresql import ARRAY, insert

from zhiku.core.config import Settings
from zhiku.core.scope import DocumentScope
from zhiku.core.sections import ancestors
from zhiku.datasource.fulltext import bm25_math
from zhiku.datasource.fulltext.base import TextRecord
from zhiku.datasource.fulltext.pg_statistics import CorpusStatistics
from zhiku.datasource.fulltext.sparse import OPTIMIZE_TOLERANCE
from zhiku.datasource.points.collection import canonical_ids
from zhiku.datasource.points.pgvector import ID_ARRAY, PgPointStore, store_url, table_prefix

#: pgvector's largest ``sparsevec`` dimension count; term ids are folded below it.
SPARSE_DIM = 1_000_000_000
_INT_ARRAY = ARRAY(Integer)
_REWEIGHT_BATCH = 1024
#: For this transaction: find the records sharing a query term through the GIN index. The
#: planner prices ``&&`` on integer arrays like any operator and chooses a sequential scan once
#: a few tenths of the records share a term; the overlap test then runs against every record's
#: terms (26 ms at 10,000 records, 5 ms through the index). No JIT: a search plans in ~0.5 ms.
_THROUGH_TERM_INDEX = text(
    "SELECT set_config('enable_seqscan', 'off', true), set_config('jit', 'off', true)"
)


#: The first pass of a search ranks the records holding the rarest query terms, as few terms as
#: hold this many records per hit asked for between them: enough for a threshold near the final
#: one, few enough to rank quickly (at 10,000 records the rarer half of a long query's terms was
#: held by some 1,900 records).
FIRST_PASS_RECORDS_PER_HIT = 4


def _rarest(held: dict[int, int], records: int) -> list[int]:
    """The rarest terms of ``held`` (term → records holding it), as few as hold ``records``
    records between them (all terms if they hold fewer)."""
    chosen, total = [], 0
    for term in sorted(held, key=lambda term: (held[term], term)):
        chosen.append(term)
        total += held[term]
        if total >= records:
            break
    return chosen


def folded_counts(tokens: Iterable[str]) -> dict[int, int]:
    """How many times each folded term id occurs in ``tokens`` (ids that fold together add up)."""
    counts: dict[int, int] = {}
    for term, n in bm25_math.term_counts(tokens).items():
        folded = term % SPARSE_DIM
        counts[folded] = counts.get(folded, 0) + n
    return counts


class PgBM25Store(PgPointStore):
    """The :class:`~zhiku.datasource.fulltext.base.FullTextStore` contract in ``table`` and its two
    statistics tables (created if missing).

    ``k1`` and ``b`` are BM25's saturation and length normalisation; records remember the values
    (and the corpus statistics) they were weighted with, and :meth:`reweight` brings all of them
    to the current ones.
    """

    def __init__(
        self, url: str, table: str, k1: float = bm25_math.DEFAULT_K1, b: float = bm25_math.DEFAULT_B
    ) -> None:
        self.k1 = k1
        self.b = b
        columns = [
            Column("length", Integer, nullable=False),
            Column("terms", _INT_ARRAY, nullable=False),
            Column("counts", _INT_ARRAY, nullable=False),
            Column("weights", SPARSEVEC(SPARSE_DIM), nullable=False),
            Column("corpus_docs", BigInteger, nullable=False),
            Column("corpus_length", BigInteger, nullable=False),
            Column("k1", Float, nullable=False),
            Column("b", Float, nullable=False),
        ]
        super().__init__(url, table, columns)

    def _create(self, connection: Connection) -> None:
        self.statistics = CorpusStatistics(self.metadata, self.table_name)
        Index(f"{self.table_name}_terms_gin", self.table.c.terms, postgresql_using="gin")
        Index(f"{self.table_name}_sections", self.table.c.sections, postgresql_using="gin")
        super()._create(connection)
        self.statistics.create_row(connection)

    # -- statistics --------------------------------------------------------------------------

    @property
    def avgdl(self) -> float:
        """Current average record length in tokens (1.0 while the store is empty)."""
        with self._errors("read statistics"), self.engine.connect() as connection:
            return bm25_math.average_length(*self.statistics.read(connection))

    def _weights(
        self, terms: Sequence[int], counts: Sequence[int], length: int, avgdl: float
    ) -> SparseVector:
        weights = bm25_math.document_weights(
            dict(zip(terms, counts, strict=True)), length, avgdl, self.k1, self.b
        )
        return SparseVector({term: w for term, w in weights.items() if w > 0.0}, SPARSE_DIM)

    # -- writes ------------------------------------------------------------------------------

    def upsert(self, records: Sequence[TextRecord]) -> None:
        """Insert or replace records (the last one wins for a repeated id)."""
        latest = dict(zip(canonical_ids(r.id for r in records), records, strict=True))
        if not latest:
            return
        counted = {point_id: folded_counts(r.tokens) for point_id, r in latest.items()}
        table = self.table
        with self._errors("upsert"), self.engine.begin() as connection:
            docs, total = self.statistics.read(connection, lock=True)
            old = connection.execute(
                select(table.c.length, table.c.terms).where(
                    table.c.id == any_(literal(list(latest), ID_ARRAY))
                )
            ).all()
            docs += len(latest) - len(old)
            total += sum(len(r.tokens) for r in latest.values()) - sum(length for length, _ in old)
            avgdl = bm25_math.average_length(docs, total)
            change: Counter[int] = Counter()
            for _, terms in old:
                change.subtract(terms)
            rows = []
            for point_id, r in latest.items():
                terms = sorted(counted[point_id])
                counts = [counted[point_id][t] for t in terms]
                change.update(terms)
                rows.append(
                    {
                        "id": point_id,
                        "document_id": r.document_id,
                        "enabled": r.enabled,
                        "summary": r.summary,
                        "sections": ancestors(r.section) if r.section else None,
                        "length": len(r.tokens),
                        "terms": terms,
                        "counts": counts,
                        "weights": self._weights(terms, counts, len(r.tokens), avgdl),
                        "corpus_docs": docs,
                        "corpus_length": total,
                        "k1": self.k1,
                        "b": self.b,
                    }
                )
            statement = insert(table)
            statement = statement.on_conflict_do_update(
                index_elements=[table.c.id],
                set_={name: statement.excluded[name] for name in rows[0] if name != "id"},
            )
            connection.execute(statement, rows)
            self.statistics.change_term_docs(connection, change)
            self.statistics.write(connection, docs, total)

    def _delete(self, connection: Connection, condition: ColumnElement[bool]) -> None:
        docs, total = self.statistics.read(connection, lock=True)
        gone = connection.execute(
            delete(self.table).where(condition).returning(self.table.c.length, self.table.c.terms)
        ).all()
        if not gone:
            return
        change: Counter[int] = Counter()
        for _, terms in gone:
            change.subtract(terms)
        self.statistics.change_term_docs(connection, change)
        self.statistics.write(connection, docs - len(gone), total - sum(length for length, _ in gone))

    def reweight(self, tolerance: float = 0.0) -> int:
        """Rewrite the records weighted with another avgdl, k1 or b; returns how many changed.

        ``tolerance`` skips records whose avgdl is within that relative distance of the current
        one (k1 and b must match exactly). Works through the records in batches of 1,024, each in
        a transaction of its own (writes of other processes wait at most for one batch).
        """
        table = self.table
        columns = [
            table.c[name]
            for name in ("id", "length", "terms", "counts", "corpus_docs", "corpus_length", "k1", "b")
        ]
        rewrite = (
            update(table)
            .where(table.c.id == bindparam("point"))
            .values(
                weights=bindparam("new_weights", type_=SPARSEVEC(SPARSE_DIM)),
                corpus_docs=bindparam("docs"),
                corpus_length=bindparam("total"),
                k1=self.k1,
                b=self.b,
            )
        )
        changed, after = 0, None
        while True:
            with self._errors("reweight"), self.engine.begin() as connection:
                docs, total = self.statistics.read(connection, lock=True)
                avgdl = bm25_math.average_length(docs, total)
                page = select(*columns).order_by(table.c.id).limit(_REWEIGHT_BATCH)
                rows = connection.execute(page if after is None else page.where(table.c.id > after)).all()
                if not rows:
                    return changed
                after = rows[-1].id
                stale = [
                    {
                        "point": row.id,
                        "new_weights": self._weights(row.terms, row.counts, row.length, avgdl),
                        "docs": docs,
                        "total": total,
                    }
                    for row in rows
                    if not (
                        math.isclose(
                            bm25_math.average_length(row.corpus_docs, row.corpus_length),
                            avgdl,
                            rel_tol=max(tolerance, 1e-12),
                        )
                        and math.isclose(row.k1, self.k1, rel_tol=1e-12)
                        and math.isclose(row.b, self.b, rel_tol=1e-12)
                    )
                ]
                if stale:
                    connection.execute(rewrite, stale)
                changed += len(stale)

    # -- reads -------------------------------------------------------------------------------

    def search(
        self,
        query_tokens: Sequence[str],
        limit: int,
        scope: DocumentScope | None = None,
        *,
        summaries: bool = False,
    ) -> list[tuple[str, float]]:
        """``(segment_id, bm25)`` best first; ``[]`` for no tokens or no shared token.

        Exact, and pruned as Lucene's MaxScore does: no record scores more from a term than its
        query count × IDF × ``k1 + 1``. The best ``limit`` records holding the rarest terms
        (as few as hold :data:`FIRST_PASS_RECORDS_PER_HIT` × ``limit`` records between them)
        give a threshold; a record holding only common terms whose bounds add up to less cannot
        reach the best ``limit``, so only records holding another term are ranked."""
        weights = folded_counts(query_tokens)
        if not weights or limit <= 0 or (scope is not None and scope.empty):
            return []
        with self._errors("search"), self._snapshot() as connection:
            n, held = self.statistics.held(connection, list(weights))
            if not held:
                return []
            connection.execute(_THROUGH_TERM_INDEX)
            values = {term: weights[term] * bm25_math.lucene_idf(n, docs) for term, docs in held.items()}
            query = literal(SparseVector(values, SPARSE_DIM), SPARSEVEC(SPARSE_DIM))
            served = self._served(scope, summaries)
            commonest_first = sorted(values, key=lambda term: (values[term], term))
            terms = commonest_first
            rarest = _rarest(held, limit * FIRST_PASS_RECORDS_PER_HIT)
            if len(rarest) < len(terms):
                found = self._ranked(connection, query, rarest, served, limit)
                if len(found) == limit:
                    terms = self._essential(commonest_first, values, found[-1][1])
            return self._ranked(connection, query, terms, served, limit)

    def _essential(self, commonest_first: list[int], values: dict[int, float], threshold: float) -> list[int]:
        """The terms left once the commonest ones, whose most BM25 together stays below
        ``threshold`` (less a float32 margin), are set aside."""
        most = 0.0
        for n, term in enumerate(commonest_first):
            most += values[term] * (self.k1 + 1.0)
            if most >= threshold * (1.0 - 1e-6):
                return commonest_first[n:]
        return commonest_first  # a score above every bound: not reached, prune nothing

    def _ranked(
        self,
        connection: Connection,
        query: ColumnElement[Any],
        terms: Sequence[int],
        served: list[ColumnElement[bool]],
        limit: int,
    ) -> list[tuple[str, float]]:
        """The best ``limit`` records ``served`` admits among those holding one of ``terms``."""
        table = self.table
        product = table.c.weights.max_inner_product(query)
        statement = (
            select(table.c.id, product)
            .where(table.c.terms.overlap(literal(sorted(terms), _INT_ARRAY)), *served)
            .order_by(product, table.c.id)
            .limit(limit)
        )
        rows = connection.execute(statement).all()
        return [(point_id, -float(negative)) for point_id, negative in rows if negative < 0.0]

    def attainable(self, query_tokens: Sequence[str]) -> float:
        """The most BM25 any record could score for ``query_tokens``: each term's query count ×
        its IDF × ``k1 + 1``; a term no record holds at the IDF of a term one record holds."""
        weights = folded_counts(query_tokens)
        if not weights:
            return 0.0
        with self._errors("read statistics"), self._snapshot() as connection:
            n, idf = self.statistics.idf(connection, list(weights))
        unseen = bm25_math.lucene_idf(n, 1)
        return math.fsum(count * idf.get(term, unseen) * (self.k1 + 1.0) for term, count in weights.items())

    def _snapshot(self) -> Any:
        """A connection whose reads see one snapshot (the statistics agree with the records)."""
        return self.engine.connect().execution_options(isolation_level="REPEATABLE READ")

    # -- lifecycle ---------------------------------------------------------------------------

    def optimize(self) -> None:
        """Reweight records whose avgdl is off by more than 0.1% (a score change far below any
        ranking effect), then refresh the planner's statistics. Reads every record."""
        self.reweight(tolerance=OPTIMIZE_TOLERANCE)
        super().optimize()


def open_pgvector_fulltext(settings: Settings, dataset_id: str) -> PgBM25Store:
    """A dataset's BM25 store on the pgvector database of ``settings`` (see ``store_url``)."""
    return PgBM25Store(store_url(settings), f"{table_prefix(dataset_id)}_bm25")
