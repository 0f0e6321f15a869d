"""A dataset's vector, BM25 and keyword stores, opened by the backend name the settings give.

Three registries keyed by backend name: ``vector`` (``edge``, ``qdrant``, ``pgvector``),
``fulltext`` (``edge``, ``qdrant``, ``pgvector``, ``memory``) and ``keyword`` (``postings``, in
the metadata database). A backend is a factory of one contract per registry —
``(settings, dataset_id, dim)`` for vectors, ``(settings, dataset_id)`` for BM25,
``(settings, sessions, dataset_id, tokenizer, *, children)`` for keywords — opening that
dataset's store; anything the backend needs besides comes from :class:`Settings` (its URL,
credentials, ...). Another backend registers by name (``vector_stores.add``) or installs an entry
point ``vector.<name>`` / ``fulltext.<name>`` / ``keyword.<name>``; ``vector_backend`` /
``fulltext_backend`` / ``keyword_backend`` then name it.

With ``qdrant_url`` set, the default ``edge`` means the Qdrant server: the collections live there.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.config import Settings
from zhiku.core.registry import Registry
from zhiku.datasource.fulltext.base import FullTextStore
from zhiku.datasource.points.server import QdrantServer
from zhiku.datasource.vector.base import VectorStore
from zhiku.text.tokenizer import Tokenizer

if TYPE_CHECKING:
    from zhiku.datasource.keyword.store import KeywordStore


class VectorStoreFactory(Protocol):
    """The contract of the ``vector`` registry: one dense store per dataset, vectors of ``dim``."""

    def __call__(self, settings: Settings, dataset_id: str, dim: int, /) -> VectorStore: ...


class FullTextStoreFactory(Protocol):
    """The contract of the ``fulltext`` registry: one BM25 store per dataset, so IDF statistics
    are the dataset's own."""

    def __call__(self, settings: Settings, dataset_id: str, /) -> FullTextStore: ...


class KeywordStoreFactory(Protocol):
    """The contract of the ``keyword`` registry: one keyword store per dataset, of its segments
    or (``children``) of its child chunks, searching keywords cut by ``tokenizer``."""

    def __call__(
        self,
        settings: Settings,
        sessions: sessionmaker[Session],
        dataset_id: str,
        tokenizer: Tokenizer,
        /,
        *,
        children: bool,
    ) -> KeywordStore: ...


vector_stores: Registry[VectorStoreFactory] = Registry("vector")
fulltext_stores: Registry[FullTextStoreFactory] = Registry("fulltext")
keyword_stores: Registry[KeywordStoreFactory] = Registry("keyword")


def check_backends(settings: Settings) -> None:
    """ConfigError unless ``vector_backend``, ``fulltext_backend`` and ``keyword_backend`` name
    installed backends (the message lists them)."""
    vector_stores.check(settings.vector_backend, "vector_backend")
    fulltext_stores.check(settings.fulltext_backend, "fulltext_backend")
    keyword_stores.check(settings.keyword_backend, "keyword_backend")


def check_store_servers(settings: Settings) -> None:
    """StoreError naming the fix when the database of the pgvector backends (if the settings
    name them) is unreachable or lacks the extension; nothing for other backends."""
    if "pgvector" in (settings.vector_backend, settings.fulltext_backend):
        from zhiku.datasource.points.pgvector import check_database

        check_database(settings)


def open_vector(settings: Settings, dataset_id: str, dim: int) -> VectorStore:
    """The dataset's dense store, of backend ``vector_backend``."""
    name = vector_stores.check(settings.vector_backend, "vector_backend")
    return vector_stores.factory(_on_server(settings, name))(settings, dataset_id, dim)


def open_fulltext(settings: Settings, dataset_id: str) -> FullTextStore:
    """The dataset's BM25 store, of backend ``fulltext_backend``."""
    name = fulltext_stores.check(settings.fulltext_backend, "fulltext_backend")
    return fulltext_stores.factory(_on_server(settings, name))(settings, dataset_id)


def open_keywords(
    settings: Settings,
    sessions: sessionmaker[Session],
    dataset_id: str,
    tokenizer: Tokenizer,
    *,
    children: bool = False,
) -> KeywordStore:
    """The dataset's keyword store (of its child chunks with ``children``), of backend
    ``keyword_backend``."""
    name = keyword_stores.check(settings.keyword_backend, "keyword_backend")
    return keyword_stores.factory(name)(settings, sessions, dataset_id, tokenizer, children=children)


def _on_server(settings: Settings, name: str) -> str:
    return "qdrant" if name == "edge" and settings.qdrant_url else name


def qdrant_server(settings: Settings) -> QdrantServer:
    """The Qdrant connection and cluster settings (``qdrant_api_key``, ``qdrant_https``, ...)."""
    return QdrantServer(
        api_key=settings.qdrant_api_key,
        https=settings.qdrant_https,
        timeout=settings.qdrant_timeout,
        prefer_grpc=settings.qdrant_prefer_grpc,
        shard_number=settings.qdrant_shard_number,
        replication_factor=settings.qdrant_replication_factor,
    )


def _qdrant_location(settings: Settings) -> str:
    """The Qdrant server's URL, or qdrant-client's local mode under ``home``."""
    return settings.qdrant_url or str(settings.qdrant_path / "client")


def embedded_store_dir(settings: Settings, dataset_id: str) -> Path:
    """The directory of a dataset's embedded shards (``dense`` and ``bm25``)."""
    return settings.qdrant_path / dataset_id


@vector_stores.register("edge")
def _edge_vector(settings: Settings, dataset_id: str, dim: int, /) -> VectorStore:
    from zhiku.datasource.vector.edge import EdgeVectorStore

    return EdgeVectorStore(
        embedded_store_dir(settings, dataset_id) / "dense",
        dim=dim,
        build_time_limit=settings.index_build_time_limit,
        search_threads=settings.edge_search_threads,
    )


@vector_stores.register("qdrant")
def _qdrant_vector(settings: Settings, dataset_id: str, dim: int, /) -> VectorStore:
    from zhiku.datasource.vector.qdrant import QdrantClientVectorStore

    return QdrantClientVectorStore(
        _qdrant_location(settings), f"zhiku_{dataset_id}_dense", dim, server=qdrant_server(settings)
    )


@fulltext_stores.register("edge")
def _edge_fulltext(settings: Settings, dataset_id: str, /) -> FullTextStore:
    from zhiku.datasource.fulltext.sparse import EdgeSparseBM25Store

    return EdgeSparseBM25Store(
        embedded_store_dir(settings, dataset_id) / "bm25",
        build_time_limit=settings.index_build_time_limit,
        search_threads=settings.edge_search_threads,
    )


@fulltext_stores.register("qdrant")
def _qdrant_fulltext(settings: Settings, dataset_id: str, /) -> FullTextStore:
    from zhiku.datasource.fulltext.sparse import QdrantClientSparseBM25Store

    return QdrantClientSparseBM25Store(
        _qdrant_location(settings), f"zhiku_{dataset_id}_bm25", server=qdrant_server(settings)
    )


@fulltext_stores.register("memory")
def _memory_fulltext(settings: Settings, dataset_id: str, /) -> FullTextStore:
    from zhiku.datasource.fulltext.memory import RankBM25Store

    return RankBM25Store()


@vector_stores.register("pgvector")
def _pgvector_vector(settings: Settings, dataset_id: str, dim: int, /) -> VectorStore:
    from zhiku.datasource.vector.pgvector import open_pgvector_vector

    return open_pgvector_vector(settings, dataset_id, dim)


@fulltext_stores.register("pgvector")
def _pgvector_fulltext(settings: Settings, dataset_id: str, /) -> FullTextStore:
    from zhiku.datasource.fulltext.pgvector import open_pgvector_fulltext

    return open_pgvector_fulltext(settings, dataset_id)


@keyword_stores.register("postings")
def _postings_keywords(
    settings: Settings,
    sessions: sessionmaker[Session],
    dataset_id: str,
    tokenizer: Tokenizer,
    /,
    *,
    children: bool,
) -> KeywordStore:
    from zhiku.datasource.keyword.store import CHILD_POSTINGS, SEGMENT_POSTINGS, KeywordStore

    return KeywordStore(sessions, dataset_id, tokenizer, CHILD_POSTINGS if children else SEGMENT_POSTINGS)
