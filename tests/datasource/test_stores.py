"""A dataset's stores are opened by the backend names of the settings, checked against the registries."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy.orm import sessionmaker

from zhiku.core.config import Settings
from zhiku.core.errors import ConfigError
from zhiku.datasource.fulltext.memory import RankBM25Store
from zhiku.datasource.fulltext.sparse import EdgeSparseBM25Store, QdrantClientSparseBM25Store
from zhiku.datasource.keyword.store import CHILD_POSTINGS, SEGMENT_POSTINGS, KeywordStore
from zhiku.datasource.stores import (
    check_backends,
    fulltext_stores,
    keyword_stores,
    open_fulltext,
    open_keywords,
    open_vector,
    vector_stores,
)
from zhiku.datasource.vector.edge import EdgeVectorStore
from zhiku.datasource.vector.qdrant import QdrantClientVectorStore
from zhiku.text.tokenizer import Tokenizer

DIM = 8


def test_each_backend_opens_by_name(tmp_path: Path) -> None:
    assert {"edge", "qdrant"} <= set(vector_stores.names())
    assert {"edge", "qdrant", "memory"} <= set(fulltext_stores.names())
    edge = Settings(home=tmp_path / "edge")
    client = Settings(home=tmp_path / "client", vector_backend="qdrant", fulltext_backend="qdrant")
    stores = [
        open_vector(edge, "d1", DIM),
        open_fulltext(edge, "d1"),
        open_vector(client, "d1", DIM),
        open_fulltext(client, "d1"),
        open_fulltext(Settings(home=tmp_path / "memory", fulltext_backend="memory"), "d1"),
    ]
    try:
        assert [type(store) for store in stores] == [
            EdgeVectorStore,
            EdgeSparseBM25Store,
            QdrantClientVectorStore,
            QdrantClientSparseBM25Store,
            RankBM25Store,
        ]
        assert stores[0].dim == DIM
    finally:
        for store in stores:
            store.close()


def test_an_unknown_backend_is_refused_naming_the_setting_and_the_installed_ones(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, vector_backend="pgvektor")
    refused = r"unknown vector_backend 'pgvektor'; installed: edge, pgvector, qdrant"
    with pytest.raises(ConfigError, match=refused):
        check_backends(settings)
    with pytest.raises(ConfigError, match="vector_backend"):
        open_vector(settings, "d1", DIM)
    refused = r"fulltext_backend 'bm25'; installed: edge, memory, pgvector, qdrant"
    with pytest.raises(ConfigError, match=refused):
        open_fulltext(Settings(home=tmp_path, fulltext_backend="bm25"), "d1")


def test_keyword_stores_open_by_name_for_segments_or_child_chunks(tmp_path: Path) -> None:
    assert keyword_stores.names() == ["postings"]
    settings = Settings(home=tmp_path)
    segments = open_keywords(settings, sessionmaker(), "d1", Tokenizer())
    children = open_keywords(settings, sessionmaker(), "d1", Tokenizer(), children=True)
    assert isinstance(segments, KeywordStore) and isinstance(children, KeywordStore)
    assert segments._layout is SEGMENT_POSTINGS and children._layout is CHILD_POSTINGS


def test_an_unknown_keyword_backend_is_refused_naming_the_installed_ones(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, keyword_backend="bm25")
    with pytest.raises(ConfigError, match=r"unknown keyword_backend 'bm25'; installed: postings"):
        check_backends(settings)
    with pytest.raises(ConfigError, match="keyword_backend"):
        open_keywords(settings, sessionmaker(), "d1", Tokenizer())
