"""Vector stores: the embedded qdrant-edge shard (:mod:`.edge`, default), qdrant-client
(:mod:`.qdrant`) and PostgreSQL with pgvector (:mod:`.pgvector`). A dataset's store is opened by
backend name in :mod:`zhiku.datasource.stores`."""

from zhiku.datasource.vector.base import VectorRecord, VectorStore

__all__ = ["VectorRecord", "VectorStore"]
