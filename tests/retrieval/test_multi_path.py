"""Multi-path retrieval: every dataset searched, hits merged once."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from zhiku import KnowledgeBase
from zhiku.core.documents import Hit
from zhiku.core.errors import ConfigError
from zhiku.retrieval.multi_path import (
    best_semantic_scores,
    dataset_weights,
    merge_by_relevance,
    merge_reranked,
    merge_rrf,
    merge_weighted,
)


def hit(dataset: str, content: str, score: float, fusion: float | None = None) -> Hit:
    segment_id = f"{dataset}-{content}"
    return Hit(segment_id=segment_id, score=score, content=content, dataset_id=dataset, fusion_score=fusion)


def test_weighted_merge_orders_by_each_dataset_normalised_fusion_times_its_fit() -> None:
    per_dataset = {
        "a": [hit("a", "a1", 0.6, fusion=0.9), hit("a", "a2", 0.3, fusion=0.45)],
        "b": [hit("b", "b1", 0.7, fusion=30.0), hit("b", "b2", 0.2, fusion=15.0)],  # another scale
    }
    merged = merge_weighted(per_dataset, {"a": 1.0, "b": 0.25})
    assert [h.content for h in merged] == ["a1", "a2", "b1", "b2"]  # keys 1.0, 0.5, 0.25, 0.125
    assert [h.score for h in merged] == [0.6, 0.3, 0.7, 0.2]  # each keeps its relevance


def test_relevance_merge_orders_every_dataset_s_hits_by_relevance() -> None:
    per_dataset = {
        "a": [hit("a", "a1", 0.6, fusion=0.9), hit("a", "a2", 0.3, fusion=0.45)],
        "b": [hit("b", "b1", 0.7, fusion=30.0), hit("b", "b2", 0.2, fusion=15.0)],
    }
    merged = merge_by_relevance(per_dataset)
    assert [h.content for h in merged] == ["b1", "a1", "a2", "b2"]


def test_dataset_weights_are_relative_to_the_best_fit() -> None:
    weights = dataset_weights({"a": 0.80, "b": 0.78, "c": 0.60}, temperature=0.02)
    assert weights["a"] == 1.0
    assert 0.3 < weights["b"] < 0.4
    assert weights["c"] < 1e-4


def test_duplicates_across_datasets_are_kept_once_with_the_best_score() -> None:
    merged = merge_rrf({"a": [hit("a", "same", 1.0)], "b": [hit("b", "other", 1.0), hit("b", "same", 0.5)]})
    assert sorted(h.content for h in merged) == ["other", "same"]
    assert next(h for h in merged if h.content == "same").dataset_id == "a"


class LengthModel:
    """Scores longer texts higher (a hundredth per character, a probability-like scale): enough to
    see that every candidate is re-scored."""

    name = "length"

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        return [len(text) / 100 for text in texts]


def test_reranked_merge_rescores_every_candidate_and_reads_qa_answers() -> None:
    qa = Hit(segment_id="q", score=0.1, content="Q?", answer="a long answer indeed", dataset_id="b")
    merged = merge_reranked("x", {"a": [hit("a", "short", 0.9)], "b": [qa]}, LengthModel())
    assert [h.segment_id for h in merged] == ["q", "a-short"]
    assert merged[0].score == len("Q?\na long answer indeed") / 100


def test_multiple_routing_searches_all_and_ranks_the_fitting_dataset_first(routed_kb: KnowledgeBase) -> None:
    result = routed_kb.retrieve("Which planet is the largest?", routing="multiple", top_k=4)
    names = {dataset.id: dataset.name for dataset in routed_kb.datasets()}
    assert set(result.datasets) == set(names)
    assert names[result.hits[0].dataset_id] == "astronomy"
    assert "Jupiter" in result.hits[0].content
    # the other datasets' passages are about something else: the default threshold leaves them out
    assert {names[h.dataset_id] for h in result.hits} == {"astronomy"}
    question = "Which planet is the largest?"
    every = routed_kb.retrieve(question, routing="multiple", top_k=4, score_threshold=0.0)
    assert len(every.hits) == 4
    scores = [h.score for h in every.hits]
    assert scores == sorted(scores, reverse=True) and all(0.0 <= s <= 1.0 for s in scores)
    assert every.hits[0].segment_id == result.hits[0].segment_id


def test_multiple_routing_threshold_rrf_and_model_merge(routed_kb: KnowledgeBase) -> None:
    every = routed_kb.retrieve("Which planet is the largest?", score_threshold=0.0, top_k=10)
    best = max(h.score for h in every.hits)
    strict = routed_kb.retrieve("Which planet is the largest?", score_threshold=best)
    assert strict.hits and all(h.score >= best for h in strict.hits)
    assert len(strict.hits) < len(every.hits)
    rrf = routed_kb.retrieve("overtime pay", merge="rrf", top_k=3, score_threshold=0.0)
    assert len(rrf.hits) == 3
    with pytest.raises(ConfigError, match="rerank model"):
        routed_kb.retrieve("overtime pay", merge="reranking_model")


def test_named_datasets_only_and_unknown_dataset(routed_kb: KnowledgeBase) -> None:
    result = routed_kb.retrieve("tea", datasets=["payroll", "astronomy"])
    names = {dataset.id: dataset.name for dataset in routed_kb.datasets()}
    assert {names[h.dataset_id] for h in result.hits} <= {"payroll", "astronomy"}
    with pytest.raises(Exception, match="no dataset"):
        routed_kb.retrieve("tea", datasets=["nope"])
    assert routed_kb.retrieve("   ").hits == []


def test_dataset_fit_from_the_best_semantic_score_of_its_hits() -> None:
    a = [Hit(segment_id="a1", score=1.0, scores={"semantic": 0.81, "full_text": 9.0}, dataset_id="a")]
    b = [
        Hit(segment_id="b1", score=1.0, scores={"full_text": 3.0}),
        Hit(segment_id="b2", score=0.5, scores={"semantic": 0.7}),
    ]
    assert best_semantic_scores({"a": a, "b": b, "empty": []}) == {"a": 0.81, "b": 0.7, "empty": -1.0}
    only_bm25 = [Hit(segment_id="c1", score=4.0, scores={"full_text": 4.0})]
    assert best_semantic_scores({"a": a, "c": only_bm25}) is None  # then the router's scores are used
