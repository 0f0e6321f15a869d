"""Benchmarks: ingestion throughput per stage, query latency per method, baselines, peak memory.

Importing this package registers the embedding model ``"synthetic"``
(:class:`SyntheticEmbedding`), which the latency runs use so 100k segments ingest in minutes.

>>> from zhiku.benchmarking import run_benchmark
>>> result = run_benchmark(None, segments=10_000, queries=200, log=print)  # doctest: +SKIP
"""

from __future__ import annotations

from zhiku.benchmarking.report import format_report
from zhiku.benchmarking.runner import run_benchmark
from zhiku.benchmarking.synthetic import SyntheticEmbedding
from zhiku.providers.embedding import embedding_models

embedding_models.add("synthetic", SyntheticEmbedding)

__all__ = ["SyntheticEmbedding", "format_report", "run_benchmark"]
