"""BM25 in memory with ``rank_bm25.BM25Okapi``: for ephemeral datasets and as the quality reference.

Nothing is persisted. The index is rebuilt on the first search after a write (O(corpus)), so
interleaving single writes with searches is slow; batch the writes.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rank_bm25 import BM25Okapi

from zhiku.core.scope import DocumentScope
from zhiku.datasource.fulltext.base import TextRecord
from zhiku.datasource.points.collection import DocumentPayloads


@dataclass(frozen=True)
class _Index:
    ids: list[str]
    bm25: BM25Okapi | None
    postings: dict[str, list[int]]


class RankBM25Store:
    """The :class:`FullTextStore` contract on ``BM25Okapi`` (k1 1.5, b 0.75, Okapi IDF with floor).

    Scores are Okapi's, so they differ from the sparse stores' Lucene BM25 in the IDF. Disabled
    records stay in the corpus statistics (as in the sparse stores) and are only left out of
    results. Thread-safe.
    """

    #: scoring loops over the query's tokens in Python
    holds_gil = True
    keeps_metadata = False

    def __init__(self, k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25) -> None:
        self.k1 = k1
        self.b = b
        self.epsilon = epsilon
        self._lock = threading.Lock()
        self._records: dict[str, TextRecord] = {}
        self._index: _Index | None = None

    def upsert(self, records: Sequence[TextRecord]) -> None:
        with self._lock:
            for record in records:
                self._records[record.id] = TextRecord(
                    record.id,
                    list(record.tokens),
                    record.document_id,
                    record.enabled,
                    record.summary,
                    record.section,
                )
            self._index = None

    def delete(self, ids: Sequence[str]) -> None:
        with self._lock:
            for record_id in ids:
                self._records.pop(record_id, None)
            self._index = None

    def delete_document(self, document_id: str) -> None:
        with self._lock:
            self._records = {k: r for k, r in self._records.items() if r.document_id != document_id}
            self._index = None

    def set_enabled(self, ids: Sequence[str], enabled: bool) -> None:
        with self._lock:
            for record_id in ids:
                if record_id in self._records:
                    self._records[record_id].enabled = enabled

    def set_metadata(self, payloads: DocumentPayloads) -> None:
        """Nothing kept: the scope's list of documents filters this store."""

    def _current(self) -> _Index:
        with self._lock:
            if self._index is None:
                records = list(self._records.values())
                postings: dict[str, list[int]] = {}
                for position, record in enumerate(records):
                    for token in set(record.tokens):
                        postings.setdefault(token, []).append(position)
                corpus = [r.tokens for r in records]
                has_tokens = any(corpus)
                self._index = _Index(
                    ids=[r.id for r in records],
                    bm25=BM25Okapi(corpus, k1=self.k1, b=self.b, epsilon=self.epsilon)
                    if has_tokens
                    else None,
                    postings=postings,
                )
            return self._index

    def search(
        self,
        query_tokens: Sequence[str],
        limit: int,
        scope: DocumentScope | None = None,
        *,
        summaries: bool = False,
    ) -> list[tuple[str, float]]:
        """``(segment_id, score)`` best first among enabled records sharing a token with the query."""
        if not query_tokens or limit <= 0 or (scope is not None and scope.empty):
            return []
        index = self._current()
        if index.bm25 is None:
            return []
        records = self._records
        candidates = sorted(
            p
            for p in {p for token in set(query_tokens) for p in index.postings.get(token, ())}
            if (record := records.get(index.ids[p])) is not None
            and record.enabled
            and (summaries or not record.summary)
            and (scope is None or scope.admits(record.document_id, record.section))
        )
        if not candidates:
            return []
        scores = index.bm25.get_batch_scores(list(query_tokens), candidates)
        ranked = sorted(zip(candidates, scores, strict=True), key=lambda pair: (-pair[1], pair[0]))
        return [(index.ids[p], float(score)) for p, score in ranked[:limit]]

    def attainable(self, query_tokens: Sequence[str]) -> float:
        """The most BM25 any record could score for ``query_tokens`` (see the sparse store's
        :meth:`~zhiku.datasource.fulltext.sparse.SparseBM25Store.attainable`): Okapi's IDF of each
        query token, a token no record holds at the highest IDF of a known one."""
        index = self._current()
        if index.bm25 is None or not query_tokens:
            return 0.0
        unseen = max(index.bm25.idf.values(), default=0.0)
        return math.fsum(
            count * index.bm25.idf.get(token, unseen) * (self.k1 + 1.0)
            for token, count in Counter(query_tokens).items()
        )

    def ids(self) -> set[str]:
        with self._lock:
            return set(self._records)

    def disabled_ids(self) -> set[str]:
        with self._lock:
            return {record_id for record_id, record in self._records.items() if not record.enabled}

    def count(self) -> int:
        with self._lock:
            return len(self._records)

    def flush(self) -> None:
        """Nothing to do: the store lives in memory only."""

    def optimize(self, payloads: DocumentPayloads | None = None) -> None:
        """Build the index now instead of at the next search (no payload kept)."""
        self._current()

    def drop(self) -> None:
        with self._lock:
            self._records.clear()
            self._index = None

    def close(self) -> None:
        """Nothing to release; the records stay until the object is dropped."""
