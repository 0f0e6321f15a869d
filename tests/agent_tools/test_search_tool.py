"""``kb_search`` keeps its promises on a real index: never more than ``max_chars``, nothing under
``min_score``, snippets cut at sentence boundaries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from zhiku import KnowledgeBase
from zhiku.agent_tools.search_tool import KB_SEARCH_TOOL, KbSearchArgs, cut_at_sentence, kb_search

LEAVE = (
    "员工每年享有十五天带薪年假。年假需要提前两周向主管提交申请。未休完的年假可以顺延到次年三月。"
    "病假需要提供医院证明。事假每年不超过十天。"
)
OFFICE = "The Shanghai office opens at 9am. It closes at 6pm on weekdays. Visitors sign in at the desk."


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[KnowledgeBase]:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as knowledge_base:
        dataset = knowledge_base.create_dataset("handbook")
        dataset.add_text("leave.md", LEAVE)
        dataset.add_text("office.md", OFFICE)
        yield knowledge_base


def search_in(kb: KnowledgeBase, threshold: float | None = 0.0):  # type: ignore[no-untyped-def]
    """The tool's search; with no threshold by default, so both passages come back whatever the
    question (the budget and ``min_score`` are what these tests look at)."""
    return lambda query, datasets, top_k: kb.retrieve(
        query, datasets=datasets, top_k=top_k, score_threshold=threshold
    ).hits


def test_an_off_topic_question_gets_no_snippet_under_the_default_threshold(kb: KnowledgeBase) -> None:
    """An agent sees "the knowledge base has nothing on this" and can do something else."""
    off_topic = kb_search(search_in(kb, None), KbSearchArgs(query="How many moons does Mars have?"))
    assert off_topic.snippets == []
    on_topic = kb_search(search_in(kb, None), KbSearchArgs(query="When does the Shanghai office open?"))
    assert [s.document_name for s in on_topic.snippets] == ["office.md"]
    assert 0.0 < on_topic.snippets[0].score <= 1.0


def test_snippets_fit_the_budget_and_end_at_a_sentence(kb: KnowledgeBase) -> None:
    whole = kb_search(search_in(kb), KbSearchArgs(query="年假", max_chars=5000))
    assert whole.snippets[0].document_name == "leave.md" and not whole.snippets[0].truncated
    assert whole.snippets[0].text == LEAVE and whole.snippets[0].position == 1

    cut = kb_search(search_in(kb), KbSearchArgs(query="年假", max_chars=40))
    assert cut.total_chars <= 40 and cut.total_chars == sum(len(s.text) for s in cut.snippets)
    first = cut.snippets[0]
    assert first.truncated and first.text == "员工每年享有十五天带薪年假。年假需要提前两周向主管提交申请。…"
    assert cut.over_budget >= 1  # the office snippet had no room left
    assert set(first.scores) <= {"semantic", "full_text", "keyword"} and first.scores


def test_nothing_under_min_score(kb: KnowledgeBase) -> None:
    every = kb_search(search_in(kb), KbSearchArgs(query="Shanghai office hours", min_score=0.0))
    scores = sorted(s.score for s in every.snippets)
    assert len(scores) == 2
    strict = kb_search(search_in(kb), KbSearchArgs(query="Shanghai office hours", min_score=scores[-1]))
    assert [s.document_name for s in strict.snippets] == ["office.md"] and strict.below_min_score == 1


def test_a_first_sentence_longer_than_the_budget_is_cut_mid_sentence() -> None:
    assert cut_at_sentence("一" * 100 + "。", 41) == "一" * 40 + "…"
    assert cut_at_sentence("short. text", 39) == ""


def test_bad_arguments_are_refused_by_name() -> None:
    with pytest.raises(ValidationError, match="max_chars"):
        KbSearchArgs(query="x", max_chars=10)
    with pytest.raises(ValidationError, match="top_k"):
        KbSearchArgs(query="x", top_k=0)
    assert KB_SEARCH_TOOL["function"]["parameters"]["required"] == ["query"]
