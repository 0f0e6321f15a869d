"""``zhiku dataset update`` and the JSON forms of ``dataset list|show``."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.fixtures.make_files import make_text

LONG_TEXT = " ".join(f"Sentence {i} says that tea number {i} grows on hill {i}." for i in range(40))


def test_update_then_show_reflects_it(run, run_json) -> None:  # type: ignore[no-untyped-def]
    run("dataset", "create", "tea", "--description", "old")
    before = run_json("dataset", "show", "tea")
    assert before["retrieval"]["top_k"] == 4 and before["documents"] == 0

    run(
        "dataset",
        "update",
        "tea",
        "--name",
        "teas",
        "--description",
        "Teas of China",
        "--method",
        "full_text",
        "--top-k",
        "7",
        "--threshold",
        "0.25",
        "--weights",
        "0.7,0.3",
        "--max-tokens",
        "64",
        "--chunk-overlap",
        "8",
        "--splitter",
        "fixed_separator",
        "--cleaners",
        "default",
    )
    run("dataset", "show", "tea", code=1)
    after = run_json("dataset", "show", "teas")
    assert after["id"] == before["id"] and after["name"] == "teas" and after["description"] == "Teas of China"
    retrieval, rule = after["retrieval"], after["process_rule"]
    assert retrieval["search_method"] == "full_text_search" and retrieval["top_k"] == 7
    assert retrieval["score_threshold"] == 0.25
    assert retrieval["reranking"]["weights"] == {"semantic": 0.7, "full_text": 0.3, "keyword": 0.1}
    assert (rule["max_tokens"], rule["chunk_overlap"], rule["splitter"]) == (64, 8, "fixed_separator")
    assert rule["cleaners"] == ["default"]
    assert [d["name"] for d in run_json("dataset", "list")["datasets"]] == ["teas"]

    cleared = run_json("dataset", "update", "teas", "--no-threshold")
    assert cleared["retrieval"]["score_threshold"] is None and cleared["retrieval"]["top_k"] == 7
    refused = run("dataset", "update", "teas", "--threshold", "2", code=2)
    assert "--threshold" in refused.output and "0<=x<=1" in refused.output.replace(" ", "")


def test_process_rule_changes_apply_to_documents_indexed_afterwards(run, run_json, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    first = make_text(tmp_path / "first.txt", LONG_TEXT)
    run("ingest", str(first), "--dataset", "tea", "--create")
    text = run("dataset", "update", "tea", "--max-tokens", "32", "--chunk-overlap", "0").output
    assert "applies to documents indexed from now on" in text
    second = make_text(tmp_path / "second.txt", LONG_TEXT.replace("tea", "herb"))
    run("ingest", str(second), "--dataset", "tea")
    counts = {
        d["name"]: d["segment_count"] for d in run_json("document", "list", "--dataset", "tea")["documents"]
    }
    assert counts["first.txt"] == 2  # split at 500 tokens when it was ingested
    assert counts["second.txt"] > 8


def test_update_refuses_bad_values_with_one_line(run) -> None:  # type: ignore[no-untyped-def]
    run("dataset", "create", "tea")
    run("dataset", "create", "coffee")
    clash = run("dataset", "update", "coffee", "--name", "tea", "--json", code=1)
    assert json.loads(clash.stdout)["error"]["code"] == "already_exists"
    splitter = run("dataset", "update", "tea", "--splitter", "no_such_splitter", code=1)
    assert splitter.stderr.strip().startswith("Error: unknown splitter 'no_such_splitter'; installed:")
    top_k = run("dataset", "update", "tea", "--top-k", "0", code=1)
    assert top_k.stderr.strip() == "Error: top_k: Input should be greater than or equal to 1"
    assert "want two numbers" in run("dataset", "update", "tea", "--weights", "0.5", code=2).output
    assert "nothing to change" in run("dataset", "update", "tea", code=2).output
    assert "no dataset 'nope'" in run("dataset", "update", "nope", "--top-k", "3", code=1).stderr


def test_rebuild_keywords_reports_the_points_rebuilt(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run("ingest", str(make_text(tmp_path / "tea.txt", LONG_TEXT)), "--dataset", "tea", "--create")
    result = run("dataset", "rebuild-keywords", "tea")
    found = re.search(r"rebuilt the keyword postings of (\d+) points of tea", result.output)
    assert found is not None and int(found.group(1)) > 0
    assert "(keyword " in run("search", "hill", "--dataset", "tea", "--method", "keyword").output
    run("dataset", "rebuild-keywords", "nothing", code=1)
