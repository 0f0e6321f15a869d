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
from collections.abc import Sequence

import numpy as np
from pgvector import SparseVector
from pgvector.sqlalchemy import SPARSEVEC
from sqlalchemy import BigInteger, ColumnElement, Connection, Integer, Table, any_, literal, select, text
from sqlalchemy.dialects.postgresql import ARRAY

from zhiku.datasource.fulltext.pg_postings import ScoredKeys, TermPostings

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
_KEY_ARRAY = ARRAY(BigInteger)
_INT_ARRAY = ARRAY(Integer)
_THROUGH_INDEXES = text("SELECT set_config('enable_seqscan', 'off', true), set_config('jit', 'off', true)")

Hits = list[tuple[str, float]]


class PostingsRanking:
    """The best records of a BM25 ``table`` for a query, from its ``postings`` and rows."""

    def __init__(self, table: Table, postings: TermPostings) -> None:
        self.table = table
        self.postings = postings

    def best(
        self,
        connection: Connection,
        values: dict[int, float],
        served: Sequence[ColumnElement[bool]],
        limit: int,
    ) -> Hits:
        """The best ``limit`` records ``served`` admits for the query terms' ``values`` (count ×
        IDF), ties in id order: the rows of the best keys are read until ``limit`` are found or
        every key was read, each further read sized by the share of keys found so far (a
        filter admitting a tenth of the records needs about ten keys a hit)."""
        scored = ScoredKeys.of(self.postings.read(connection, values))
        found: Hits = []
        read, count = 0, limit + math.ceil(EXTRA_CANDIDATES * limit) + 10
        while read < len(scored) and len(found) < limit:
            keys, scores = scored.best(count)
            found.extend(self._rows(connection, keys[read:], scores[read:], served))
            read = len(keys)
            share = max(len(found) / read, MIN_SHARE_FOUND)
            count = read + math.ceil((limit - len(found)) * (1.0 + EXTRA_CANDIDATES) / share) + 10
        return sorted(found, key=lambda hit: (-hit[1], hit[0]))[:limit]

    def _rows(
        self,
        connection: Connection,
        keys: np.ndarray,
        scores: np.ndarray,
        served: Sequence[ColumnElement[bool]],
    ) -> Hits:
        """The records of ``keys`` that exist and are ``served``, with their keys' ``scores``."""
        table = self.table
        score_of = dict(zip(keys.tolist(), scores.tolist(), strict=True))
        rows = connection.execute(
            select(table.c.posting_key, table.c.id).where(
                table.c.posting_key == any_(literal(list(score_of), _KEY_ARRAY)), *served
            )
        ).all()
        return [(point_id, score_of[key]) for key, point_id in rows]


def within_bound(
    values: dict[int, float], held: dict[int, int], most: int = MAX_POSTINGS_READ
) -> dict[int, float]:
    """The terms of ``values`` a search reads: the rarest first (``held``: records holding each),
    as many as hold at most ``most`` postings between them, and always the rarest one."""
    kept: dict[int, float] = {}
    total = 0
    for term in sorted(values, key=lambda term: (held[term], term)):
        total += held[term]
        if kept and total > most:
            break
        kept[term] = values[term]
    return kept


def rank_rows(
    connection: Connection,
    table: Table,
    values: dict[int, float],
    served: Sequence[ColumnElement[bool]],
    limit: int,
) -> Hits:
    """The best ``limit`` records ``served`` admits, each ranked by its row's ``weights``: for a
    search restricted to few records (read through the ``document_id`` or ``sections`` index,
    which the planner might pass over for a scan: it prices the terms' overlap test like any
    operator). No JIT: a search plans in ~0.5 ms."""
    connection.execute(_THROUGH_INDEXES)
    query = literal(SparseVector(values, SPARSE_DIM), SPARSEVEC(SPARSE_DIM))
    product = table.c.weights.max_inner_product(query)
    statement = (
        select(table.c.id, product)
        .where(table.c.terms.overlap(literal(sorted(values), _INT_ARRAY)), *served)
        .order_by(product, table.c.id)
        .limit(limit)
    )
    rows = connection.execute(statement).all()
    return [(point_id, -float(negative)) for point_id, negative in rows if negative < 0.0]
