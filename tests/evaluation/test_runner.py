"""The eval never scores a half-indexed corpus silently: it resumes an interrupted one, and counts
and warns about documents that still fail (or refuses them when strict)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import func, select, update

from zhiku import KnowledgeBase
from zhiku.core.db import DocumentRow
from zhiku.core.db.models import EmbeddingCacheRow
from zhiku.evaluation.runner import IncompleteIndex, evaluate
from zhiku.evaluation.sets import load_eval_set
from zhiku.knowledge_base.indexing.ingestion import Ingestion

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


class Killed(BaseException):
    """What a killed process leaves: the run stops between creating documents and writing them."""


def _documents(kb: KnowledgeBase, name: str) -> dict[str, tuple[str, str]]:
    """Document name → (id, status) in the dataset ``name``."""
    return {doc.name: (doc.id, doc.status) for doc in kb.dataset(name).documents()}


def test_a_killed_ingest_is_resumed_on_the_next_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    eval_set = load_eval_set(make_set(tmp_path / "tiny"), None)
    home = tmp_path / "home"

    def killed(self: Ingestion) -> None:
        raise Killed

    with monkeypatch.context() as patch, KnowledgeBase.open(home, embedding_model="use") as kb:
        patch.setattr(Ingestion, "_write", killed)
        with pytest.raises(Killed):
            evaluate(kb, eval_set, methods=["full_text"])
        assert {status for _, status in _documents(kb, "eval-tiny-passage").values()} == {"indexing"}
    notices: list[str] = []
    with KnowledgeBase.open(home, embedding_model="use") as kb:  # recovery marks them failed
        assert {s for _, s in _documents(kb, "eval-tiny-passage").values()} == {"error"}
        report = evaluate(kb, eval_set, methods=["full_text"], on_notice=notices.append)
        assert report.info["action"] == "resumed" and report.info["complete"] is True
        assert report.info["indexed"] == {"documents": 3, "documents_expected": 3, "segments": 3}
        assert report.info["errors"] == {"count": 0, "first": []}
        assert report.info["queries_scored"] == 2 and report.methods["full_text"]["recall@10"] == 1.0
        assert notices == [
            "eval-tiny-passage: resuming an incomplete index: 0 of 3 documents served, "
            "3 not served (dropped), 3 to index"
        ]
        again = evaluate(kb, eval_set, methods=["full_text"], on_notice=notices.append)
        assert again.info["action"] == "reused" and again.info["reused"] is True and len(notices) == 1


def test_a_dataset_cut_as_an_older_version_cut_text_is_rebuilt_and_says_why(tmp_path: Path) -> None:
    eval_set = load_eval_set(make_set(tmp_path / "tiny"), None)
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        kb.create_dataset("eval-tiny-passage", han_bigrams=False)  # as before character pairs
        first = evaluate(kb, eval_set, methods=["full_text"])
        assert first.info["action"] == (
            "rebuilt (made without Chinese character pairs in BM25, unlike a new dataset)"
        )
        assert kb.dataset("eval-tiny-passage").tokenizer_settings["han_bigrams"] is True
        assert evaluate(kb, eval_set, methods=["full_text"]).info["action"] == "reused"
        kb.delete_dataset("eval-tiny-passage")
        kb.create_dataset("eval-tiny-passage", stemmer=None)
        assert evaluate(kb, eval_set, methods=["full_text"]).info["action"] == (
            "rebuilt (made with stemmer None, a new dataset's is plural)"
        )


def test_resuming_keeps_served_documents_and_embeds_nothing_again(tmp_path: Path) -> None:
    eval_set = load_eval_set(make_set(tmp_path / "tiny"), None)
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        first = evaluate(kb, eval_set, methods=["full_text", "semantic"])
        dataset = kb.dataset("eval-tiny-passage")
        before = _documents(kb, dataset.name)
        with kb.sessions() as session:
            cached = session.scalar(select(func.count()).select_from(EmbeddingCacheRow))
        dataset.delete_document(before["p2"][0])  # a passage the killed run never reached
        with kb.sessions.begin() as session:  # and one it was writing
            session.execute(
                update(DocumentRow)
                .where(DocumentRow.id == before["p3"][0])
                .values(status="error", error="interrupted during indexing")
            )
        notices: list[str] = []
        again = evaluate(kb, eval_set, methods=["full_text", "semantic"], on_notice=notices.append)
        assert again.info["action"] == "resumed" and again.info["complete"] is True
        assert notices and "1 of 3 documents served, 1 not served (dropped), 2 to index" in notices[0]
        after = _documents(kb, dataset.name)
        assert after["p1"] == before["p1"] and after["p2"][0] != before["p2"][0]
        assert {status for _, status in after.values()} == {"completed"}
        with kb.sessions() as session:  # the passages indexed again came from the embedding cache
            assert session.scalar(select(func.count()).select_from(EmbeddingCacheRow)) == cached
        for method in ("full_text", "semantic"):
            assert {k: v for k, v in again.methods[method].items() if k != "ms_per_query"} == {
                k: v for k, v in first.methods[method].items() if k != "ms_per_query"
            }


def test_a_document_whose_segments_do_not_match_its_count_is_indexed_again(tmp_path: Path) -> None:
    eval_set = load_eval_set(make_set(tmp_path / "tiny"), None)
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        evaluate(kb, eval_set, methods=["full_text"])
        before = _documents(kb, "eval-tiny-passage")
        with kb.sessions.begin() as session:
            session.execute(
                update(DocumentRow).where(DocumentRow.id == before["p1"][0]).values(segment_count=2)
            )
        again = evaluate(kb, eval_set, methods=["full_text"])
        assert again.info["action"] == "resumed" and again.info["indexed"]["documents"] == 3
        after = _documents(kb, "eval-tiny-passage")
        assert after["p1"][0] != before["p1"][0] and after["p2"] == before["p2"]


def test_documents_that_still_fail_are_counted_and_warned_about(tmp_path: Path) -> None:
    root = make_set(tmp_path / "tiny", empty_doc=True)
    (root / "qrels_docs.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{p}\t1\n" for q, (_, p) in QUERIES.items()),
        encoding="utf-8",
    )
    eval_set = load_eval_set(root, None)
    notices: list[str] = []
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        report = evaluate(kb, eval_set, "document", methods=["full_text"], on_notice=notices.append)
        assert report.info["complete"] is False
        assert report.info["indexed"] == {"documents": 3, "documents_expected": 4, "segments": 3}
        assert report.info["errors"]["count"] == 1
        assert report.info["errors"]["first"][0]["name"] == "p4.txt"
        assert report.info["errors"]["first"][0]["status"] == "error"
        assert report.info["queries_scored"] == 2
        assert report.methods["full_text"]["recall@5"] == 1.0  # the served documents are scored
        assert len(notices) == 1
        assert notices[0].startswith("warning: eval-tiny-document serves 3 of 4 documents (1 not indexed")
        with pytest.raises(IncompleteIndex, match=r"serves 3 of 4 documents .*first: p4.txt.*nothing scored"):
            evaluate(kb, eval_set, "document", methods=["full_text"], strict=True)
