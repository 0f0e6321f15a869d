"""BM25 full-text stores: Qdrant sparse vectors on qdrant-edge ("edge", default) or qdrant-client
("qdrant"), pgvector sparse vectors on PostgreSQL ("pgvector"), and rank_bm25 in memory
("memory"). Records carry tokens from the dataset's tokenizer.

Backends import lazily through the registry, so an unused one costs nothing.
"""

from __future__ import annotations

from typing import Any

from zhiku.core.registry import Registry
from zhiku.datasource.fulltext.base import FullTextStore, TextRecord

fulltext_stores: Registry[FullTextStore] = Registry("fulltext")


@fulltext_stores.register("edge")
def _edge(**options: Any) -> FullTextStore:
    from zhiku.datasource.fulltext.sparse import EdgeSparseBM25Store

    return EdgeSparseBM25Store(**options)


@fulltext_stores.register("qdrant")
def _qdrant(**options: Any) -> FullTextStore:
    from zhiku.datasource.fulltext.sparse import QdrantClientSparseBM25Store

    return QdrantClientSparseBM25Store(**options)


@fulltext_stores.register("memory")
def _memory(**options: Any) -> FullTextStore:
    from zhiku.datasource.fulltext.memory import RankBM25Store

    return RankBM25Store(**options)


@fulltext_stores.register("pgvector")
def _pgvector(**options: Any) -> FullTextStore:
    from zhiku.datasource.fulltext.pgvector import PgBM25Store

    return PgBM25Store(**options)


def open_fulltext_store(kind: str, **options: Any) -> FullTextStore:
    """Open a full-text store by registry name: ``open_fulltext_store("edge", path=p)``."""
    return fulltext_stores.create(kind, **options)


__all__ = ["FullTextStore", "TextRecord", "fulltext_stores", "open_fulltext_store"]
