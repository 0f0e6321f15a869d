"""The reference libraries, timed on the same segments, tokens and vectors as zhiku.

- ``rank_bm25``: ``BM25Okapi(token_lists).get_scores(query_tokens)`` plus the top-k selection;
  it scores every segment in Python per query token, so few queries are timed at 100k.
- ``qdrant_client_local``: qdrant-client's local mode (in memory, no server), cosine distance,
  ``query_points`` with the same query vectors as zhiku's semantic search.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from zhiku.benchmarking.timing import time_each

_UPSERT_BATCH = 1024
_COLLECTION = "bench"


def rank_bm25_seconds(
    token_lists: Sequence[list[str]], queries: Sequence[list[str]], top_k: int = 10
) -> list[float]:
    """Seconds per query of rank_bm25's full scoring and a top-``top_k`` selection."""
    from rank_bm25 import BM25Okapi

    bm25 = BM25Okapi(list(token_lists))
    kth = max(0, min(top_k, len(token_lists)) - 1)

    def search(tokens: list[str]) -> np.ndarray:
        scores = bm25.get_scores(tokens)
        best = np.argpartition(-scores, kth)[: kth + 1]
        return best[np.argsort(-scores[best])]

    return time_each(queries, search, warmup=2)


def qdrant_local_seconds(vectors: np.ndarray, queries: np.ndarray, top_k: int = 10) -> list[float]:
    """Seconds per query of qdrant-client local mode holding ``vectors`` (rows, unit length)."""
    from qdrant_client import QdrantClient, models

    client = QdrantClient(location=":memory:")
    try:
        with warnings.catch_warnings():
            # it advises a server above 20k points: that is the point of this comparison
            warnings.filterwarnings("ignore", message="Local mode is not recommended")
            size = int(vectors.shape[1])
            client.create_collection(
                _COLLECTION, vectors_config=models.VectorParams(size=size, distance=models.Distance.COSINE)
            )
            for start in range(0, len(vectors), _UPSERT_BATCH):
                part = vectors[start : start + _UPSERT_BATCH]
                client.upsert(
                    _COLLECTION,
                    points=models.Batch(ids=list(range(start, start + len(part))), vectors=part.tolist()),
                    wait=True,
                )
        rows = list(queries)
        return time_each(rows, lambda row: client.query_points(_COLLECTION, query=row.tolist(), limit=top_k))
    finally:
        client.close()
