"""Answer quality on a SQuAD-style set: does the answer hold a gold answer, and are its citations
the passages the question was judged against?

- ``answer_contains``: share of questions whose answer, normalised, contains a gold answer
  (SQuAD's extractive yardstick; strict for long gold answers).
- ``answer_recall``: mean share of a gold answer's words (Chinese: characters) found in the answer,
  best over the gold answers — the fair measure when gold answers are whole sentences.
- ``citation_precision``: share of cited sources that are judged relevant to the question.
- ``citation_recall``: share of answered questions citing at least one relevant source.
- ``answered``: share of questions not answered with "nothing found" or a refusal.
- ``foreign_not_found``: share of questions taken from other sets (which this corpus cannot
  answer) that are answered "not found" — the answerer's honesty, next to its usefulness above.

Sources are matched to judgements by document name, which passage-mode ingest sets to the
passage id.
"""

from __future__ import annotations

import re
import statistics
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from zhiku.answers.citations import strip_markers
from zhiku.answers.types import Answer
from zhiku.evaluation.sets import EvalSet

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[a-z0-9]+")


@dataclass
class AnswerReport:
    set_name: str
    answerer: str
    queries: int = 0
    contains: int = 0
    recall_sum: float = 0.0
    answered: int = 0
    cited: int = 0
    cited_relevant: int = 0
    answered_citing_relevant: int = 0
    foreign: int = 0
    foreign_not_found: int = 0
    latencies_ms: list[float] = field(default_factory=list)

    def _foreign_json(self) -> dict[str, Any]:
        return {
            "foreign_questions": self.foreign,
            "foreign_not_found": round(self.foreign_not_found / self.foreign, 4),
        }

    def to_json(self) -> dict[str, Any]:
        def share(part: float, whole: int) -> float:
            return round(part / whole, 4) if whole else 0.0

        return {
            "set": self.set_name,
            "answerer": self.answerer,
            "queries": self.queries,
            "answer_contains": share(self.contains, self.queries),
            "answer_recall": share(self.recall_sum, self.queries),
            "citation_precision": share(self.cited_relevant, self.cited),
            "citation_recall": share(self.answered_citing_relevant, self.answered),
            "answered": share(self.answered, self.queries),
            **(self._foreign_json() if self.foreign else {}),
            "ms_per_query": round(statistics.median(self.latencies_ms), 1) if self.latencies_ms else 0.0,
        }


def evaluate_answers(
    eval_set: EvalSet,
    ask: Callable[[str], Answer],
    *,
    answerer: str,
    limit: int | None = None,
    on_progress: Callable[[str, int, int], None] | None = None,
    foreign: Sequence[tuple[str, str]] = (),
) -> AnswerReport:
    """Ask every judged question that has gold answers (the first ``limit``) and score the
    answers; ``ms_per_query`` is the median time of one ``ask``. ``foreign`` questions
    (``(id, text)``, from other sets) are asked too and counted by whether they get "not found"."""
    questions = [(qid, text) for qid, text in eval_set.queries.items() if eval_set.answers.get(qid)]
    if limit is not None:
        questions = questions[: max(0, limit)]
    report = AnswerReport(eval_set.name, answerer)
    for done, (qid, question) in enumerate(questions, start=1):
        started = time.perf_counter()
        answer = ask(question)
        report.latencies_ms.append((time.perf_counter() - started) * 1000.0)
        score_one(report, answer, eval_set.answers[qid], eval_set.qrels.get(qid, set()))
        if on_progress is not None:
            on_progress(qid, done, len(questions))
    for _, question in foreign:
        report.foreign += 1
        if ask(question).no_answer:
            report.foreign_not_found += 1
    return report


def score_one(report: AnswerReport, answer: Answer, gold: list[str], relevant: set[str]) -> None:
    """Add one answer's scores to ``report``."""
    report.queries += 1
    text = normalise(strip_markers(answer.text))
    if any(normalise(g) and normalise(g) in text for g in gold):
        report.contains += 1
    report.recall_sum += max((_coverage(g, answer.text) for g in gold), default=0.0)
    if answer.no_answer:
        return
    report.answered += 1
    cited = answer.cited_sources
    relevant_cited = sum(1 for source in cited if source.document_name in relevant)
    report.cited += len(cited)
    report.cited_relevant += relevant_cited
    if relevant_cited:
        report.answered_citing_relevant += 1


def normalise(text: str) -> str:
    """NFKC, lower-cased, without whitespace and punctuation (SQuAD's normalisation, CJK-safe)."""
    folded = unicodedata.normalize("NFKC", text).lower()
    return "".join(ch for ch in folded if ch.isalnum())


def _units(text: str) -> list[str]:
    """Words of Latin text and single characters of Chinese text."""
    folded = unicodedata.normalize("NFKC", strip_markers(text)).lower()
    return _CJK.findall(folded) + _WORD.findall(folded)


def _coverage(gold: str, answer: str) -> float:
    wanted = _units(gold)
    if not wanted:
        return 0.0
    have = set(_units(answer))
    return sum(1 for unit in wanted if unit in have) / len(wanted)
