"""Where a dataset's hybrid channels run: beside the query embedding, or in turn once it is cached."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from zhiku import KnowledgeBase


def test_bm25_runs_beside_a_new_query_embedding_and_in_turn_for_a_cached_one(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    ds = kb.create_dataset("threads")
    ds.add_text("tea.txt", "Green tea is brewed at eighty degrees for two minutes.")
    ds.add_text("cake.txt", "Bake the sponge cake for forty minutes.")
    index = kb.dataset_index(ds.id)
    assert index.fulltext.holds_gil and index.vector.holds_gil  # embedded qdrant-edge shards
    threads: list[str] = []
    search = index.fulltext.search

    def recording(*args: Any, **kwargs: Any) -> list[tuple[str, float]]:
        threads.append(threading.current_thread().name)
        return search(*args, **kwargs)

    monkeypatch.setattr(index.fulltext, "search", recording)
    query = "how hot should the water be for green tea"
    first = ds.search(query, search_method="hybrid_search")
    second = ds.search(query, search_method="hybrid_search")
    assert [h.document_name for h in first] == [h.document_name for h in second]
    assert first[0].document_name == "tea.txt"
    assert threads[0].startswith("zhiku-retrieve")  # while the query was embedded
    assert threads[1] == threading.current_thread().name  # vector cached: no thread to take turns with
