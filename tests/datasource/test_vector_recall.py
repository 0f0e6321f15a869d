"""HNSW on the embedded store keeps recall@10 >= 0.99 of exact search at the default ``hnsw_ef``.

Small on purpose: 4,000 clustered 32-d vectors with the index threshold lowered so that
``optimize()`` builds a real HNSW graph (at the default threshold, ~6,500 384-d vectors, a
segment this small would be scanned exactly).
"""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np

from zhiku.datasource.vector.base import VectorRecord
from zhiku.datasource.vector.edge import EdgeVectorStore

DIM, POINTS, QUERIES = 32, 4000, 100


def clustered(rng: np.random.Generator, n: int) -> np.ndarray:
    """Unit vectors around 100 centres, with overlapping clusters (harder than uniform noise)."""
    centres = rng.normal(size=(100, DIM))
    vectors = centres[rng.integers(0, 100, n)] + rng.normal(size=(n, DIM))
    unit: np.ndarray = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    return unit


def recall_at_10(store: EdgeVectorStore, queries: np.ndarray, truth: list[set[str]]) -> float:
    found = [len({s for s, _ in store.search(q, 10)} & t) / 10 for q, t in zip(queries, truth, strict=True)]
    return float(np.mean(found))


def test_hnsw_recall_against_exact(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    vectors = clustered(rng, POINTS + QUERIES)
    queries, points = vectors[:QUERIES], vectors[QUERIES:]
    ids = [str(uuid.UUID(int=i + 1)) for i in range(POINTS)]
    nearest = np.argsort(-(queries @ points.T), axis=1)[:, :10]
    truth = [{ids[i] for i in row} for row in nearest]

    store = EdgeVectorStore(tmp_path / "dense", DIM, index_threshold_kb=64)
    try:
        store.upsert([VectorRecord(i, v, "doc") for i, v in zip(ids, points, strict=True)])
        assert recall_at_10(store, queries, truth) == 1.0  # no graph yet: exact scan
        store.optimize()
        assert recall_at_10(store, queries, truth) >= 0.99
        store.hnsw_ef = 10  # a narrow beam misses neighbours: the graph is really in use
        assert recall_at_10(store, queries, truth) < 0.99
    finally:
        store.close()
