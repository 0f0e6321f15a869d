"""The real embedding model's own speed: the limit of ingestion and the cost of a query embedding.

Measured apart from the latency runs (which use synthetic vectors), on short texts of each
language, in batches as ingestion sends them, with the model loaded beforehand.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from zhiku.benchmarking.timing import Latency, time_each
from zhiku.providers.embedding import create_embedding_model


@dataclass
class ModelThroughput:
    """Texts per second per language, and the query embedding time (``query_seconds`` per query)."""

    name: str
    texts_per_s: dict[str, float]
    query_seconds: list[float]

    @property
    def query(self) -> Latency:
        return Latency.of(self.query_seconds)

    def to_json(self) -> dict[str, object]:
        return {"model": self.name, "texts_per_s": self.texts_per_s, "query_ms": self.query.to_json()}


def measure_model(
    model_name: str, texts: Mapping[str, Sequence[str]], queries: Sequence[str]
) -> ModelThroughput:
    """Embed each language's ``texts`` as documents, then each query alone.

    Raises ModelUnavailable when the model is not installed.
    """
    model = create_embedding_model(model_name)
    model.embed_documents(["warm-up", "预热"])
    rates = {}
    for language, batch in texts.items():
        started = time.perf_counter()
        model.embed_documents(list(batch))
        rates[language] = round(len(batch) / (time.perf_counter() - started), 2)
    query_seconds = time_each(queries, model.embed_query, warmup=2)
    return ModelThroughput(name=model.name, texts_per_s=rates, query_seconds=query_seconds)
