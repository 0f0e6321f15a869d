"""``zhiku eval`` says on stderr when it resumes an interrupted index, reports what it served, and
with ``--strict`` refuses to score a corpus that did not index whole."""

from __future__ import annotations

import json
from pathlib import Path

from sqlalchemy import update

from tests.cli.conftest import Run
from tests.evaluation.test_runner import make_set
from zhiku import KnowledgeBase
from zhiku.core.db import DocumentRow


def test_eval_resumes_an_interrupted_index_and_says_so(run: Run, tmp_path: Path) -> None:
    root = make_set(tmp_path / "tiny")
    first = run("eval", str(root), "--method", "full_text", "--json")
    assert first.stderr == "" and json.loads(first.stdout)["info"]["action"] == "created"
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb, kb.sessions.begin() as session:
        dataset = kb.dataset("eval-tiny-passage")
        session.execute(
            update(DocumentRow)
            .where(DocumentRow.dataset_id == dataset.id, DocumentRow.name == "p3")
            .values(status="error", error="interrupted during indexing")
        )
    again = run("eval", str(root), "--method", "full_text", "--json")
    assert "resuming an incomplete index: 2 of 3 documents served, 1 not served" in again.stderr
    info = json.loads(again.stdout)["info"]
    assert info["action"] == "resumed" and info["complete"] is True and info["queries_scored"] == 2
    assert info["indexed"] == {"documents": 3, "documents_expected": 3, "segments": 3}
    text = run("eval", str(root), "--method", "full_text")
    assert "2 of 2 queries scored" in text.stdout
    assert "dataset eval-tiny-passage (reused): 3 of 3 documents served, 3 segments" in text.stdout


def test_eval_warns_about_documents_that_did_not_index_and_strict_refuses(run: Run, tmp_path: Path) -> None:
    root = make_set(tmp_path / "tiny", empty_doc=True)
    result = run("eval", str(root), "--mode", "document", "--method", "full_text", "--json")
    assert result.stderr.startswith("warning: eval-tiny-document serves 3 of 4 documents (1 not indexed")
    report = json.loads(result.stdout)
    assert report["info"]["errors"]["count"] == 1 and report["info"]["errors"]["first"][0]["name"] == "p4.txt"
    assert "full_text" in report["methods"]
    strict = run("eval", str(root), "--mode", "document", "--strict", "--json", code=1)
    error = json.loads(strict.stdout)["error"]
    assert error["code"] == "incomplete_index" and "nothing scored" in error["message"]
