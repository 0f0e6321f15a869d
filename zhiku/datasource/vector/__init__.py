"""Vector stores: the embedded qdrant-edge shard ("edge", default), qdrant-client ("qdrant") and
PostgreSQL with pgvector ("pgvector").

Backends import lazily through the registry, so an unused one costs nothing.
"""

from __future__ import annotations

from typing import Any

from zhiku.core.registry import Registry
from zhiku.datasource.vector.base import VectorRecord, VectorStore

vector_stores: Registry[VectorStore] = Registry("vector")


@vector_stores.register("edge")
def _edge(**options: Any) -> VectorStore:
    from zhiku.datasource.vector.edge import EdgeVectorStore

    return EdgeVectorStore(**options)


@vector_stores.register("qdrant")
def _qdrant(**options: Any) -> VectorStore:
    from zhiku.datasource.vector.qdrant import QdrantClientVectorStore

    return QdrantClientVectorStore(**options)


@vector_stores.register("pgvector")
def _pgvector(**options: Any) -> VectorStore:
    from zhiku.datasource.vector.pgvector import PgVectorStore

    return PgVectorStore(**options)


def open_vector_store(kind: str, **options: Any) -> VectorStore:
    """Open a vector store by registry name: ``open_vector_store("edge", path=p, dim=384)``,
    ``open_vector_store("qdrant", location=":memory:", collection="c", dim=384)``."""
    return vector_stores.create(kind, **options)


__all__ = ["VectorRecord", "VectorStore", "open_vector_store", "vector_stores"]
