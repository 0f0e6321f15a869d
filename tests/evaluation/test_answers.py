"""Answer scores: containment of a gold answer, citations checked against the judged passages."""

from __future__ import annotations

from pathlib import Path

from zhiku.answers.sources import Source
from zhiku.answers.types import Answer, Citation, QueryPlan
from zhiku.evaluation.answers import AnswerReport, evaluate_answers, normalise, score_one
from zhiku.evaluation.sets import load_eval_set


def _answer(text: str, cited: list[str], *, no_answer: bool = False) -> Answer:
    sources = [Source(i, f"s{i}", "d", name, "ds", 0, "text", 1.0) for i, name in enumerate(cited, start=1)]
    citations = [Citation(s.number, s.segment_id, s.document_name) for s in sources]
    return Answer(text, citations, sources, QueryPlan("q", "q", "q"), "extractive", no_answer=no_answer)


def test_scores_count_wrong_citations_and_partial_answers() -> None:
    report = AnswerReport("set", "extractive")
    score_one(report, _answer("Steep it for Four  minutes[1][2].", ["p2", "p9"]), ["four minutes."], {"p2"})
    score_one(report, _answer("没有找到[1]", ["p9"]), ["八十度的水"], {"p1"})
    score_one(report, _answer("Nothing found.", [], no_answer=True), ["x"], {"p1"})
    result = report.to_json()
    assert result["answer_contains"] == round(1 / 3, 4)
    assert result["citation_precision"] == round(1 / 3, 4)  # p2 of p2, p9, p9
    assert result["citation_recall"] == 0.5 and result["answered"] == round(2 / 3, 4)
    assert normalise("Ａ，b  C。") == "abc"


def test_foreign_questions_count_by_whether_they_get_not_found(tmp_path: Path) -> None:
    root = tmp_path / "set"
    root.mkdir()
    passage = '{"_id": "p1", "title": "", "text": "x", "doc": "p1"}\n'
    (root / "corpus.jsonl").write_text(passage, encoding="utf-8")
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "what?"}\n', encoding="utf-8")
    (root / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tp1\t1\n", encoding="utf-8")
    (root / "answers.jsonl").write_text('{"_id": "q1", "answers": ["x"], "doc": "p1"}\n', encoding="utf-8")
    answered = {"what?": _answer("x[1]", ["p1"]), "off 1": _answer("no", [], no_answer=True)}
    answered["off 2"] = _answer("a bluff[1]", ["p9"])
    report = evaluate_answers(
        load_eval_set(root),
        lambda question: answered[question],
        answerer="extractive",
        foreign=[("o/1", "off 1"), ("o/2", "off 2")],
    ).to_json()
    assert report["foreign_questions"] == 2 and report["foreign_not_found"] == 0.5
    assert report["answer_contains"] == 1.0 and report["queries"] == 1
