"""The readable text report of one :func:`~zhiku.benchmarking.run_benchmark` result."""

from __future__ import annotations

from typing import Any

_STAGES = (
    "extract",
    "clean",
    "split",
    "embed",
    "index",
    "other",
    "non_embedding",
    "total",
    "total_per_cpu_s",
)
_STAGE_LABELS = {"non_embedding": "non-embedding", "total_per_cpu_s": "total/CPU s"}
_METHODS = (
    ("semantic", "semantic (vector search)"),
    ("semantic_with_query_embedding", "semantic + query embedding"),
    ("full_text", "full_text (tokenize + BM25)"),
    ("full_text_store", "full_text, BM25 store only"),
    ("keyword", "keyword"),
    ("hybrid", "hybrid (channels fused)"),
    ("hybrid_with_query_embedding", "hybrid + query embedding"),
    ("hybrid_filtered_10pct", "hybrid, filter keeps 10% of docs"),
    ("hybrid_filtered_1pct", "hybrid, filter keeps 1% of docs"),
    ("query_embedding", "query embedding alone"),
)
_TARGETS = {
    "hybrid_p50_ms_at_most_15": "hybrid p50 <= 15 ms (no query embedding)",
    "filtered_hybrid_p50_at_most_1_5x_hybrid": "hybrid p50 with a 10% filter <= 1.5x hybrid (ratio)",
    "full_text_20x_faster_than_rank_bm25": "full_text >= 20x faster than rank_bm25",
    "non_embedding_ingest_1000_chunks_per_s": "non-embedding ingestion >= 1,000 chunks/s",
    "peak_rss_mb_under_4096": "peak RSS of zhiku ingest < 4 GB (MB)",
    "hybrid_p50_ms_at_most_6_at_100k_12_at_1m": "hybrid p50 <= 6 ms at 100k, <= 12 ms at 1M",
    "hybrid_overhead_p50_ms_at_most_1": "hybrid p50 within 1 ms of its channels' searches",
    "search_p99_ms_during_index_build_at_most_1000": "search p99 during the index build <= 1 s",
    "peak_rss_mb_any_process_under_8192_at_1m": "peak RSS of any process < 8 GB at 1M (MB)",
}


def format_report(result: dict[str, Any]) -> list[str]:
    """Lines of text: ingestion per stage, latency per method, baselines with ratios, targets."""
    limit = result["ingest_limit"]
    rates = ", ".join(f"{lang} {rate:g} texts/s" for lang, rate in limit["texts_per_s"].items())
    lines = [
        "",
        f"zhiku benchmark: {result['segments']:,} segments ({result['segments_indexed']:,} indexed), "
        f"{result['queries']} queries, {result['machine']['cpus']} CPUs, load average "
        f"{result['machine']['load_avg_1m']} at start, {result['machine']['load_avg_1m_end']} at end",
        f"corpus: {result['corpus']['source']} ({result['corpus']['recombined_segments']:,} segments "
        "made by recombining sentences)",
        f"vectors: {result['vectors']}",
        "",
        f"{'Ingestion, chunks/s per stage':29}"
        + "".join(f"{_STAGE_LABELS.get(stage, stage):>14}" for stage in _STAGES),
        _stage_row(
            f"demo corpus ({result['ingest_demo_chunks']:,} chunks)", result["ingest_demo_chunks_per_s"]
        ),
        _stage_row(f"passages ({result['ingest_chunks']:,} chunks)", result["ingest_chunks_per_s"]),
        "  embed = synthetic model; other = wall time outside the five clocked stages (document bookkeeping)",
        f"  ingestion limit, {limit['model']}: {rates}; one query {limit['query_ms']['p50']:g} ms (p50)",
        *_build_lines(result),
        "",
        f"{'Query latency, ms':34}{'p50':>10}{'p95':>10}{'n':>6}",
    ]
    latency = result["latency_ms"]
    lines += [_latency_row(label, latency[key]) for key, label in _METHODS if key in latency]
    channels = ", ".join(
        f"{name} {value['p50']:g}/{value['p95']:g}" for name, value in result["hybrid_channels_ms"].items()
    )
    lines.append(f"  inside hybrid, channel p50/p95 ms: {channels}")
    overhead = result["hybrid_overhead_ms"]
    lines.append(
        f"  hybrid less its channels' searches (fusion, live check), p50/p95 ms: "
        f"{overhead['p50']:g}/{overhead['p95']:g}"
    )
    if "filtered_mean_hits" in result:
        hits = ", ".join(f"{name[16:]} {value:g}" for name, value in result["filtered_mean_hits"].items())
        lines.append(f"  filtered hybrid (the filter's SQL included), mean hits of the top 10: {hits}")
    baselines = result["baselines_ms"]
    bm25_segments = result["baseline_segments"]["rank_bm25"]
    ratios = result["ratios"]
    lines += [
        f"{'Baselines, same data, ms':34}{'p50':>10}{'p95':>10}{'n':>6}   ratio p50 / zhiku p50",
        _latency_row(f"rank_bm25 ({bm25_segments:,} segments)", baselines["rank_bm25"])
        + f"   {ratios['rank_bm25_over_full_text']:g}x full_text "
        f"({ratios['rank_bm25_over_full_text_store']:g}x store only)",
        _latency_row("qdrant-client local mode", baselines["qdrant_client_local"])
        + f"   {ratios['qdrant_client_over_semantic']:g}x semantic",
        "",
        f"Targets (stated for 100k segments; this run: {result['segments']:,})",
    ]
    for key, label in _TARGETS.items():
        target = result["targets"][key]
        if target["met"] is None:
            lines.append(f"  {label:48}{'-':>12}   not measured (dataset reused)")
        else:
            lines.append(f"  {label:48}{target['value']:>12,.1f}   {'met' if target['met'] else 'NOT MET'}")
    return lines


def _build_lines(result: dict[str, Any]) -> list[str]:
    """The child ingest and the index build, or where the dataset they made was reused from."""
    rss = result["peak_rss_mb_processes"]
    if "reused_dataset" in result:  # no child process ran
        return [
            f"dataset reused from {result['reused_dataset']}: no ingest, no index build timed",
            f"peak RSS: this process {rss['benchmark']:,.0f} MB",
        ]
    child, build = result["child_ingest"], result["index_build"]
    during = ", ".join(
        f"{name} {value['p50']:g}/{value['p99']:g} ({int(value['n'])})"
        for name, value in build["searches_during_ms"].items()
    )
    return [
        f"zhiku ingest in a child process: {result['segments_indexed']:,} segments in {child['seconds']:g} s "
        f"({child['segments_per_s']:g} segments/s, {child['cpu_seconds']:g} CPU s), "
        f"peak RSS {result['peak_rss_mb']:,.0f} MB",
        f"index build (HNSW, in a child process on a copy): {build['seconds']:g} s; searches meanwhile, "
        f"p50/p99 ms (n): {during}",
        f"peak RSS: this process {rss['benchmark']:,.0f} MB, largest child (ingest or index build) "
        f"{rss['largest_child']:,.0f} MB",
    ]


def _stage_row(label: str, rates: dict[str, float]) -> str:
    return f"  {label:27}" + "".join(f"{rates[stage]:>14,.0f}" for stage in _STAGES)


def _latency_row(label: str, value: dict[str, float]) -> str:
    return f"  {label:32}{value['p50']:>10.3f}{value['p95']:>10.3f}{int(value['n']):>6}"
