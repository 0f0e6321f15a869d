"""The benchmark end to end at a tiny size, and the pieces whose correctness the figures rest on."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from zhiku.benchmarking import SyntheticEmbedding, run_benchmark
from zhiku.benchmarking.corpus import build_corpus, write_corpus
from zhiku.benchmarking.runner import KEPT_MARKER
from zhiku.benchmarking.timing import Latency, paired_sum, time_warm
from zhiku.core.errors import InvalidInput
from zhiku.providers.embedding import create_embedding_model

METHODS = {"semantic", "full_text", "keyword", "hybrid", "semantic_with_query_embedding",
           "hybrid_with_query_embedding", "query_embedding"}
STAGES = {"extract", "clean", "split", "embed", "index", "non_embedding"}


def test_synthetic_embedding_is_registered_deterministic_and_keeps_word_overlap() -> None:
    model = create_embedding_model("synthetic")
    texts = ["green tea is brewed at 80 degrees", "green tea is brewed at 85 degrees",
             "the invoice is paid by bank transfer", "绿茶用八十度的水冲泡"]
    vectors = model.embed_documents(texts)
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert np.allclose(SyntheticEmbedding().embed_documents(texts), vectors)
    assert np.allclose(model.embed_query(texts[3]), vectors[3])
    assert vectors[0] @ vectors[1] > 0.7 > vectors[0] @ vectors[2]
    assert not np.allclose(vectors[0], vectors[1])


def test_corpus_recombines_distinct_segments_that_split_back_one_per_paragraph(tmp_path: Path) -> None:
    corpus = build_corpus(500, 7, eval_dir=tmp_path / "no-eval-sets")
    assert corpus.source == "bundled demo corpus sentences"  # no evaluation sets named
    assert len(corpus.texts) == len(set(corpus.texts)) == 500 and corpus.recombined > 0
    assert len(corpus.queries) == 7
    assert build_corpus(500, 7, eval_dir=tmp_path / "no-eval-sets").texts == corpus.texts
    files = write_corpus(corpus.texts, tmp_path / "files", per_file=100)
    assert len(files) == 5
    paragraphs = [p for f in files for p in f.read_text(encoding="utf-8").strip().split("\n\n")]
    assert paragraphs == corpus.texts
    with pytest.raises(InvalidInput):
        build_corpus(0, 7, eval_dir=tmp_path / "no-eval-sets")


def test_latency_percentiles_and_paired_sum() -> None:
    latency = Latency.of([0.001, 0.002, 0.003, 0.004, 0.100])
    assert latency.p50 == pytest.approx(3.0) and latency.p95 == pytest.approx(80.8)
    assert latency.p99 == pytest.approx(96.16) and latency.to_json()["p99"] == latency.p99
    assert paired_sum([1.0, 2.0, 3.0], [0.5, 0.25]) == [1.5, 2.25, 3.5]


def test_a_warm_timing_calls_each_item_once_untimed_then_once_timed() -> None:
    calls: list[str] = []
    seconds = time_warm(["a", "b", "c"], calls.append)
    assert calls == ["a", "b", "c", "a", "b", "c"] and len(seconds) == 3
    assert all(value >= 0 for value in seconds)


def test_run_benchmark_reports_every_figure(tmp_path: Path) -> None:
    lines: list[str] = []
    result = run_benchmark(tmp_path / "home", segments=120, queries=6, log=lines.append,
                           ingest_passages=60, limit_model="synthetic", eval_dir=tmp_path / "no-eval-sets")
    json.dumps(result, allow_nan=False)
    assert result["segments"] == 120 and result["segments_indexed"] == 120
    # the filtered searches are timed returning hits (the calibration judges synthetic vectors
    # irrelevant: with the default threshold they returned none)
    assert all(hits > 0 for hits in result["filtered_mean_hits"].values()), result["filtered_mean_hits"]
    assert set(result["latency_ms"]) >= METHODS
    for value in result["latency_ms"].values():
        assert 0 < value["p50"] <= value["p95"]
    for name in ("rank_bm25", "qdrant_client_local"):
        assert result["baselines_ms"][name]["p50"] > 0
    assert set(result["ingest_chunks_per_s"]) >= STAGES
    assert all(rate > 0 for rate in result["ingest_chunks_per_s"].values())
    assert result["ingest_chunks"] == 60
    assert 50 < result["peak_rss_mb"] < 4096
    assert all(ratio > 0 for ratio in result["ratios"].values())
    assert result["ingest_limit"]["texts_per_s"]["zh"] > 0
    build = result["index_build"]
    assert build["seconds"] > 0 and set(build["searches_during_ms"]) == {"hybrid", "hybrid_filtered_10pct"}
    for value in build["searches_during_ms"].values():
        assert value["n"] >= 1 and 0 < value["p50"] <= value["p99"]
    inside, overhead = result["hybrid_channels_ms"], result["hybrid_overhead_ms"]
    assert 0 < inside["slowest"]["p50"] <= inside["searches"]["p50"] < result["latency_ms"]["hybrid"]["p50"]
    assert overhead["n"] == 6
    rss = result["peak_rss_mb_processes"]
    assert rss["benchmark"] > 50 and rss["largest_child"] >= result["peak_rss_mb"]
    assert result["baseline_segments"] == {"rank_bm25": 120, "qdrant_client_local": 120}
    assert {"hybrid_overhead_p50_ms_at_most_1", "search_p99_ms_during_index_build_at_most_1000",
            "peak_rss_mb_any_process_under_8192_at_1m"} <= set(result["targets"])
    report = "\n".join(lines)
    assert "Query latency" in report and "rank_bm25" in report and "synthetic" in report
    assert "index build" in report and "channels' searches" in report
    assert not list((tmp_path / "home").iterdir()), "the work directory is removed"


def test_a_kept_dataset_is_reused_by_a_run_of_the_same_corpus_and_nothing_else(tmp_path: Path) -> None:
    def run(keep: Path, segments: int = 80) -> tuple[dict, str]:
        lines: list[str] = []
        result = run_benchmark(tmp_path / "home", segments=segments, queries=4, log=lines.append,
                               ingest_passages=20, limit_model="synthetic",
                               eval_dir=tmp_path / "no-eval-sets", keep=keep)
        return result, "\n".join(lines)

    keep = tmp_path / "kept"
    first, _ = run(keep)
    assert "index_build" in first and "reused_dataset" not in first
    marker = json.loads((keep / KEPT_MARKER).read_text(encoding="utf-8"))
    assert marker["segments"] == 80 and marker["queries"] == 4
    built = {p: p.stat().st_mtime_ns for p in [keep / "ingest.log", *(keep / "corpus").iterdir()]}

    second, report = run(keep)
    assert second["reused_dataset"] == str(keep) and second["segments_indexed"] == 80
    assert "index_build" not in second and "child_ingest" not in second
    assert second["latency_ms"]["hybrid"]["p50"] > 0 and second["ingest_chunks"] == 20
    assert second["targets"]["search_p99_ms_during_index_build_at_most_1000"] == {"value": None, "met": None}
    assert second["targets"]["peak_rss_mb_under_4096"]["met"] is None
    assert f"dataset reused from {keep}" in report and "not measured (dataset reused)" in report
    assert "largest child" not in report
    json.dumps(second, allow_nan=False)
    assert {p: p.stat().st_mtime_ns for p in built} == built, "no corpus written, no ingest run again"

    with pytest.raises(InvalidInput, match="not of"):
        run(keep, segments=90)  # another size: refused, the kept dataset left alone
    assert (keep / KEPT_MARKER).is_file()
    (keep / KEPT_MARKER).write_text("{half a marker", encoding="utf-8")
    with pytest.raises(InvalidInput, match="damaged"):
        run(keep)

    other = tmp_path / "someone-elses"
    other.mkdir()
    (other / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(InvalidInput, match="no finished benchmark dataset"):
        run(other)
    assert [p.name for p in other.iterdir()] == ["notes.txt"]
