"""BM25 on PostgreSQL: each record's saturated term frequencies as a pgvector ``sparsevec`` and
in an inverted index beside it, the IDF in the query.

The scores are those of ``sparse.py`` (Lucene's BM25, the dataset's own tokens, see
``bm25_math``); what Qdrant's IDF modifier does at query time is done here from a table of
document frequencies: a record's score is the sum, over the query's terms, of the term's count
times its IDF times the record's weight for it.

The records' table (``<table>``: ``length``, ``terms`` and their ``counts``, the ``weights``,
the corpus statistics each record was weighted with and its ``posting_key``) has three tables
beside it: records per term and the number of records and their total length
(:mod:`.pg_statistics`), and the postings (:mod:`.pg_postings`).

Every write updates them in one transaction holding the stats row's lock, so the statistics
cannot drift from the records and any number of processes may write (one at a time per dataset)
and read.

Search is exact. It sums the postings of the query's terms, then reads the rows of the best
keys (dropping dead keys and what the search does not admit) until ``limit`` are found. A search
restricted to few records (a list of documents, a section) ranks those records' ``weights``
instead. Term ids are the 32-bit hashes of ``bm25_math.term_id`` folded below pgvector's 10⁹
sparse dimensions, which merges about four pairs of terms in a 90,000-token vocabulary instead
of one.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
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
from zhiku.datasource.fulltext.pg_postings import TermPostings
from zhiku.datasource.fulltext.pg_ranking import SPARSE_DIM, PostingsRanking, rank_rows
from zhiku.datasource.fulltext.pg_statistics import CorpusStatistics, RecentHeld
from zhiku.datasource.fulltext.sparse import OPTIMIZE_TOLERANCE
from zhiku.datasource.points.collection import DocumentPayloads, canonical_ids
from zhiku.datasource.points.pg_reads import admitted_at_most, served
from zhiku.datasource.points.pgvector import BINARY_RESULTS, ID_ARRAY, PgPointStore, store_url, table_prefix
from zhiku.datasource.vector.restricted import is_restricted

#: Admitted records up to which a restricted search ranks them all from their rows (about what
#: reading the postings costs; the search counts them first, and stops counting past it).
RANK_ADMITTED_MAX = 2_000
_INT_ARRAY = ARRAY(Integer)
#: The columns a record's weights come from.
_WEIGHTED_WITH = ("posting_key", "length", "terms", "counts", "corpus_docs", "corpus_length", "k1", "b")
_REWEIGHT_BATCH = 1024


def _weighted_with(row: Any) -> dict[int, float]:
    """The weights a record row holds, from its terms, counts and the statistics it was weighted
    with."""
    avgdl = bm25_math.average_length(row.corpus_docs, row.corpus_length)
    weights = bm25_math.document_weights(
        dict(zip(row.terms, row.counts, strict=True)), row.length, avgdl, row.k1, row.b
    )
    return {term: w for term, w in weights.items() if w > 0.0}


def folded_counts(tokens: Iterable[str]) -> dict[int, int]:
    """How many times each folded term id occurs in ``tokens`` (ids that fold together add up)."""
    counts: dict[int, int] = {}
    for term, n in bm25_math.term_counts(tokens).items():
        folded = term % SPARSE_DIM
        counts[folded] = counts.get(folded, 0) + n
    return counts


class PgBM25Store(PgPointStore):
    """The :class:`~zhiku.datasource.fulltext.base.FullTextStore` contract in ``table``, its two
    statistics tables and its postings (created if missing; a table of an earlier version gets its
    postings at its first open).

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
            Column("posting_key", BigInteger, nullable=False),
        ]
        super().__init__(url, table, columns)

    def _create(self, connection: Connection) -> None:
        name = self.table_name
        self.statistics = CorpusStatistics(self.metadata, name)
        self.postings = TermPostings(self.metadata, name)
        self.recent = RecentHeld()
        self.ranking = PostingsRanking(name, self.statistics, self.postings)
        Index(f"{name}_sections", self.table.c.sections, postgresql_using="gin")
        key_index = Index(f"{name}_posting_key", self.table.c.posting_key, unique=True)
        columns = connection.scalars(
            text("SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(:table) AND attnum > 0"),
            {"table": name},
        ).all()
        had_postings = connection.scalar(
            text("SELECT to_regclass(:table)"), {"table": self.postings.blocks.name}
        )
        super()._create(connection)
        if had_postings is None:
            self.postings.store_uncompressed(connection)
        self.statistics.create_row(connection)
        if columns and "posting_key" not in columns:
            self._add_postings(connection, key_index)

    def _add_postings(self, connection: Connection, key_index: Index) -> None:
        """Give a table of an earlier version (records only, found through a GIN index on their
        terms) its posting keys and postings, once, at its first open."""
        name = self.table_name
        connection.execute(text(f'ALTER TABLE "{name}" ADD COLUMN posting_key bigint'))
        connection.execute(
            text(f'UPDATE "{name}" SET posting_key = nextval(:keys)'), {"keys": self.postings.keys.name}
        )
        connection.execute(text(f'ALTER TABLE "{name}" ALTER COLUMN posting_key SET NOT NULL'))
        key_index.create(connection)
        connection.execute(text(f'DROP INDEX IF EXISTS "{name}_terms_gin"'))
        table, after = self.table, None
        while True:
            page = (
                select(*(table.c[c] for c in _WEIGHTED_WITH))
                .order_by(table.c.posting_key)
                .limit(_REWEIGHT_BATCH)
            )
            rows = connection.execute(
                page if after is None else page.where(table.c.posting_key > after)
            ).all()
            if not rows:
                return
            after = rows[-1].posting_key
            self.postings.append(connection, ((row.posting_key, _weighted_with(row)) for row in rows))

    # -- statistics --------------------------------------------------------------------------

    @property
    def avgdl(self) -> float:
        """Current average record length in tokens (1.0 while the store is empty)."""
        with self._errors("read statistics"), self.engine.connect() as connection:
            return bm25_math.average_length(*self.statistics.read(connection))

    def _term_weights(
        self, terms: Sequence[int], counts: Sequence[int], length: int, avgdl: float
    ) -> dict[int, float]:
        weights = bm25_math.document_weights(
            dict(zip(terms, counts, strict=True)), length, avgdl, self.k1, self.b
        )
        return {term: w for term, w in weights.items() if w > 0.0}

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
            rows, postings = [], []
            keys = self.postings.new_keys(connection, len(latest))
            for key, (point_id, r) in zip(keys, latest.items(), strict=True):
                terms = sorted(counted[point_id])
                counts = [counted[point_id][t] for t in terms]
                weights = self._term_weights(terms, counts, len(r.tokens), avgdl)
                change.update(terms)
                postings.append((key, weights))
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
                        "weights": SparseVector(weights, SPARSE_DIM),
                        "corpus_docs": docs,
                        "corpus_length": total,
                        "k1": self.k1,
                        "b": self.b,
                        "posting_key": key,
                    }
                )
            statement = insert(table)
            statement = statement.on_conflict_do_update(
                index_elements=[table.c.id],
                set_={name: statement.excluded[name] for name in rows[0] if name != "id"},
            )
            connection.execute(statement, rows)
            self.postings.append(connection, postings)
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
        a transaction of its own (writes of other processes wait at most for one batch); a
        rewritten record gets a new posting key and postings, like any write.
        """
        table = self.table
        columns = [table.c.id, *(table.c[name] for name in _WEIGHTED_WITH)]
        rewrite = (
            update(table)
            .where(table.c.id == bindparam("point"))
            .values(
                weights=bindparam("new_weights", type_=SPARSEVEC(SPARSE_DIM)),
                corpus_docs=bindparam("docs"),
                corpus_length=bindparam("total"),
                k1=self.k1,
                b=self.b,
                posting_key=bindparam("key"),
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
                    row
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
                keys = self.postings.new_keys(connection, len(stale))
                weights = [self._term_weights(row.terms, row.counts, row.length, avgdl) for row in stale]
                if stale:
                    connection.execute(
                        rewrite,
                        [
                            {
                                "point": row.id,
                                "new_weights": SparseVector(w, SPARSE_DIM),
                                "docs": docs,
                                "total": total,
                                "key": key,
                            }
                            for row, w, key in zip(stale, weights, keys, strict=True)
                        ],
                    )
                    self.postings.append(connection, zip(keys, weights, strict=True))
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
        """``(segment_id, bm25)`` best first (ties in id order); ``[]`` for no tokens or no
        shared token. Exact: see the module docstring."""
        counts = folded_counts(query_tokens)
        if not counts or limit <= 0 or (scope is not None and scope.empty):
            return []
        admitted = served(scope, summaries)
        with self._errors("search"), self._snapshot() as connection:
            if is_restricted(scope) and admitted_at_most(
                connection, self.table_name, admitted, RANK_ADMITTED_MAX
            ):
                n, held = self.statistics.held(connection, list(counts))
                self.recent.remember(counts, (n, held))
                values = {term: counts[term] * bm25_math.lucene_idf(n, docs) for term, docs in held.items()}
                return rank_rows(connection, self.table_name, values, admitted, limit) if held else []
            statistics, postings = self.ranking.read(connection, counts)
            self.recent.remember(counts, statistics)
            return self.ranking.best(connection, postings, admitted, limit)

    def attainable(self, query_tokens: Sequence[str]) -> float:
        """The most BM25 any record could score for ``query_tokens``: each term's query count ×
        its IDF × ``k1 + 1``; a term no record holds at the IDF of a term one record holds. The
        statistics are those a search of the same terms read in the last seconds, if any (see
        :class:`.RecentHeld`)."""
        weights = folded_counts(query_tokens)
        if not weights:
            return 0.0
        recent = self.recent.get(weights)
        if recent is None:
            with self._errors("read statistics"), self._snapshot() as connection:
                recent = self.statistics.held(connection, list(weights))
        n, held = recent
        return math.fsum(
            count * bm25_math.lucene_idf(n, held.get(term, 1)) * (self.k1 + 1.0)
            for term, count in weights.items()
        )

    def _snapshot(self) -> Any:
        """A connection whose reads see one snapshot (the statistics agree with the records)."""
        return self.engine.connect().execution_options(isolation_level="REPEATABLE READ")

    # -- lifecycle ---------------------------------------------------------------------------

    def optimize(self, payloads: DocumentPayloads | None = None) -> None:
        """Reweight records whose avgdl is off by more than 0.1% (a score change far below any
        ranking effect), fold each term's postings into one block without dead keys, then refresh
        the planner's statistics. Reads every record and every posting."""
        self.reweight(tolerance=OPTIMIZE_TOLERANCE)
        self.merge_postings()
        super().optimize()

    def merge_postings(self) -> int:
        """Fold each term's blocks into one without the keys of replaced or deleted records;
        returns the blocks removed. See :meth:`.TermPostings.merge`."""
        with self._errors("merge postings"):
            return self.postings.merge(self.engine.begin, self._live_keys)

    def _live_keys(self, connection: Connection) -> np.ndarray:
        """The records' posting keys, with the stats row's lock held (writes wait)."""
        self.statistics.read(connection, lock=True)
        keys = connection.scalars(
            select(self.table.c.posting_key).execution_options(**{BINARY_RESULTS: True})
        )
        return np.fromiter(keys, dtype=np.int64)


def open_pgvector_fulltext(settings: Settings, dataset_id: str) -> PgBM25Store:
    """A dataset's BM25 store on the pgvector database of ``settings`` (see ``store_url``)."""
    return PgBM25Store(store_url(settings), f"{table_prefix(dataset_id)}_bm25")
