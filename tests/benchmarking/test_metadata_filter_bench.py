"""The metadata filter benchmark runs from a checkout and reports each filter (no timing asserted)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_benchmark_reports_each_filter_both_ways(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import metadata_filter
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    result = metadata_filter.run(tmp_path, documents=200, rounds=3, block=2)
    assert set(result["filters"]) == {"10%", "1%", "90%"}
    assert all(set(variants) == {"table", "json"} for variants in result["filters"].values())
    lines = metadata_filter.report_lines(result)
    assert lines[0].startswith("metadata filter at 200 documents") and len(lines) == 4
