"""Relevance on a real knowledge base: one meaning for every method, a threshold that is a promise,
"nothing relevant" as an answer."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from zhiku import KnowledgeBase
from zhiku.core.retrieval_config import DEFAULT_SCORE_THRESHOLD, RetrievalConfig
from zhiku.knowledge_base import Dataset

TEA = [
    ("longjing.txt", "龙井是杭州出产的绿茶，用八十度左右的水冲泡两分钟。"),
    ("black.txt", "Black tea is fully oxidised; steep it in boiling water for four minutes."),
    ("oolong.txt", "乌龙茶是半发酵茶，可以反复冲泡五到七次。"),
]
METHODS = {
    "hybrid_search": {"cosine", "lexical"},
    "semantic_search": {"cosine"},
    "full_text_search": {"lexical"},
    "keyword_search": {"lexical"},  # BM25 is read beside the keyword postings as evidence
}
OFF_TOPIC = ["What is the capital of France?", "火星有几个卫星？", "How do I reset my router password?"]


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[KnowledgeBase]:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as knowledge_base:
        yield knowledge_base


@pytest.fixture
def tea(kb: KnowledgeBase) -> Dataset:
    dataset = kb.create_dataset("tea")
    for name, text in TEA:
        dataset.add_text(name, text)
    return dataset


@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_scores_relevance_in_0_1_from_its_evidence(tea: Dataset, method: str) -> None:
    hits = tea.search("How long should black tea steep?", search_method=method, score_threshold=None)
    assert hits
    for hit in hits:
        assert 0.0 <= hit.score <= 1.0 and math.isfinite(hit.score)
        assert set(hit.evidence) == METHODS[method]
        assert hit.fusion_score is not None
    best = max(hits, key=lambda hit: hit.score)
    assert best.document_name == "black.txt"


def test_the_same_evidence_scores_the_same_whatever_the_other_hits(kb: KnowledgeBase, tea: Dataset) -> None:
    """A hit's relevance does not depend on the other hits of the query (fusion scores do)."""
    alone = kb.create_dataset("alone")
    alone.add_text("black.txt", TEA[1][1])
    question = "How long should black tea steep?"
    in_tea = next(h for h in tea.search(question, score_threshold=None) if h.document_name == "black.txt")
    (by_itself,) = alone.search(question, search_method="semantic_search", score_threshold=None)
    semantic = next(
        h for h in tea.search(question, search_method="semantic_search", score_threshold=None)
        if h.document_name == "black.txt"
    )
    assert by_itself.evidence["cosine"] == pytest.approx(in_tea.evidence["cosine"], abs=1e-6)
    assert by_itself.score == pytest.approx(semantic.score, abs=1e-9)
    assert by_itself.fusion_score == pytest.approx(semantic.fusion_score, abs=1e-6)


@pytest.mark.parametrize("question", OFF_TOPIC)
def test_an_off_topic_question_finds_nothing_under_the_default_threshold(tea: Dataset, question: str) -> None:
    """The default (hybrid) search abstains; one kind of evidence alone is weaker (a calibrated
    model of a cosine alone never goes as low), so single methods score their hits low instead."""
    assert tea.retrieval.score_threshold == DEFAULT_SCORE_THRESHOLD
    assert tea.search(question) == []
    every = tea.search(question, score_threshold=None)
    assert every and all(hit.score < DEFAULT_SCORE_THRESHOLD for hit in every)
    for method in METHODS:
        assert all(hit.score < 0.02 for hit in tea.search(question, search_method=method)), method


def test_a_threshold_is_a_promise(tea: Dataset) -> None:
    every = tea.search("绿茶怎么泡？", score_threshold=None, top_k=10)
    scores = sorted(hit.score for hit in every)
    middle = scores[len(scores) // 2]
    kept = tea.search("绿茶怎么泡？", score_threshold=middle, top_k=10)
    assert kept and all(hit.score >= middle for hit in kept)
    assert {hit.segment_id for hit in kept} == {hit.segment_id for hit in every if hit.score >= middle}


def test_parent_child_hits_and_their_children_are_scored_by_relevance(kb: KnowledgeBase) -> None:
    rule = {"doc_form": "hierarchical_model", "max_tokens": 120, "chunk_overlap": 0, "child_max_tokens": 16}
    book = kb.create_dataset("book", process_rule=rule)
    book.add_text("tea.txt", "\n\n".join(text for _, text in TEA))
    hits = book.search("How long should black tea steep?", score_threshold=None)
    assert hits and all(0.0 <= hit.score <= 1.0 for hit in hits)
    children = [child for hit in hits for child in hit.child_chunks]
    assert children and all(0.0 <= child.score <= 1.0 for child in children)


@pytest.mark.parametrize("query", ["", "   ", "？！。，", "the of and"])
def test_empty_punctuation_and_stop_word_queries_find_nothing_without_error(tea: Dataset, query: str) -> None:
    assert tea.search(query) == []


def test_an_empty_dataset_finds_nothing(kb: KnowledgeBase) -> None:
    empty = kb.create_dataset("empty")
    assert empty.search("green tea", score_threshold=None) == []
    assert kb.retrieve("green tea").hits == []


@pytest.mark.parametrize("threshold", [-0.1, 1.5, float("nan"), float("inf")])
def test_a_threshold_outside_0_1_is_refused(threshold: float) -> None:
    with pytest.raises(ValidationError, match="score_threshold"):
        RetrievalConfig(score_threshold=threshold)


def test_scores_serialise_as_finite_json(tea: Dataset) -> None:
    hits = tea.search("black tea", score_threshold=None)
    text = json.dumps([{"score": h.score, "evidence": h.evidence, "fusion": h.fusion_score} for h in hits])
    assert "NaN" not in text and "Infinity" not in text
