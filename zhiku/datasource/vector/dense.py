"""The :class:`VectorStore` contract on a Qdrant :class:`PointCollection` (either backend)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from zhiku.core.errors import InvalidInput
from zhiku.core.scope import DocumentScope
from zhiku.datasource.points.base import PointStore
from zhiku.datasource.points.collection import PointCollection, PointData, base_payload, canonical_ids
from zhiku.datasource.vector.base import VectorRecord
from zhiku.datasource.vector.restricted import (
    EXACT_SEARCH_MAX,
    graph_search,
    is_restricted,
    restricted_search,
)

DENSE = "dense"

#: HNSW beam width at query time (Qdrant's default is 100). With the default graph (m 16,
#: ef_construct 100) it keeps recall@10 at >= 0.99 of exact search on clustered 384-d vectors;
#: ``tests/datasource/test_vector_recall.py`` checks it.
DEFAULT_HNSW_EF = 128


def checked_values(vector: np.ndarray, dim: int) -> list[float]:
    """``vector`` as floats; InvalidInput unless it has ``dim`` finite components, not all zero
    (a zero vector has no direction to compare by cosine)."""
    array = np.asarray(vector, dtype=np.float32).reshape(-1)
    if array.shape[0] != dim:
        raise InvalidInput(f"vector has {array.shape[0]} dimensions, the store holds {dim}")
    if not np.isfinite(array).all() or not array.any():
        raise InvalidInput("vector must be finite and not all zeros")
    values: list[float] = array.tolist()
    return values


class DenseVectorStore(PointStore):
    """Cosine search over one dataset's segment embeddings.

    Ids are segment UUID strings; ``document_id`` and ``enabled`` (0/1) ride along as payload, so
    whole documents can be deleted and disabled segments filtered inside the search. ``count`` and
    ``ids`` include disabled records. Vectors need not be normalised (Qdrant normalises them);
    a vector of the wrong size, with NaN/inf or all zeros raises :class:`InvalidInput`.
    A search restricted to some documents or a section scans the points the scope admits while
    they are at most ``exact_search_max`` (see :mod:`zhiku.datasource.vector.restricted`).
    ``optimize`` builds the HNSW graph (embedded store: in a child process while searches go on,
    see ``points/edge.py``).
    """

    def __init__(
        self,
        collection: PointCollection,
        dim: int,
        hnsw_ef: int = DEFAULT_HNSW_EF,
        exact_search_max: int = EXACT_SEARCH_MAX,
    ) -> None:
        super().__init__(collection)
        self.dim = dim
        self.hnsw_ef = hnsw_ef
        self.exact_search_max = exact_search_max

    def _values(self, vector: np.ndarray) -> list[float]:
        return checked_values(vector, self.dim)

    def upsert(self, records: Sequence[VectorRecord]) -> None:
        ids = canonical_ids(r.id for r in records)
        self._collection.upsert(
            [
                PointData(
                    point_id,
                    self._values(r.vector),
                    base_payload(
                        r.document_id, r.enabled, summary=r.summary, section=r.section, metadata=r.metadata
                    ),
                )
                for point_id, r in zip(ids, records, strict=True)
            ]
        )

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored (normalised) vectors of these ids; absent ones are left out."""
        points = self._collection.get_points(canonical_ids(ids), with_vector=True)
        return {p.id: np.asarray(p.vector, dtype=np.float32) for p in points if p.vector is not None}

    def search(
        self, vector: np.ndarray, limit: int, scope: DocumentScope | None = None, *, summaries: bool = False
    ) -> list[tuple[str, float]]:
        """``(segment_id, cosine)`` best first, enabled records (of documents in ``scope``) only."""
        if limit <= 0 or (scope is not None and scope.empty):
            return []
        values = self._values(vector)
        if scope is not None and is_restricted(scope):
            admitted = self._collection.admitted(scope, summaries=summaries)
            plain_max = self._collection.plain_search_max
            # payload tests may admit most of the points (a list would name those left out), which
            # an exact search would compare one by one: then the points are counted too (an
            # estimate, as ``admitted``; an exact count reads every segment)
            many = scope.payload_filter is not None and plain_max < admitted <= self.exact_search_max
            plan = restricted_search(
                admitted,
                limit,
                self.hnsw_ef,
                self.exact_search_max,
                plain_max,
                points=self._collection.admitted(None, summaries=summaries) if many else 0,
            )
        else:
            plan = graph_search(limit, self.hnsw_ef)
        return self._collection.search(
            values,
            limit,
            exact=plan.exact,
            hnsw_ef=plan.hnsw_ef,
            acorn=plan.acorn,
            scope=scope,
            summaries=summaries,
        )
