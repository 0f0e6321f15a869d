"""BM25 on Qdrant sparse vectors: term-frequency saturation here, IDF in Qdrant (``Modifier.IDF``).

Why not Qdrant's own full-text index: it is an unranked match filter and cannot segment Chinese.
Here the dataset's tokenizer decides the tokens and the scores are Lucene's BM25 (see
``bm25_math``), while the engine, its filters and its persistence are the same as for vectors.

Corpus statistics. A document's stored weights depend on the average document length (avgdl)
at the time it is written: a batch is weighted with the avgdl of the corpus including that batch,
so records written in one go score exactly like textbook BM25, and records written earlier keep
the avgdl of their time. :meth:`SparseBM25Store.reweight` (run by :meth:`optimize`) rewrites
every record whose avgdl is stale. The statistics are not stored separately: every point carries
its ``length`` (indexed), and the number of points and total length are read back from that
index when the store opens, so they cannot drift from the data.

IDF covers all points of the collection, disabled ones included: use one collection (one shard)
per dataset. Deleted points still count in the IDF until segments are vacuumed: on qdrant-edge
by :meth:`optimize`, on a Qdrant server by its background optimizer (local mode: at once).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from zhiku.core.cancellation import checkpoint
from zhiku.core.scope import DocumentScope
from zhiku.datasource.fulltext import bm25_math
from zhiku.datasource.fulltext.base import TextRecord
from zhiku.datasource.points.base import PointStore
from zhiku.datasource.points.collection import (
    DocumentPayloads,
    PointCollection,
    PointData,
    SparseValues,
    VectorSpec,
    base_payload,
    canonical_ids,
)

if TYPE_CHECKING:
    from zhiku.datasource.points.server import QdrantServer

SPARSE = "bm25"
LENGTH_KEY = "length"

_REWEIGHT_BATCH = 1024

#: Terms whose IDF a store keeps for :meth:`SparseBM25Store.attainable` (then it starts afresh).
_IDF_CACHE_SIZE = 100_000
#: At most this many terms of one query are looked up (one search and one read each); the rest
#: count at the IDF of the rarest term, so a very long query's work stays bounded.
_MAX_PROBES = 64

#: Relative avgdl difference that :meth:`SparseBM25Store.optimize` leaves as it is.
OPTIMIZE_TOLERANCE = 1e-3


class SparseBM25Store(PointStore):
    """The :class:`FullTextStore` contract on a Qdrant collection with one IDF sparse vector.

    ``k1`` and ``b`` are BM25's saturation and length normalisation; records remember the values
    they were written with, and :meth:`reweight` brings all of them to the store's current ones.
    Writes are serialised by a lock (they read and update the corpus statistics); searches are not.
    """

    def __init__(
        self, collection: PointCollection, k1: float = bm25_math.DEFAULT_K1, b: float = bm25_math.DEFAULT_B
    ) -> None:
        super().__init__(collection)
        self.k1 = k1
        self.b = b
        self._lock = threading.RLock()
        self._docs = 0
        self._total_length = 0
        self._idf_cache: dict[int, float] = {}
        self._idf_docs = 0
        self._idf_lock = threading.Lock()
        try:
            self._load_stats()
        except Exception:
            collection.close()
            raise

    # -- statistics --------------------------------------------------------------------------

    def _load_stats(self) -> None:
        counts = self._collection.value_counts(LENGTH_KEY)
        self._docs = sum(counts.values())
        self._total_length = sum(length * n for length, n in counts.items())

    @property
    def avgdl(self) -> float:
        """Current average document length in tokens (1.0 while the store is empty)."""
        return bm25_math.average_length(self._docs, self._total_length)

    def _point(
        self, point_id: str, counts: dict[int, int], length: int, payload: dict[str, Any]
    ) -> PointData:
        weights = bm25_math.document_weights(counts, length, self.avgdl, self.k1, self.b)
        terms = sorted(weights)
        return PointData(
            point_id, SparseValues(terms, [weights[t] for t in terms]), self._payload(payload, length)
        )

    def _payload(self, payload: dict[str, Any], length: int) -> dict[str, Any]:
        # The corpus statistics are kept as integers: qdrant-edge 0.9 rounds some float payloads.
        return {
            **payload,
            LENGTH_KEY: length,
            "corpus_docs": self._docs,
            "corpus_length": self._total_length,
            "k1": self.k1,
            "b": self.b,
        }

    def _written_with(self, payload: dict[str, Any]) -> tuple[float, float, float]:
        """avgdl, k1 and b a record was weighted with."""
        avgdl = bm25_math.average_length(int(payload["corpus_docs"]), int(payload["corpus_length"]))
        return avgdl, float(payload["k1"]), float(payload["b"])

    # -- writes ------------------------------------------------------------------------------

    def upsert(self, records: Sequence[TextRecord]) -> None:
        """Insert or replace records (the last one wins for a repeated id)."""
        latest = dict(zip(canonical_ids(r.id for r in records), records, strict=True))
        if not latest:
            return
        with self._lock:
            old = {
                p.id: int(p.payload.get(LENGTH_KEY, 0))
                for p in self._collection.get_points(list(latest), False)
            }
            self._docs += len(latest) - len(old)
            self._total_length += sum(len(r.tokens) for r in latest.values()) - sum(old.values())
            points = [
                self._point(
                    point_id,
                    bm25_math.term_counts(r.tokens),
                    len(r.tokens),
                    base_payload(
                        r.document_id, r.enabled, summary=r.summary, section=r.section, metadata=r.metadata
                    ),
                )
                for point_id, r in latest.items()
            ]
            try:
                self._collection.upsert(points)
            except Exception:
                self._load_stats()
                raise

    def delete(self, ids: Sequence[str]) -> None:
        with self._lock:
            super().delete(ids)
            self._load_stats()

    def delete_document(self, document_id: str) -> None:
        with self._lock:
            super().delete_document(document_id)
            self._load_stats()

    def reweight(self, tolerance: float = 0.0) -> int:
        """Rewrite the records weighted with another avgdl, k1 or b; returns how many changed.

        ``tolerance`` skips records whose avgdl is within that relative distance of the current
        one (k1 and b must match exactly). Term frequencies are recovered from the stored
        weights, so no text is needed. Reads the whole collection: run it after large ingests,
        not per request (about 10 s per 100k records rewritten).
        """
        changed = 0
        with self._lock:
            self._load_stats()
            avgdl = self.avgdl
            batch: list[PointData] = []
            for point in self._collection.scroll(with_vector=True):
                if not isinstance(point.vector, SparseValues):
                    continue
                written = self._written_with(point.payload)
                if (
                    math.isclose(written[0], avgdl, rel_tol=max(tolerance, 1e-12))
                    and math.isclose(written[1], self.k1, rel_tol=1e-12)
                    and math.isclose(written[2], self.b, rel_tol=1e-12)
                ):
                    continue
                length = int(point.payload[LENGTH_KEY])
                # Term frequencies are integers: recover them from the float32 weights, re-weight.
                tf = np.rint(
                    bm25_math.raw_tf(np.asarray(point.vector.values, dtype=np.float64), length, *written)
                )
                weights = bm25_math.saturated_tf(tf, length, avgdl, self.k1, self.b)
                vector = SparseValues(point.vector.indices, weights.tolist())
                batch.append(PointData(point.id, vector, self._payload(point.payload, length)))
                if len(batch) >= _REWEIGHT_BATCH:
                    self._collection.upsert(batch)
                    changed += len(batch)
                    batch = []
                    checkpoint()  # a cancelled optimize stops here; each record carries its avgdl
            self._collection.upsert(batch)
            changed += len(batch)
        return changed

    # -- reads -------------------------------------------------------------------------------

    def search(
        self,
        query_tokens: Sequence[str],
        limit: int,
        scope: DocumentScope | None = None,
        *,
        summaries: bool = False,
    ) -> list[tuple[str, float]]:
        """``(segment_id, bm25)`` best first; ``[]`` for no tokens or no shared token."""
        weights = bm25_math.query_weights(query_tokens)
        if not weights or limit <= 0 or (scope is not None and scope.empty):
            return []
        terms = sorted(weights)
        query = SparseValues(terms, [weights[t] for t in terms])
        found = self._collection.search(query, limit, scope=scope, summaries=summaries)
        return [(pid, score) for pid, score in found if score > 0.0]

    def attainable(self, query_tokens: Sequence[str]) -> float:
        """The most BM25 any record could score for ``query_tokens``: each term's query count ×
        its IDF × ``k1 + 1`` (the saturated term frequency's limit). A term no record holds
        counts at the IDF of a term one record holds (the rarest there is), so a query of unknown
        words cannot look well matched, yet a small dataset, where every known term is common,
        does not make its matches look poor.

        Qdrant keeps the IDF to itself: a term's IDF is read as the score of the term alone at
        its best record divided by that record's stored weight (the new terms of a query searched
        as one batch), and kept while the store's size stays within 1% of what it was.
        """
        weights = bm25_math.query_weights(query_tokens)
        if not weights:
            return 0.0
        idf = self._idf_of(list(weights))
        return math.fsum(count * idf[term] * (self.k1 + 1.0) for term, count in weights.items())

    def _idf_of(self, terms: Sequence[int]) -> dict[int, float]:
        docs = max(self._docs, 1)
        with self._idf_lock:
            stale = abs(docs - self._idf_docs) > 0.01 * max(self._idf_docs, 1)
            if stale or len(self._idf_cache) > _IDF_CACHE_SIZE:
                self._idf_cache = {}
                self._idf_docs = docs
            cache = self._idf_cache
            idf = {term: cache[term] for term in terms if term in cache}
        unseen = bm25_math.lucene_idf(docs, 1)
        # a very long query: terms past the first _MAX_PROBES unknown ones count as the rarest
        unknown = [term for term in terms if term not in idf]
        probed, rest = unknown[:_MAX_PROBES], unknown[_MAX_PROBES:]
        found = self._collection.best_points([SparseValues([term], [1.0]) for term in probed], summaries=True)
        looked_up: dict[int, float] = {}
        for term, best in zip(probed, found, strict=True):
            stored = 0.0
            if best is not None and best[1] > 0.0 and isinstance(best[0].vector, SparseValues):
                vector = best[0].vector
                stored = dict(zip(vector.indices, vector.values, strict=True)).get(term, 0.0)
            looked_up[term] = best[1] / stored if best is not None and stored > 0.0 else unseen
        with self._idf_lock:
            cache.update(looked_up)  # not the terms past the bound: they were not looked up
        return {**idf, **looked_up, **dict.fromkeys(rest, unseen)}

    # -- lifecycle ---------------------------------------------------------------------------

    def optimize(self, payloads: DocumentPayloads | None = None) -> None:
        """Reweight records whose avgdl is off by more than 0.1% (a score change far below any
        ranking effect), then let the engine compact: on qdrant-edge that drops deleted points
        from the IDF statistics. Blocks; run it after ingest jobs."""
        self.reweight(tolerance=OPTIMIZE_TOLERANCE)
        super().optimize(payloads)


class EdgeSparseBM25Store(SparseBM25Store):
    """BM25 in an embedded qdrant-edge shard at ``path`` (one process at a time, like the vectors);
    ``build_time_limit`` and ``search_threads`` as for the vectors'
    :class:`~zhiku.datasource.points.edge.EdgeCollection`."""

    def __init__(
        self,
        path: Path,
        k1: float = bm25_math.DEFAULT_K1,
        b: float = bm25_math.DEFAULT_B,
        build_time_limit: float | None = None,
        search_threads: int = 1,
    ) -> None:
        from zhiku.datasource.points.edge import EdgeCollection

        self.path = Path(path)
        collection = EdgeCollection(
            self.path,
            VectorSpec(SPARSE),
            integer_indexes=[LENGTH_KEY],
            build_time_limit=build_time_limit,
            search_threads=search_threads,
        )
        super().__init__(collection, k1, b)


class QdrantClientSparseBM25Store(SparseBM25Store):
    """BM25 in ``collection`` at ``location`` (server URL, ``":memory:"`` or local directory)."""

    def __init__(
        self,
        location: str,
        collection: str,
        k1: float = bm25_math.DEFAULT_K1,
        b: float = bm25_math.DEFAULT_B,
        server: QdrantServer | None = None,
    ) -> None:
        from zhiku.datasource.points.qdrant import ClientCollection

        self.location = location
        self.collection = collection
        spec = VectorSpec(SPARSE)
        points = ClientCollection(location, collection, spec, integer_indexes=[LENGTH_KEY], server=server)
        super().__init__(points, k1, b)
