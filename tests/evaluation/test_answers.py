"""Answer scores: containment of a gold answer, citations checked against the judged passages."""

from __future__ import annotations

from zhiku.answers.sources import Source
from zhiku.answers.types import Answer, Citation, QueryPlan
from zhiku.evaluation.answers import AnswerReport, normalise, score_one


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
