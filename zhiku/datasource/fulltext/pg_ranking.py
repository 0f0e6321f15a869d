"""How the pgvector BM25 store finds a query's best records, exactly.

Unrestricted (or leaving some documents out): the postings of every query term are read and
summed (:mod:`.pg_postings`), then the rows of the best keys, dropping dead keys and the records
the search does not admit, more each time until ``limit`` are found. Lucene's MaxScore was tried
on top (the commonest terms' postings left unread, what they add read from the candidates'
rows instead): at 100,000 records the rows it had to read cost more than the postings it saved
(p50 7.8–9.7 against 6.7–8.5 ms, mean 23 against 8–10 ms).

A query whose terms hold more than :data:`MAX_POSTINGS_READ` postings between them reads its
rarest terms up to that bound and leaves the commonest out: each adds little to any score, and a
search's time and memory stay bounded whatever the query and the dataset's size (4,000
characters of the benchmark's text hold 3.6 million postings at 100,000 records: 185 ms to read
them all, 37 ms up to the bound).

Restricted to few records (a list of documents, a section): those records' rows are ranked by
their ``weights``.
"""

from __future__ import annotations

import math

import numpy as np
from pgvector import SparseVector
from sqlalchemy import Connection

from zhiku.datasource.fulltext import bm25_math
from zhiku.datasource.fulltext.pg_postings import WEIGHT, Postings, ScoredKeys, TermPostings, block_keys
from zhiku.datasource.fulltext.pg_statistics import STATS_ROW, CorpusStatistics, Held
from zhiku.datasource.points.pg_reads import Served, key_array
from zhiku.datasource.points.pgvector import BINARY_RESULTS

#: pgvector's largest ``sparsevec`` dimension count; term ids are folded below it.
SPARSE_DIM = 1_000_000_000
#: The best keys whose rows are read at first: a quarter more than ``limit`` (and 10), for dead
#: keys and records the search does not admit; a further read takes as many more as the share of
#: keys found so far says are needed, a quarter more.
EXTRA_CANDIDATES = 0.25
#: The smallest share of keys found assumed when sizing a further read (so it takes at most 16
#: times the keys still wanted).
MIN_SHARE_FOUND = 1 / 16
#: The most postings a search reads (each ~16 bytes while it sums them): 15 times a typical
#: query's at 100,000 records.
MAX_POSTINGS_READ = 1_000_000
_THROUGH_INDEXES = "SELECT set_config('enable_seqscan', 'off', true), set_config('jit', 'off', true)"

Hits = list[tuple[str, float]]


class PostingsRanking:
    """The best records of a BM25 table for a query, from its ``postings`` and rows; its
    ``statistics`` give each term's IDF in the same statement as the postings (one snapshot)."""

    def __init__(self, table: str, statistics: CorpusStatistics, postings: TermPostings) -> None:
        self.table = table
        self._read = _READ.format(
            terms=statistics.term_docs.name,
            stats=statistics.stats.name,
            stats_row=STATS_ROW,
            postings=postings.blocks.name,
        )

    def read(
        self, connection: Connection, counts: dict[int, int], most: int = MAX_POSTINGS_READ
    ) -> tuple[Held, Postings]:
        """For the query terms' ``counts``: the statistics (the number of records, how many hold
        each term) and the postings of the rarest terms up to ``most`` of them (always the rarest
        one), each weight times its term's value in the query (count × IDF)."""
        rows = connection.exec_driver_sql(
            self._read, {"terms": sorted(counts), "most": most}, execution_options={BINARY_RESULTS: True}
        ).all()
        n = max(int(rows[0][0]), 1)
        held = {int(term): int(docs) for _, term, docs, *_ in rows if term is not None}
        values = {term: counts[term] * bm25_math.lucene_idf(n, docs) for term, docs in held.items()}
        keys, parts = [], []
        for _, term, _, base, offsets, weights in rows:
            if base is not None:
                keys.append(block_keys(base, offsets))
                parts.append(np.frombuffer(weights, dtype=WEIGHT) * values[term])
        if not keys:
            return (n, held), Postings(np.empty(0, dtype=np.int64), np.empty(0))
        return (n, held), Postings(np.concatenate(keys), np.concatenate(parts))

    def best(self, connection: Connection, postings: Postings, admitted: Served, limit: int) -> Hits:
        """The best ``limit`` records ``admitted`` for the query's ``postings``, ties in id order:
        the rows of the best keys are read until ``limit`` are found or every key was read, each
        further read sized by the share of keys found so far (a filter admitting a tenth of the
        records needs about ten keys a hit)."""
        scored = ScoredKeys.of(postings)
        found: Hits = []
        read, count = 0, limit + math.ceil(EXTRA_CANDIDATES * limit) + 10
        while read < len(scored) and len(found) < limit:
            keys, scores = scored.best(count)
            found.extend(self._rows(connection, keys[read:], scores[read:], admitted))
            read = len(keys)
            share = max(len(found) / read, MIN_SHARE_FOUND)
            count = read + math.ceil((limit - len(found)) * (1.0 + EXTRA_CANDIDATES) / share) + 10
        return sorted(found, key=lambda hit: (-hit[1], hit[0]))[:limit]

    def _rows(self, connection: Connection, keys: np.ndarray, scores: np.ndarray, admitted: Served) -> Hits:
        """The records of ``keys`` that exist and are ``admitted``, with their keys' ``scores``."""
        score_of = dict(zip(keys.tolist(), scores.tolist(), strict=True))
        rows = connection.exec_driver_sql(
            f'SELECT posting_key, id::text FROM "{self.table}"'
            f" WHERE posting_key = ANY(%(keys)s::bigint[]) AND {admitted.where}",
            {**admitted.params, "keys": key_array(keys)},
        ).all()
        return [(point_id, score_of[key]) for key, point_id in rows]


#: The statistics and the postings of a query's terms in one statement: the terms held, rarest
#: first, with the records holding them so far; the postings of the rarest one and of those
#: within the bound.
_READ = """WITH held AS (
    SELECT term, docs, sum(docs) OVER rarest AS running, row_number() OVER rarest AS rank
    FROM "{terms}" WHERE term = ANY(%(terms)s::int[]) AND docs > 0
    WINDOW rarest AS (ORDER BY docs, term)
)
SELECT s.docs, h.term, h.docs, p.base, p.posting_keys, p.weights
FROM "{stats}" AS s
LEFT JOIN held AS h ON true
LEFT JOIN "{postings}" AS p ON p.term = h.term AND (h.rank = 1 OR h.running <= %(most)s)
WHERE s.id = {stats_row}"""


def rank_rows(
    connection: Connection, table: str, values: dict[int, float], admitted: Served, limit: int
) -> Hits:
    """The best ``limit`` records ``admitted``, each ranked by its row's ``weights``: for a
    search restricted to few records (read through the ``document_id`` or ``sections`` index,
    which the planner might pass over for a scan: it prices the terms' overlap test like any
    operator). No JIT: a search plans in ~0.5 ms."""
    connection.exec_driver_sql(_THROUGH_INDEXES)
    rows = connection.exec_driver_sql(
        f'SELECT id::text, weights <#> %(query)s::sparsevec AS product FROM "{table}"'
        f" WHERE terms && %(terms)s::int[] AND {admitted.where} ORDER BY product, id LIMIT %(limit)s",
        {
            **admitted.params,
            "query": SparseVector(values, SPARSE_DIM).to_text(),
            "terms": sorted(values),
            "limit": limit,
        },
    ).all()
    return [(point_id, -float(negative)) for point_id, negative in rows if negative < 0.0]
