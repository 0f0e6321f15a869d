"""CachedEmbedding: misses only, deduplicated, input order kept; queries in a bounded LRU."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from zhiku.core.documents import content_hash
from zhiku.providers.embedding import (
    CachedEmbedding,
    EmbeddingModel,
    InMemoryEmbeddingCache,
    ProgressCallback,
)
from zhiku.providers.embedding.cache import QUERY_CACHE_SIZE
from zhiku.retrieval.channels import SemanticChannel


class CountingModel:
    """A deterministic model that records every text it is asked to embed."""

    dim = 4

    def __init__(self, name: str = "counting/v1") -> None:
        self.name = name
        self.document_calls: list[list[str]] = []
        self.query_calls: list[str] = []

    def embed_documents(
        self, texts: Sequence[str], *, on_progress: ProgressCallback | None = None
    ) -> np.ndarray:
        self.document_calls.append(list(texts))
        if on_progress is not None:
            on_progress(len(texts), len(texts))
        return np.stack([self.vector(t) for t in texts]) if texts else np.empty((0, self.dim), np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        self.query_calls.append(text)
        return self.vector("q:" + text)

    def vector(self, text: str) -> np.ndarray:
        raw = np.frombuffer(hashlib.sha256(text.encode()).digest()[: self.dim], dtype=np.uint8)
        row = raw.astype(np.float32) + 1
        return row / np.linalg.norm(row)


def test_second_call_embeds_nothing_and_rows_keep_input_order() -> None:
    inner = CountingModel()
    model = CachedEmbedding(inner, InMemoryEmbeddingCache())
    assert isinstance(model, EmbeddingModel)
    assert (model.name, model.dim) == ("counting/v1", 4)
    texts = ["甲", "乙", "甲", "丙"]
    want = np.stack([inner.vector(t) for t in texts])

    first = model.embed_documents(texts)
    assert inner.document_calls == [["甲", "乙", "丙"]]  # the repeated text is embedded once
    np.testing.assert_array_equal(first, want)

    progress: list[tuple[int, int]] = []
    second = model.embed_documents(list(reversed(texts)), on_progress=lambda d, t: progress.append((d, t)))
    assert inner.document_calls == [["甲", "乙", "丙"]]
    np.testing.assert_array_equal(second, want[::-1])
    assert progress == [(4, 4)]
    assert second.dtype == np.float32


def test_only_misses_are_embedded_and_progress_reaches_the_total() -> None:
    inner = CountingModel()
    cache = InMemoryEmbeddingCache()
    model = CachedEmbedding(inner, cache)
    model.embed_documents(["a", "b"])
    progress: list[tuple[int, int]] = []
    rows = model.embed_documents(["b", "c", "a", "d"], on_progress=lambda d, t: progress.append((d, t)))
    assert inner.document_calls[-1] == ["c", "d"]
    np.testing.assert_array_equal(rows, np.stack([inner.vector(t) for t in "bcad"]))
    assert progress[-1] == (4, 4)
    assert len(cache) == 4
    assert set(cache.get_many("counting/v1", [content_hash("c"), content_hash("zz")])) == {content_hash("c")}


def test_cache_entries_belong_to_one_model_name() -> None:
    cache = InMemoryEmbeddingCache()
    CachedEmbedding(CountingModel("model/a"), cache).embed_documents(["x"])
    other = CountingModel("model/b")
    CachedEmbedding(other, cache).embed_documents(["x"])
    assert other.document_calls == [["x"]]


def test_callers_cannot_corrupt_the_cache() -> None:
    inner = CountingModel()
    model = CachedEmbedding(inner, InMemoryEmbeddingCache())
    model.embed_documents(["x"])[0][:] = 0
    model.embed_query("q")[:] = 0
    np.testing.assert_array_equal(model.embed_documents(["x"])[0], inner.vector("x"))
    np.testing.assert_array_equal(model.embed_query("q"), inner.vector("q:q"))


def test_queries_are_kept_in_a_bounded_lru() -> None:
    inner = CountingModel()
    model = CachedEmbedding(inner, InMemoryEmbeddingCache())
    model.embed_query("first")
    model.embed_query("first")
    assert inner.query_calls == ["first"]
    for i in range(QUERY_CACHE_SIZE):
        model.embed_query(f"q{i}")
        if i == QUERY_CACHE_SIZE // 2:
            model.embed_query("first")  # still cached here, and now the most recent again
    assert inner.query_calls.count("first") == 1
    model.embed_query("q0")  # the oldest entry was evicted by now
    assert inner.query_calls.count("q0") == 2
    assert model.embed_documents([]).shape == (0, 4)


def test_persisted_query_embeddings_survive_a_new_wrapper() -> None:
    from zhiku.providers.embedding import CachedEmbedding, InMemoryEmbeddingCache, create_embedding_model

    class Counting:
        def __init__(self) -> None:
            self.inner = create_embedding_model("use")
            self.name, self.dim, self.calls = self.inner.name, self.inner.dim, 0

        def embed_documents(self, texts, *, on_progress=None):  # type: ignore[no-untyped-def]
            return self.inner.embed_documents(texts, on_progress=on_progress)

        def embed_query(self, text: str):  # type: ignore[no-untyped-def]
            self.calls += 1
            return self.inner.embed_query(text)

    cache = InMemoryEmbeddingCache()
    model = Counting()
    first = CachedEmbedding(model, cache, persist_queries=True).embed_query("绿茶怎么泡")
    again = CachedEmbedding(model, cache, persist_queries=True).embed_query("绿茶怎么泡")
    assert model.calls == 1
    assert (first == again).all()
    CachedEmbedding(model, cache).embed_query("绿茶怎么泡")  # not persisted: asks the model
    assert model.calls == 2


def test_progress_moves_with_each_request_of_the_model_not_once_per_cache_batch() -> None:
    class RequestByRequest(CountingModel):
        """Reports progress after every text, as a remote model does after every request."""

        def embed_documents(
            self, texts: Sequence[str], *, on_progress: ProgressCallback | None = None
        ) -> np.ndarray:
            for done in range(1, len(texts) + 1):
                if on_progress is not None:
                    on_progress(done, len(texts))
            return super().embed_documents(texts)

    model = CachedEmbedding(RequestByRequest(), InMemoryEmbeddingCache())
    model.embed_documents(["a"])
    progress: list[tuple[int, int]] = []
    model.embed_documents(["a", "b", "c", "d"], on_progress=lambda d, t: progress.append((d, t)))
    assert [d for d, _ in progress][:3] == [2, 3, 4]  # "a" was cached; then one step per text
    assert progress[-1] == (4, 4)


class StoreHoldingGil:
    """A vector store searched in this process with the GIL held (as qdrant-edge is)."""

    holds_gil = True


class PythonModel(CountingModel):
    """A model computed in Python: it says it keeps the GIL while it embeds."""

    holds_gil = True


def test_a_new_query_of_a_model_that_holds_the_gil_is_searched_in_turn() -> None:
    """A search runs its channels in turn when all of them keep the GIL: a new query to embed
    keeps it too when the model is computed in Python, so the other channels do not wait in a
    thread for it; any other model's new query leaves it (native code, or a server's answer)."""
    store = StoreHoldingGil()
    native = CachedEmbedding(CountingModel(), InMemoryEmbeddingCache())
    in_python = CachedEmbedding(PythonModel(), InMemoryEmbeddingCache())
    assert not SemanticChannel(native, store).holds_gil("green tea")  # type: ignore[arg-type]
    assert SemanticChannel(in_python, store).holds_gil("green tea")  # type: ignore[arg-type]
    native.embed_query("green tea")
    assert SemanticChannel(native, store).holds_gil("green tea")  # type: ignore[arg-type]
