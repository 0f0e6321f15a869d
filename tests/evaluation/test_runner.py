"""The eval never scores a half-indexed corpus: it rebuilds an interrupted one, refuses a broken one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import update

from zhiku import KnowledgeBase
from zhiku.core.db import DocumentRow
from zhiku.core.errors import ZhikuError
from zhiku.evaluation.runner import evaluate
from zhiku.evaluation.sets import load_eval_set

PASSAGES = {
    "p1": "绿茶用八十度左右的水冲泡，时间两分钟。",
    "p2": "Black tea is steeped with boiling water for four minutes.",
    "p3": "乌龙茶可以反复冲泡五到七次。",
}
QUERIES = {"q1": ("绿茶用多少度的水？", "p1"), "q2": ("how long to steep black tea", "p2")}


def make_set(root: Path, *, empty_doc: bool = False) -> Path:
    root.mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": p, "title": "", "text": t, "doc": p}) + "\n" for p, t in PASSAGES.items()),
        encoding="utf-8",
    )
    (root / "queries.jsonl").write_text(
        "".join(
            json.dumps({"_id": q, "text": t}, ensure_ascii=False) + "\n" for q, (t, _) in QUERIES.items()
        ),
        encoding="utf-8",
    )
    (root / "qrels.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{p}\t1\n" for q, (_, p) in QUERIES.items()),
        encoding="utf-8",
    )
    docs = root / "docs"
    docs.mkdir()
    for pid, text in PASSAGES.items():
        (docs / f"{pid}.txt").write_text(text, encoding="utf-8")
    if empty_doc:
        (docs / "p4.txt").write_bytes(b"")
    return root


def test_an_interrupted_corpus_is_rebuilt_not_scored(tmp_path: Path) -> None:
    eval_set = load_eval_set(make_set(tmp_path / "tiny"), None)
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        first = evaluate(kb, eval_set, methods=["full_text"])
        assert first.info["passages_indexed"] == 3 and first.info["reused"] is False
        dataset = kb.dataset("eval-tiny-passage")
        with kb.sessions.begin() as session:  # what a killed run leaves behind
            session.execute(
                update(DocumentRow)
                .where(DocumentRow.dataset_id == dataset.id, DocumentRow.name == "p3")
                .values(status="error", error="interrupted during indexing")
            )
        again = evaluate(kb, eval_set, methods=["full_text"])
        assert again.info["reused"] is False and again.info["passages_indexed"] == 3
        assert again.methods["full_text"] == {
            **first.methods["full_text"],
            "ms_per_query": pytest.approx(again.methods["full_text"]["ms_per_query"]),
        }
        assert evaluate(kb, eval_set, methods=["full_text"]).info["reused"] is True


def test_a_corpus_that_does_not_index_whole_is_refused(tmp_path: Path) -> None:
    eval_set = load_eval_set(make_set(tmp_path / "tiny", empty_doc=True), None)
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        with pytest.raises(ZhikuError, match=r"1 of 4 documents .* did not index \(first: p4.txt, error"):
            evaluate(kb, eval_set, "document", methods=["full_text"])
