"""BM25 full-text stores: Qdrant sparse vectors on qdrant-edge or qdrant-client (:mod:`.sparse`),
pgvector sparse vectors on PostgreSQL (:mod:`.pgvector`), and rank_bm25 in memory
(:mod:`.memory`). Records carry tokens from the dataset's tokenizer. A dataset's store is opened
by backend name in :mod:`zhiku.datasource.stores`."""

from zhiku.datasource.fulltext.base import FullTextStore, TextRecord

__all__ = ["FullTextStore", "TextRecord"]
