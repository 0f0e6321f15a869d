"""``zhiku bench --store pgvector``: the same corpus on the embedded stores and on pgvector, each
with its ingest rate, index build, hybrid latency unfiltered and filtered, and filtered recall."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import create_engine, inspect

from zhiku.cli import main


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
            "hybrid",
            "hybrid_second_pass",
            "hybrid_filtered_10pct",
            "hybrid_filtered_1pct",
        }
        assert all(latency["p99"] >= latency["p50"] > 0 for latency in figures["latency_ms"].values())
        # 400 points: every filtered search admits fewer than exact_scan_max, and is exact
        recall = figures["filtered_semantic_recall@10"]
        assert recall == {"hybrid_filtered_10pct": 1.0, "hybrid_filtered_1pct": 1.0}
    assert "pgvector: ingest" in ran.stderr and "filtered_1pct: p50" in ran.stderr
    assert "hybrid_second_pass: p50" in ran.stderr
    engine = create_engine(pgvector_url)
    assert inspect(engine).get_table_names() == []  # the run's tables are dropped
    engine.dispose()


def test_the_embedded_stores_alone(tmp_path: Path) -> None:
    command = ["--home", str(tmp_path / "home"), "bench", "--store", "edge", "--segments", "200"]
    ran = CliRunner().invoke(main, [*command, "--queries", "6", "--json"])
    assert ran.exit_code == 0, ran.output
    result = json.loads(ran.stdout)
    assert set(result["stores"]) == {"edge"}
    assert set(result["stores"]["edge"]["filtered_semantic_recall@10"].values()) == {1.0}
