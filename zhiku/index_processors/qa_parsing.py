"""Parsing an LLM's question/answer pairs, tolerant of the forms models actually write.

Accepted markers, each at the start of a line (after optional list numbering or Markdown bold):
``Q1:``/``A1:``, ``Q:``/``A:``, ``Question 1:``/``Answer 1:``, ``问：``/``答：``, ``问题1：``/
``答案1：``, with ASCII or full-width colons. An answer runs until the next marker or a blank
line; text after a blank line that starts no marker (a model's closing remark) is not part of
any answer. A question without an answer, or an answer without a question, is reported, never
paired by guesswork.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_MARKER = re.compile(
    r"""^\s*(?:[-*]\s*)?(?:\d+[.)、]\s*)?(?:\*\*|__)?
    (?P<kind>Q|A|Question|Answer|问题|问|答案|答)
    \s*(?P<number>\d+)?\s*(?:\*\*|__)?\s*[:：](?:\*\*|__)?\s*(?P<text>.*)$""",
    re.X | re.I,
)
_QUESTION_KINDS = {"q", "question", "问题", "问"}


@dataclass(frozen=True)
class QAPair:
    question: str
    answer: str


@dataclass
class ParsedPairs:
    pairs: list[QAPair] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def parse_qa_pairs(text: str) -> ParsedPairs:
    """Pairs in the order written, and a note for every marker that could not be paired."""
    result = ParsedPairs()
    question: str | None = None
    current: list[str] | None = None  # lines of the entry being read
    current_kind: str | None = None

    def finish() -> None:
        nonlocal question, current, current_kind
        if current is not None:
            question = _read_entry(result, question, current_kind == "q", "\n".join(current).strip())
        current, current_kind = None, None

    for line in text.splitlines():
        match = _MARKER.match(line)
        if match:
            finish()
            current_kind = "q" if match["kind"].casefold() in _QUESTION_KINDS else "a"
            current = [match["text"].strip()]
        elif not line.strip():
            finish()
        elif current is not None:
            current.append(line.strip())
    finish()
    if question is not None:
        result.problems.append(f"question without an answer: {question[:80]}")
    return result


def _read_entry(result: ParsedPairs, question: str | None, is_question: bool, body: str) -> str | None:
    """Record the entry just read (a pair or a problem) in ``result``; the question still
    waiting for its answer afterwards."""
    if is_question:
        if question is not None:
            result.problems.append(f"question without an answer: {question[:80]}")
        if not body:
            result.problems.append("an empty question")
        return body or None
    if question is None:
        result.problems.append(f"answer without a question: {body[:80]}")
    elif not body:
        result.problems.append(f"question with an empty answer: {question[:80]}")
    else:
        result.pairs.append(QAPair(question, body))
    return None
