"""Embedding cache in the metadata DB, keyed by (model, sha256(text)); vectors as float32 bytes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db.inserts import insert_missing
from zhiku.core.db.models import EmbeddingCacheRow

_BATCH = 500


class DatabaseEmbeddingCache:
    """Implements the ``EmbeddingCache`` protocol of :mod:`zhiku.providers.embedding`."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(hashes))
        with self._sessions() as session:
            for start in range(0, len(unique), _BATCH):
                batch = unique[start : start + _BATCH]
                rows = session.execute(
                    select(EmbeddingCacheRow.hash, EmbeddingCacheRow.vector).where(
                        EmbeddingCacheRow.model == model, EmbeddingCacheRow.hash.in_(batch)
                    )
                )
                for digest, blob in rows:
                    found[digest] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        """Cache vectors by text hash. Keys go in sorted order, so that two writers inserting
        overlapping keys on PostgreSQL wait for each other instead of deadlocking."""
        digests = sorted(items)
        for start in range(0, len(digests), _BATCH):
            self._put_batch(model, {d: items[d] for d in digests[start : start + _BATCH]})

    def _put_batch(self, model: str, items: dict[str, np.ndarray]) -> None:
        """Insert the vectors; one another writer cached meanwhile (same model and text) is kept."""
        if not items:
            return
        rows = [
            {
                "model": model,
                "hash": digest,
                "dim": int(vector.shape[-1]),
                "vector": np.asarray(vector, dtype=np.float32).tobytes(),
            }
            for digest, vector in items.items()
        ]
        with self._sessions.begin() as session:
            session.execute(insert_missing(session, EmbeddingCacheRow), rows)
