"""Vector stores: the embedded qdrant-edge shard (:mod:`.edge`, default) and qdrant-client
(:mod:`.qdrant`). A dataset's store is opened by backend name in :mod:`zhiku.datasource.stores`."""

from zhiku.datasource.vector.base import VectorRecord, VectorStore

__all__ = ["VectorRecord", "VectorStore"]
