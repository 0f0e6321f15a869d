"""The ``zhiku`` command line end to end, on a temp data directory with the fast ``use`` model."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fixtures.make_files import make_pdf, make_text

PASSAGES = [
    ("p1", "Green tea", "Green tea is brewed at 80 degrees Celsius for two minutes.", "d1"),
    ("p2", "Black tea", "Black tea is fully oxidised and brewed with boiling water.", "d2"),
    ("p3", "", "普洱茶适合长期存放，需要通风并避免阳光直射。", "d3"),
    ("p4", "", "乌龙茶是半发酵茶，铁观音产自福建安溪。", "d4"),
    ("p5", "Shipping", "Orders placed before 4 pm ship the same day.", "d5"),
]
QUERIES = [
    ("q1", "How hot should the water be for green tea?", "p1"),
    ("q2", "铁观音产自哪里？", "p4"),
    ("q3", "普洱茶怎么存放", "p3"),
]


def _eval_set(root: Path) -> Path:
    (root / "docs").mkdir(parents=True)
    with (root / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        for pid, title, text, doc in PASSAGES:
            handle.write(
                json.dumps({"_id": pid, "title": title, "text": text, "doc": doc}, ensure_ascii=False) + "\n"
            )
            (root / "docs" / f"{doc}.txt").write_text(f"{title or doc}\n\n{text}\n", encoding="utf-8")
    with (root / "queries.jsonl").open("w", encoding="utf-8") as handle:
        for qid, text, _ in QUERIES:
            handle.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
    (root / "qrels.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{p}\t1\n" for q, _, p in QUERIES), encoding="utf-8"
    )
    docs = {pid: doc for pid, _, _, doc in PASSAGES}
    (root / "qrels_docs.tsv").write_text(
        "query-id\tdoc\tscore\n" + "".join(f"{q}\t{docs[p]}\t1\n" for q, _, p in QUERIES), encoding="utf-8"
    )
    return root


def test_dataset_ingest_search_delete(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run("init")
    assert "created dataset handbook" in run("dataset", "create", "handbook", "--description", "tea").output
    good = make_pdf(tmp_path / "policy.pdf", ["未开封的茶叶在收货后十四天内可以退货。"])
    notes = make_text(tmp_path / "notes.md", "# Shipping\n\nOrders placed before 4 pm ship the same day.\n")
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.5 nothing else")
    result = run("ingest", str(good), str(notes), str(bad), "--dataset", "handbook", code=None)
    assert result.exit_code == 1
    assert "broken.pdf" in result.output and "2 indexed, 1 failed" in result.output

    hits = json.loads(run("search", "退货", "--dataset", "handbook", "--json").output)
    assert hits[0]["document_name"] == "policy.pdf"
    text = run("search", "ship same day", "--dataset", "handbook", "--method", "full_text").output
    assert text.startswith("1.") and "notes.md" in text
    assert "handbook" in run("dataset", "list").output
    shown = run("dataset", "show", "handbook").output
    assert "error" in shown and "broken.pdf" in shown
    run("dataset", "delete", "handbook", "--yes")
    assert "handbook" not in run("dataset", "list").output


def test_unknown_dataset_is_a_clear_error(run) -> None:  # type: ignore[no-untyped-def]
    result = run("search", "anything", "--dataset", "missing", code=None)
    assert result.exit_code != 0 and "no dataset 'missing'" in result.output


def test_eval_json_in_both_modes(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root = _eval_set(tmp_path / "tiny")
    for mode in ("passage", "document"):
        report = json.loads(run("eval", str(root), "--mode", mode, "--json").output)
        assert report["set"] == "tiny" and report["mode"] == mode
        assert set(report["methods"]) == {"semantic", "full_text", "keyword", "hybrid"}
        for scores in report["methods"].values():
            assert {"recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10"} <= set(scores)
        assert report["methods"]["full_text"]["recall@5"] == 1.0
        assert report["methods"]["hybrid"]["ndcg@10"] > 0.5
    # a second run reuses the ingested dataset
    again = json.loads(run("eval", str(root), "--json", "--method", "hybrid").output)
    assert again["info"]["reused"] is True


def _split_set(root: Path, name: str, keep: set[str]) -> Path:
    """A copy of the tiny set holding only the passages ``keep`` and their queries."""
    target = root / name
    target.mkdir(parents=True)
    (target / "README.md").write_text(f"# {name}\n\nTea notes ({name}).\n", encoding="utf-8")
    with (target / "corpus.jsonl").open("w", encoding="utf-8") as handle:
        for pid, title, text, doc in PASSAGES:
            if pid in keep:
                handle.write(json.dumps({"_id": pid, "title": title, "text": text, "doc": doc}) + "\n")
    wanted = [(q, text, p) for q, text, p in QUERIES if p in keep]
    with (target / "queries.jsonl").open("w", encoding="utf-8") as handle:
        for qid, text, _ in wanted:
            handle.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
    (target / "qrels.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{p}\t1\n" for q, _, p in wanted), encoding="utf-8"
    )
    return target


def test_eval_routing_json_and_routed_search(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    english = _split_set(tmp_path, "english", {"p1", "p2", "p5"})
    chinese = _split_set(tmp_path, "chinese", {"p3", "p4"})
    report = json.loads(
        run(
            "eval-routing",
            str(english),
            str(chinese),
            "--describe",
            "chinese=中文茶叶知识：普洱茶、乌龙茶",
            "--json",
        ).output
    )
    assert set(report["sets"]) == {"english", "chinese"}
    assert 0.0 <= report["routers"]["embedding"]["accuracy"] <= 1.0
    assert report["routers"]["embedding"]["accuracy"] >= 2 / 3
    assert 0.0 <= report["multiple"]["ndcg@10"] <= 1.0
    assert report["single_dataset"]["ndcg@10"] > 0.5
    assert "中文茶叶知识" in run("dataset", "show", "chinese").output

    routed = run("search", "铁观音产自哪里？", "--routing", "single").output
    assert routed.startswith("single routing: searched chinese")
    assert "p4" in routed.splitlines()[1]
    merged = run("search", "How hot for green tea?", "--dataset", "english", "--dataset", "chinese").output
    assert merged.startswith("multiple routing: searched english, chinese")
    bad = run("search", "x", "--routing", "single", "--router", "function_call", code=None)
    assert bad.exit_code != 0 and "ZHIKU_LLM_BASE_URL" in bad.output


def test_qa_csv_ingest_shows_answers_and_retry_reports_nothing_to_do(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    faq = tmp_path / "faq.csv"
    faq.write_text("question,answer\n普洱茶怎么存放？,通风、避光。\n", encoding="utf-8")
    run("dataset", "create", "faq", "--doc-form", "qa_model")
    assert "1 indexed, 0 failed" in run("ingest", str(faq), "--dataset", "faq", "--qa-csv").output
    output = run("search", "普洱茶如何保存", "--dataset", "faq").output
    assert "→ 通风、避光。" in output
    result = run("retry", "faq.csv", "--dataset", "faq", code=None)
    assert result.exit_code != 0 and "nothing to retry" in result.output
