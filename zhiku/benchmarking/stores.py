"""``zhiku bench --store NAME``: the same corpus on the embedded stores and on another backend.

Each backend gets a knowledge base of its own (under a temporary directory; its metadata in
SQLite there) and the same steps: ingest the corpus in this process (synthetic vectors, so the
rate is the stores' and the pipeline's, not a model's), build the indexes (``optimize``), then
time hybrid search unfiltered and with metadata filters keeping 10% and 1% of the documents,
each after an untimed pass over the queries, as a server's searches mostly find what they read in
memory (``hybrid_first_pass``: the unfiltered one timed first, what the build left on disk read
as it goes; query embedding excluded, see :mod:`zhiku.benchmarking.latency`), and measure the
filtered semantic search's recall@10 against an exact search of the admitted points (their
stored vectors compared with numpy); last, each other backend's p50 over the embedded stores'
(``p50_ratio_to_edge``). A pgvector run uses the settings' ``pgvector_url`` (or a
PostgreSQL ``database_url``) and drops its tables at the end.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import select

from zhiku.benchmarking.corpus import build_corpus, write_corpus
from zhiku.benchmarking.ingest import PARAGRAPH_RULE, measure_ingest
from zhiku.benchmarking.latency import FILTER_SHARES, bucket_filter, filtered_latencies, method_latencies
from zhiku.benchmarking.timing import Latency
from zhiku.core.config import Settings
from zhiku.core.db import SegmentRow
from zhiku.knowledge_base import Dataset, KnowledgeBase
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex

BENCH_MODEL = "synthetic"
TOP_K = 10
#: Queries whose filtered recall is measured (each needs the admitted points' vectors).
RECALL_QUERIES = 50

Log = Callable[[str], None]


def compare_stores(
    home: Path | None,
    backends: Sequence[str],
    segments: int = 10_000,
    queries: int = 200,
    log: Log | None = None,
) -> dict[str, Any]:
    """Run the steps of the module docstring on each of ``backends`` (vector and BM25 store
    alike); ``home``'s settings say where a server backend's database is."""
    say = log or (lambda line: None)
    settings = Settings.load(home)
    # where a server backend's database is; the metadata stays in each run's own SQLite file
    servers = {"qdrant_url": settings.qdrant_url}
    if "pgvector" in backends:
        from zhiku.datasource.points.pgvector import store_url

        servers["pgvector_url"] = store_url(settings)
    corpus = build_corpus(segments, queries)
    result: dict[str, Any] = {"segments": segments, "queries": len(corpus.queries), "stores": {}}
    with tempfile.TemporaryDirectory(prefix="zhiku-bench-stores-") as tmp:
        files = write_corpus(corpus.texts, Path(tmp) / "corpus")
        for backend in backends:
            say(f"{backend}: ingesting {segments:,} segments ...")
            with KnowledgeBase.open(
                Path(tmp) / backend, vector_backend=backend, fulltext_backend=backend, **servers
            ) as kb:
                result["stores"][backend] = _run(kb, files, corpus.queries, say)
    result["p50_ratio_to_edge"] = _ratios_to_edge(result["stores"])
    return result


def _ratios_to_edge(stores: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Each other backend's p50 of every timed search over the embedded stores' (same run)."""
    if "edge" not in stores:
        return {}
    edge = stores["edge"]["latency_ms"]
    return {
        backend: {
            name: round(latency["p50"] / edge[name]["p50"], 2)
            for name, latency in figures["latency_ms"].items()
        }
        for backend, figures in stores.items()
        if backend != "edge"
    }


def _run(kb: KnowledgeBase, files: Sequence[Path], queries: list[str], say: Log) -> dict[str, Any]:
    ingest = measure_ingest(kb, "bench", files, PARAGRAPH_RULE, BENCH_MODEL)
    dataset = kb.dataset("bench")
    index = kb.dataset_index(dataset.id)
    try:
        bucket_filter(dataset, 10)  # the filters' values, written into the points by the build
        say("  building the indexes ...")
        started = time.perf_counter()
        index.optimize()
        build = time.perf_counter() - started
        say("  timing hybrid search, unfiltered and filtered ...")
        first, _ = method_latencies(index, queries, TOP_K, warm=False)
        seconds, _ = method_latencies(index, queries, TOP_K)
        filtered, mean_hits = filtered_latencies(dataset, index, queries, TOP_K)
        latency = {
            "hybrid_first_pass": Latency.of(first["hybrid"]).to_json(),
            "hybrid": Latency.of(seconds["hybrid"]).to_json(),
        }
        latency.update({name: Latency.of(values).to_json() for name, values in filtered.items()})
        say("  filtered recall against exact search ...")
        recall = {
            name: _filtered_recall(kb, dataset, index, queries, share)
            for name, share in FILTER_SHARES.items()
        }
    finally:
        kb.delete_dataset(dataset.id)
    return {
        "ingest_chunks_per_s": ingest.chunks_per_s()["total"],
        "ingest_chunks": ingest.chunks,
        "index_build_s": round(build, 2),
        "latency_ms": latency,
        "filtered_mean_hits": mean_hits,
        "filtered_semantic_recall@10": recall,
    }


def _filtered_recall(
    kb: KnowledgeBase, dataset: Dataset, index: DatasetIndex, queries: list[str], share: int
) -> float:
    """Mean recall@10 of the vector store's filtered search against the exact top 10 of the
    points the filter admits."""
    scope = dataset.metadata.scope(bucket_filter(dataset, share))
    with kb.sessions() as session:
        rows = session.execute(
            select(SegmentRow.id, SegmentRow.document_id).where(SegmentRow.dataset_id == dataset.id)
        ).all()
    admitted = [segment for segment, document in rows if scope is None or scope.admits(document)]
    stored = index.vector.vectors(admitted)
    ids = list(stored)
    if not ids:
        return 1.0
    matrix = np.stack([stored[i] / np.linalg.norm(stored[i]) for i in ids])
    recalls = []
    for query in queries[:RECALL_QUERIES]:
        vector = index.embedding.embed_query(query)
        exact = {ids[i] for i in np.argsort(-(matrix @ (vector / np.linalg.norm(vector))))[:TOP_K]}
        found = {segment for segment, _ in index.vector.search(vector, TOP_K, scope)}
        recalls.append(len(found & exact) / min(TOP_K, len(ids)))
    return round(float(np.mean(recalls)), 3)


def format_stores(result: dict[str, Any]) -> list[str]:
    """The comparison as a few readable lines, one block per backend."""
    lines = [f"stores at {result['segments']:,} segments, {result['queries']} queries (top {TOP_K}):"]
    for backend, figures in result["stores"].items():
        latency = figures["latency_ms"]
        recall = figures["filtered_semantic_recall@10"]
        lines.append(
            f"  {backend}: ingest {figures['ingest_chunks_per_s']:,.0f} chunks/s, index build "
            f"{figures['index_build_s']} s"
        )
        names = ("hybrid_first_pass", "hybrid", *FILTER_SHARES)
        for name, label in ((n, n.removeprefix("hybrid_") if n in FILTER_SHARES else n) for n in names):
            extra = f", semantic recall@10 vs exact {recall[name]}" if name in recall else ""
            lines.append(f"    {label}: p50 {latency[name]['p50']} ms, p99 {latency[name]['p99']} ms{extra}")
    for backend, ratios in result["p50_ratio_to_edge"].items():
        shown = ", ".join(f"{name.removeprefix('hybrid_')} {ratio}x" for name, ratio in ratios.items())
        lines.append(f"  {backend} p50 / edge p50: {shown}")
    return lines
