"""The answer-overhead benchmark runs from a checkout and reports every series (no timing asserted)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_benchmark_reports_each_series(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import answer_overhead
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    result = answer_overhead.run(tmp_path, rounds=1)
    assert set(result["overhead_ms"]) == {
        "extractive",
        "extractive + memory",
        "extractive + intents",
        "llm, non-model work",
    }
    assert all(f["n"] == result["questions"] > 0 for f in result["overhead_ms"].values())
    lines = answer_overhead.report_lines(result)
    assert lines[1].startswith("  retrieve alone (baseline)") and len(lines) == 6
