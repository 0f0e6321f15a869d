"""The metrics behind every quality figure, against values computed by hand."""

from __future__ import annotations

import math

import pytest

from zhiku.evaluation.metrics import mrr_at, ndcg_at, recall_at, score_run


def test_recall_counts_the_share_of_relevant_items_found() -> None:
    assert recall_at(["a", "b", "c"], {"b", "z"}, 1) == 0.0
    assert recall_at(["a", "b", "c"], {"b", "z"}, 2) == 0.5
    assert recall_at(["a", "b", "c"], {"a", "b"}, 10) == 1.0
    assert recall_at(["a"], set(), 10) == 0.0  # a query without judgements scores 0, never divides by 0


def test_mrr_is_the_inverse_rank_of_the_first_relevant_item_within_k() -> None:
    assert mrr_at(["x", "y", "a"], {"a"}) == pytest.approx(1 / 3)
    assert mrr_at(["a", "b"], {"b", "a"}) == 1.0
    assert mrr_at([f"n{i}" for i in range(10)] + ["a"], {"a"}, 10) == 0.0  # rank 11 is past k


def test_ndcg_with_binary_gains() -> None:
    # relevant at ranks 2 and 3 of two relevant items: DCG = 1/log2(3) + 1/log2(4); ideal = 1 + 1/log2(3)
    expected = (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert ndcg_at(["x", "a", "b"], {"a", "b"}) == pytest.approx(expected)
    assert ndcg_at(["a", "b"], {"a", "b"}) == 1.0
    assert ndcg_at(["x"], {"a"}) == 0.0
    # more relevant items than k: the ideal ranking is k relevant items
    assert ndcg_at(["a"], {f"r{i}" for i in range(20)} | {"a"}, k=1) == 1.0


def test_score_run_averages_over_the_queries_and_counts_a_duplicate_once() -> None:
    runs = {"q1": ["a", "a", "b"], "q2": ["x", "y"]}
    qrels = {"q1": {"b"}, "q2": {"y"}}
    scores = score_run(runs, qrels, ["q1", "q2", "q3"])
    # q1: "a" twice counts once, so "b" is at rank 2; q2: "y" at rank 2; q3: no run, no judgement
    assert scores["mrr@10"] == round((0.5 + 0.5 + 0) / 3, 4)
    assert scores["recall@1"] == 0.0
    assert scores["recall@5"] == round(2 / 3, 4)
    assert scores["ndcg@10"] == round(2 * (1 / math.log2(3)) / 3, 4)
    assert score_run({}, {}, []) == dict.fromkeys(scores, 0.0)
