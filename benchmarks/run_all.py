"""Run the whole benchmark at 10k and 100k segments and print every figure (see docs/results/speed.md),
then the API load run (``api_load.py``) at the smallest size.

    python benchmarks/run_all.py                       # 10,000 and 100,000 segments, 200 queries
    python benchmarks/run_all.py --segments 10000 --json results.json
    python benchmarks/run_all.py --api-clients         # without the API load run

Offline; works in a temporary directory (under ``--home`` when given) that is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmark this checkout

from api_load import format_api_load, run_api_load  # noqa: E402

from zhiku.benchmarking import run_benchmark  # noqa: E402

Row = tuple[str, Callable[[dict[str, Any]], float]]
ROWS: tuple[Row, ...] = (
    ("ingest, non-embedding stages (chunks/s)", lambda r: r["ingest_chunks_per_s"]["non_embedding"]),
    ("ingest, embedding model (zh texts/s)", lambda r: r["ingest_limit"]["texts_per_s"].get("zh", 0.0)),
    ("ingest, embedding model (en texts/s)", lambda r: r["ingest_limit"]["texts_per_s"].get("en", 0.0)),
    ("zhiku ingest peak RSS (MB)", lambda r: r["peak_rss_mb"]),
    ("semantic p50 (ms)", lambda r: r["latency_ms"]["semantic"]["p50"]),
    ("semantic + query embedding p50 (ms)",
     lambda r: r["latency_ms"]["semantic_with_query_embedding"]["p50"]),
    ("full_text p50 (ms)", lambda r: r["latency_ms"]["full_text"]["p50"]),
    ("keyword p50 (ms)", lambda r: r["latency_ms"]["keyword"]["p50"]),
    ("hybrid p50 (ms)", lambda r: r["latency_ms"]["hybrid"]["p50"]),
    ("hybrid p95 (ms)", lambda r: r["latency_ms"]["hybrid"]["p95"]),
    ("hybrid + query embedding p50 (ms)", lambda r: r["latency_ms"]["hybrid_with_query_embedding"]["p50"]),
    ("rank_bm25 p50 (ms)", lambda r: r["baselines_ms"]["rank_bm25"]["p50"]),
    ("qdrant-client local p50 (ms)", lambda r: r["baselines_ms"]["qdrant_client_local"]["p50"]),
    ("rank_bm25 / zhiku full_text", lambda r: r["ratios"]["rank_bm25_over_full_text"]),
    ("qdrant-client / zhiku semantic", lambda r: r["ratios"]["qdrant_client_over_semantic"]),
)


def summary(results: list[dict[str, Any]]) -> list[str]:
    """One column per run, one row per headline figure."""
    header = f"{'segments':44}" + "".join(f"{r['segments']:>14,}" for r in results)
    lines = ["", "Summary (latency runs use synthetic vectors; see each report above)", header]
    for label, value in ROWS:
        lines.append(f"{label:44}" + "".join(f"{value(r):>14,.3f}" for r in results))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--segments", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--home", type=Path, default=None, help="Directory for the temporary data.")
    parser.add_argument("--json", type=Path, default=None, help="Also write the results to this file.")
    parser.add_argument(
        "--api-clients",
        type=int,
        nargs="*",
        default=[1, 4, 8],
        help="Concurrent clients of the API load run, at the smallest size (none: skip it).",
    )
    args = parser.parse_args()
    results = [run_benchmark(args.home, segments=n, queries=args.queries, log=print) for n in args.segments]
    for line in summary(results):
        print(line)
    if args.api_clients:
        smallest = min(results, key=lambda r: r["segments"])
        smallest["api_load"] = run_api_load(
            args.home, segments=smallest["segments"], clients=args.api_clients, log=print
        )
        for line in format_api_load(smallest["api_load"]):
            print(line)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
