"""Query latency of a dataset's search methods, without the query embedding.

Each method is timed on the same queries, after an untimed pass over them (see
:func:`~zhiku.benchmarking.timing.time_warm`), as the dataset's own search runs it:

- ``semantic``: the vector store's search with a query vector embedded beforehand;
- ``full_text``: query tokenization plus the BM25 store's search (``full_text_store``: the
  store's search alone, tokens made beforehand);
- ``keyword``: the keyword store's search (it tokenizes the query itself);
- ``hybrid``: the retrieval service with its default configuration (semantic and full_text,
  ``adaptive`` fusion, ``max(100, 4 * top_k)`` candidates per channel, the live-segment check),
  the query vectors at hand in the embedding's query cache, as a repeated query's are;
- ``hybrid_filtered_10pct`` / ``_1pct``: the same with a metadata filter (:func:`filtered_latencies`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import numpy as np

from zhiku.benchmarking.timing import WARMUP_CALLS, Latency, time_each, time_warm
from zhiku.core.metadata import MetadataFilter
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.knowledge_base.dataset import Dataset
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex
from zhiku.providers.embedding import (
    CachedEmbedding,
    EmbeddingModel,
    InMemoryEmbeddingCache,
    ProgressCallback,
)


class PrecomputedQueries:
    """An embedding model whose ``embed_query`` returns vectors computed beforehand.

    Lets a timing run leave the query embedding out; an unknown query raises KeyError, so a
    timing can never silently include a real embedding.
    """

    def __init__(self, model: EmbeddingModel, vectors: Mapping[str, np.ndarray]) -> None:
        self._model = model
        self._vectors = dict(vectors)

    @property
    def name(self) -> str:
        return self._model.name

    @property
    def dim(self) -> int:
        return self._model.dim

    def embed_documents(
        self, texts: Sequence[str], *, on_progress: ProgressCallback | None = None
    ) -> np.ndarray:
        return self._model.embed_documents(texts, on_progress=on_progress)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vectors[text]


def hybrid_config(top_k: int) -> RetrievalConfig:
    """Hybrid search returning ``top_k`` hits whatever their relevance: synthetic vectors are
    judged irrelevant by the calibration, and a benchmark times the whole result, not an empty one."""
    return RetrievalConfig.model_validate(
        {"search_method": "hybrid_search", "top_k": top_k, "score_threshold": None}
    )


@contextmanager
def precomputed_queries(index: DatasetIndex, vectors: Mapping[str, np.ndarray]) -> Iterator[None]:
    """Within the block, ``index``'s semantic channel finds the query vectors in its query cache.

    The vectors sit in a :class:`CachedEmbedding`'s memory, as the dataset's real model keeps a
    query it has embedded, so the search path is the one a repeated query takes.
    """
    original = index.embedding
    index.embedding = CachedEmbedding(PrecomputedQueries(original, vectors), InMemoryEmbeddingCache())
    for query in vectors:
        index.embedding.embed_query(query)
    try:
        yield
    finally:
        index.embedding = original


def method_latencies(
    index: DatasetIndex, queries: Sequence[str], top_k: int = 10, *, warm: bool = True
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Seconds per query of each method (see the module docstring), query embedding excluded;
    with ``warm`` false, after a few warm-up calls instead of a whole pass (a first pass).

    Also returns, per channel, the seconds the channel took inside each timed hybrid search,
    as ``slowest`` the slowest channel's seconds of each, and as ``searches`` the seconds of all
    the channels' searches together (in turn or side by side): what hybrid cannot go below, its
    own work (fusion, live check) aside.
    """
    vectors = {query: index.embedding.embed_query(query) for query in queries}
    tokens = {query: index.tokenizer.terms(query) for query in queries}
    hybrid = hybrid_config(top_k)
    timed = time_warm if warm else time_each
    seconds = {
        "semantic": timed(queries, lambda q: index.vector.search(vectors[q], top_k)),
        "full_text": timed(queries, lambda q: index.fulltext.search(index.tokenizer.terms(q), top_k)),
        "full_text_store": timed(queries, lambda q: index.fulltext.search(tokens[q], top_k)),
        "keyword": timed(queries, lambda q: index.keywords.search(q, top_k)),
    }
    channels: dict[str, list[float]] = {}

    def search_hybrid(query: str) -> None:
        _, timings = index.search_service.fused_with_timings(query, hybrid)
        channels.setdefault("searches", []).append(timings.pop("searches") / 1000.0)
        for channel, milliseconds in timings.items():
            channels.setdefault(channel, []).append(milliseconds / 1000.0)
        channels.setdefault("slowest", []).append(max(timings.values(), default=0.0) / 1000.0)

    with precomputed_queries(index, vectors):
        for query in queries if warm else queries[:WARMUP_CALLS]:
            index.search_service.fused_with_timings(query, hybrid)
        seconds["hybrid"] = time_each(queries, search_hybrid, warmup=0)
    return seconds, channels


def summarise(seconds: Mapping[str, Sequence[float]]) -> dict[str, Latency]:
    return {method: Latency.of(values) for method, values in seconds.items()}


#: Filters timed by :func:`filtered_latencies`: the share of documents each keeps.
FILTER_SHARES = {"hybrid_filtered_10pct": 10, "hybrid_filtered_1pct": 1}


def filtered_latencies(
    dataset: Dataset, index: DatasetIndex, queries: Sequence[str], top_k: int = 10
) -> tuple[dict[str, list[float]], dict[str, float]]:
    """Seconds per hybrid query with a metadata filter keeping 10% and 1% of the documents
    (a number field ``bucket`` = position % 100), the filter's SQL included, query embedding
    excluded, each filter after an untimed pass; and the mean number of hits each returned
    (``top_k`` when the filter is pushed into the channels, fewer if it were applied after them)."""
    metadata = dataset.metadata
    vectors = {query: index.embedding.embed_query(query) for query in queries}
    hybrid = hybrid_config(top_k)
    seconds: dict[str, list[float]] = {}
    mean_hits: dict[str, float] = {}
    with precomputed_queries(index, vectors):
        for name, share in FILTER_SHARES.items():
            where = bucket_filter(dataset, share)
            found: list[int] = []

            def search(query: str, where: MetadataFilter = where, found: list[int] = found) -> None:
                scope = metadata.scope(where)
                found.append(len(index.search_service.fused(query, hybrid, scope=scope)))

            seconds[name] = time_warm(queries, search)
            mean_hits[name] = round(sum(found[-len(queries) :]) / len(queries), 2)
    return seconds, mean_hits


def bucket_filter(dataset: Dataset, share: int) -> MetadataFilter:
    """A filter keeping ``share``% of the dataset's documents: number field ``bucket`` (document
    position % 100, set here once per dataset) below ``share``."""
    metadata = dataset.metadata
    if "bucket" not in {field.name for field in metadata.fields()}:
        metadata.add_field("bucket", "number")
        documents = sorted(info.id for info in dataset.documents())
        metadata.set_many({doc: {"bucket": i % 100} for i, doc in enumerate(documents)})
    return MetadataFilter.model_validate(
        {"conditions": [{"name": "bucket", "comparison_operator": "<", "value": share}]}
    )
