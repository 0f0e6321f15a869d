"""The API load benchmark runs from a checkout against a real server and reports, for each client
count, latency, throughput and the CPU per call of each side (no timing asserted: a small size,
only that every figure is measured)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_each_figure_is_measured(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import api_load
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    result = api_load.run_api_load(tmp_path, segments=200, clients=(1, 2), requests=10)
    for count in ("1", "2"):
        row = result["clients"][count]
        for side in ("http", "in_process"):
            assert row[side]["requests_per_s"] > 0 and row[side]["cpu_ms_per_call"] >= 0, row
        assert row["http_over_in_process_throughput"] > 0
    lines = "\n".join(api_load.format_api_load(result))
    assert "CPU ms/call" in lines and "the rest = server" in lines
