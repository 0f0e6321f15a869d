"""The inverted index of a BM25 table on PostgreSQL: for each term, the records holding it and
their weights, as packed arrays that a search reads in one statement and sums with numpy.

Why not SQL over the records: an exact search must score every record holding a query term that
can still reach the best ``limit`` (Lucene's MaxScore), and a record read from the table costs
~2 µs (a heap page, its weights, an inner product): a long query at 100,000 records ranked
24,000 of them in 50 ms. A typical query's 67,000 postings are read and summed in about 2 ms.

Layout: ``<table>_postings`` holds blocks, one row per term and write: ``posting_keys`` name
records by their ``posting_key`` (``base`` plus little-endian uint32 offsets), ``weights``
(little-endian float32) are their saturated term frequencies (what the record's ``weights``
vector holds). Every write of a record's weights gives it a new key and appends blocks in the
same transaction, so a search's snapshot sees the blocks of exactly the records it sees; the
keys of replaced and deleted records stay in their blocks, dead, until
:meth:`TermPostings.merge` (``optimize``) folds each term's blocks into one without them. A
search drops dead keys when it reads the candidates' rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from itertools import groupby
from typing import Any

import numpy as np
from sqlalchemy import (
    BigInteger,
    Column,
    Connection,
    Identity,
    Integer,
    LargeBinary,
    MetaData,
    Table,
    any_,
    delete,
    func,
    literal,
    select,
    text,
)
from sqlalchemy import (
    Sequence as DbSequence,
)
from sqlalchemy.dialects.postgresql import ARRAY, BYTEA

from zhiku.datasource.points.pgvector import BINARY_RESULTS

_OFFSET = np.dtype("<u4")
WEIGHT = np.dtype("<f4")
#: A block's keys lie within this distance of its ``base``.
_SPAN = 1 << 32
_INT_ARRAY = ARRAY(Integer)
#: Terms merged per transaction (each holds the writes of the dataset until it commits).
MERGE_TERMS = 512

#: A block row: term, base, offsets from it, weights.
Block = tuple[int, int, bytes, bytes]
#: Gives a connection in a transaction of its own, committed when the block ends.
Transactions = Callable[[], AbstractContextManager[Connection]]


@dataclass(frozen=True)
class Postings:
    """Postings read for some query terms: each one's key and its part of the score (the weight
    times the term's value in the query), keys repeated across terms."""

    keys: np.ndarray
    parts: np.ndarray


@dataclass(frozen=True)
class ScoredKeys:
    """Posting keys with a BM25 score above 0 (in no order)."""

    keys: np.ndarray
    scores: np.ndarray

    @classmethod
    def of(cls, postings: Postings) -> ScoredKeys:
        """The keys of ``postings`` with the sum of their parts: a dense sum over the keys' span
        when it is not much wider than the postings (every part is above 0, so a key is held
        where its sum is), else through a sort."""
        keys, parts = postings.keys, postings.parts
        if not len(keys):
            return cls(keys, parts)
        low = int(keys.min())
        span = int(keys.max()) - low + 1
        if span <= max(4 * len(keys), 1 << 16):
            sums = np.bincount(keys - low, weights=parts, minlength=span)
            held = np.nonzero(sums > 0.0)[0]
            return cls(held + low, sums[held])
        unique, inverse = np.unique(keys, return_inverse=True)
        return cls(unique, np.bincount(inverse, weights=parts, minlength=len(unique)))

    def __len__(self) -> int:
        return len(self.keys)

    def best(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``count`` best keys and their scores, best first, and every key tied with the
        last of them (the next call's best then starts below a score seen): a partition, then
        a sort of only those."""
        scores = self.scores
        if count < len(scores):
            bound = np.partition(scores, len(scores) - count)[len(scores) - count]
            chosen = np.flatnonzero(scores >= bound)
        else:
            chosen = np.arange(len(scores))
        chosen = chosen[np.lexsort((self.keys[chosen], -scores[chosen]))]
        return self.keys[chosen], scores[chosen]


class TermPostings:
    """The blocks of BM25 table ``table_name`` (added to ``metadata``, created and dropped with
    it) and the sequence its records' ``posting_key`` comes from."""

    def __init__(self, metadata: MetaData, table_name: str) -> None:
        self.keys = DbSequence(f"{table_name}_posting_keys", metadata=metadata)
        self.blocks = Table(
            f"{table_name}_postings",
            metadata,
            Column("block", BigInteger, Identity(), primary_key=True),
            Column("term", Integer, nullable=False, index=True),
            Column("base", BigInteger, nullable=False),
            Column("posting_keys", LargeBinary, nullable=False),
            Column("weights", LargeBinary, nullable=False),
        )

    def store_uncompressed(self, connection: Connection) -> None:
        """Keep the blocks out of line but uncompressed (once, on the new table): a search reads
        a common term's whole block, and pglz's decompression cost more than its reading."""
        name = self.blocks.name
        connection.execute(
            text(
                f'ALTER TABLE "{name}" ALTER COLUMN posting_keys SET STORAGE EXTERNAL,'
                " ALTER COLUMN weights SET STORAGE EXTERNAL"
            )
        )

    def new_keys(self, connection: Connection, count: int) -> list[int]:
        """``count`` fresh posting keys."""
        if count <= 0:
            return []
        return list(
            connection.scalars(
                select(func.nextval(self.keys.name)).select_from(func.generate_series(1, count))
            )
        )

    def append(self, connection: Connection, records: Iterable[tuple[int, dict[int, float]]]) -> None:
        """Add blocks for ``records`` (posting key, term → weight): one row per term."""
        by_term: dict[int, tuple[list[int], list[float]]] = {}
        for key, weights in records:
            for term, weight in weights.items():
                keys, values = by_term.setdefault(term, ([], []))
                keys.append(key)
                values.append(weight)
        rows = [
            row
            for term in sorted(by_term)
            for row in _packed(
                term, np.asarray(by_term[term][0], dtype=np.int64), np.asarray(by_term[term][1])
            )
        ]
        self._insert(connection, rows)

    def _insert(self, connection: Connection, rows: list[Block]) -> None:
        """One statement over four arrays (as many parameter rows took far longer)."""
        if not rows:
            return
        columns = list(zip(*rows, strict=True))
        select_rows = select(
            func.unnest(literal(list(columns[0]), _INT_ARRAY)),
            func.unnest(literal(list(columns[1]), ARRAY(BigInteger))),
            func.unnest(literal(list(columns[2]), ARRAY(BYTEA))),
            func.unnest(literal(list(columns[3]), ARRAY(BYTEA))),
        )
        connection.execute(
            self.blocks.insert().from_select(["term", "base", "posting_keys", "weights"], select_rows)
        )

    def merge(self, connection_of: Transactions, live_keys: Callable[[Connection], np.ndarray]) -> int:
        """Fold each term's blocks into one without dead keys, :data:`MERGE_TERMS` terms per
        transaction; returns the blocks removed. ``live_keys`` gives the keys of the records and
        holds the lock every write of keys holds until the transaction ends, so the blocks read
        next and the keys agree: a key in a block and not among them is dead, and no block is
        added meanwhile. Blocks of terms first written after the merge began are left for the
        next one."""
        blocks = self.blocks
        with connection_of() as connection:
            terms = list(connection.scalars(select(blocks.c.term).distinct().order_by(blocks.c.term)))
        removed = 0
        for start in range(0, len(terms), MERGE_TERMS):
            batch = terms[start : start + MERGE_TERMS]
            with connection_of() as connection:
                live = live_keys(connection)
                rows = connection.execute(
                    select(
                        blocks.c.block, blocks.c.term, blocks.c.base, blocks.c.posting_keys, blocks.c.weights
                    )
                    .where(blocks.c.term == any_(literal(batch, _INT_ARRAY)))
                    .order_by(blocks.c.term, blocks.c.block)
                    .execution_options(**{BINARY_RESULTS: True})
                ).all()
                merged, old = _merged(rows, live)
                if old:
                    connection.execute(
                        delete(blocks).where(blocks.c.block == any_(literal(old, ARRAY(BigInteger))))
                    )
                    self._insert(connection, merged)
                removed += len(old) - len(merged)
        return removed


def _merged(rows: Sequence[Any], live: np.ndarray) -> tuple[list[Block], list[int]]:
    """For the blocks ``rows`` (block, term, base, offsets, weights; sorted by term): the merged
    blocks of the terms with something to fold (several blocks, or dead keys), and the blocks to
    delete."""
    merged: list[Block] = []
    old: list[int] = []
    for term, group in groupby(rows, key=lambda row: row[1]):
        held = list(group)
        keys = np.concatenate([block_keys(row[2], row[3]) for row in held])
        weights = np.concatenate([np.frombuffer(row[4], dtype=WEIGHT) for row in held])
        alive = np.isin(keys, live)
        if len(held) == 1 and bool(alive.all()):
            continue
        old.extend(row[0] for row in held)
        merged.extend(_packed(term, keys[alive], weights[alive]))
    return merged, old


def _packed(term: int, keys: np.ndarray, weights: np.ndarray) -> list[Block]:
    """Blocks of ``term`` for these keys and weights, in key order: one, unless the keys lie
    more than 2³² apart."""
    order = np.argsort(keys, kind="stable")
    keys, weights = keys[order], weights[order].astype(WEIGHT)
    blocks: list[Block] = []
    start = 0
    while start < len(keys):
        base = int(keys[start])
        end = int(np.searchsorted(keys, base + _SPAN))
        offsets = (keys[start:end] - base).astype(_OFFSET)
        blocks.append((term, base, offsets.tobytes(), weights[start:end].tobytes()))
        start = end
    return blocks


def block_keys(base: int, offsets: bytes) -> np.ndarray:
    """A block's keys."""
    return np.frombuffer(offsets, dtype=_OFFSET).astype(np.int64) + base
