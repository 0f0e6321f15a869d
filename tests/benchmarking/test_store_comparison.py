"""``zhiku bench --store pgvector``: the same corpus on the embedded stores and on pgvector, each
with its ingest rate, index build, hybrid latency unfiltered and filtered, and filtered recall."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, inspect

from zhiku.cli import main
from zhiku.retrieval.dataset_search import DatasetSearch


def test_the_store_comparison_reports_each_backend_and_drops_what_it_built(
    tmp_path: Path, pgvector_url: str
) -> None:
    home = tmp_path / "home"
    command = ["--home", str(home), "bench", "--store", "pgvector", "--segments", "400", "--queries", "12"]
    ran = CliRunner().invoke(main, [*command, "--json"], env={"ZHIKU_PGVECTOR_URL": pgvector_url})
    assert ran.exit_code == 0, ran.output
    result = json.loads(ran.stdout)
    assert result["segments"] == 400 and set(result["stores"]) == {"edge", "pgvector"}
    for backend, figures in result["stores"].items():
        assert figures["ingest_chunks"] == 400 and figures["ingest_chunks_per_s"] > 0, backend
        assert set(figures["latency_ms"]) == {
            "hybrid_first_pass",
            "hybrid",
            "hybrid_filtered_10pct",
            "hybrid_filtered_1pct",
        }
        assert all(latency["p99"] >= latency["p50"] > 0 for latency in figures["latency_ms"].values())
        # 400 points: every filtered search admits fewer than exact_scan_max, and is exact
        recall = figures["filtered_semantic_recall@10"]
        assert recall == {"hybrid_filtered_10pct": 1.0, "hybrid_filtered_1pct": 1.0}
    assert "pgvector: ingest" in ran.stderr and "filtered_1pct: p50" in ran.stderr
    assert "hybrid_first_pass: p50" in ran.stderr
    ratios = result["p50_ratio_to_edge"]["pgvector"]
    assert set(ratios) == set(result["stores"]["edge"]["latency_ms"]) and min(ratios.values()) > 0
    edge, pgvector = (result["stores"][b]["latency_ms"]["hybrid"]["p50"] for b in ("edge", "pgvector"))
    assert ratios["hybrid"] == round(pgvector / edge, 2)
    assert f"pgvector p50 / edge p50: first_pass {ratios['hybrid_first_pass']}x, hybrid" in ran.stderr
    engine = create_engine(pgvector_url)
    assert inspect(engine).get_table_names() == []  # the run's tables are dropped
    engine.dispose()


def test_the_embedded_stores_alone_each_timed_pass_after_an_untimed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    searched: Counter[str] = Counter()
    fused_with_timings = DatasetSearch.fused_with_timings

    def counted(self: DatasetSearch, *args: Any, **kwargs: Any) -> Any:
        searched["filtered" if kwargs.get("scope") is not None else "unfiltered"] += 1
        return fused_with_timings(self, *args, **kwargs)

    monkeypatch.setattr(DatasetSearch, "fused_with_timings", counted)
    command = ["--home", str(tmp_path / "home"), "bench", "--store", "edge", "--segments", "200"]
    ran = CliRunner().invoke(main, [*command, "--queries", "6", "--json"])
    assert ran.exit_code == 0, ran.output
    result = json.loads(ran.stdout)
    assert set(result["stores"]) == {"edge"} and result["p50_ratio_to_edge"] == {}
    assert set(result["stores"]["edge"]["filtered_semantic_recall@10"].values()) == {1.0}
    # the first pass after 5 warm-up calls, then the unfiltered and both filters' passes each
    # after an untimed pass over the 6 queries
    assert searched == {"unfiltered": 5 + 6 + 2 * 6, "filtered": 2 * 2 * 6}
