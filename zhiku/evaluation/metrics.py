"""Retrieval metrics, per query then averaged: recall@k, MRR@10, nDCG@10 (binary gains)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence


def recall_at(ranked: Sequence[str], relevant: set[str], k: int) -> float:
    if not relevant:
        return 0.0
    return len(set(ranked[:k]) & relevant) / len(relevant)


def mrr_at(ranked: Sequence[str], relevant: set[str], k: int = 10) -> float:
    for rank, item in enumerate(ranked[:k], start=1):
        if item in relevant:
            return 1.0 / rank
    return 0.0


def ndcg_at(ranked: Sequence[str], relevant: set[str], k: int = 10) -> float:
    dcg = sum(1.0 / math.log2(rank + 1) for rank, item in enumerate(ranked[:k], start=1) if item in relevant)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(relevant), k) + 1))
    return dcg / ideal if ideal else 0.0


METRIC_NAMES = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10")


def score_run(
    runs: Mapping[str, Sequence[str]], qrels: Mapping[str, set[str]], query_ids: Iterable[str]
) -> dict[str, float]:
    """Average each metric over ``query_ids``; ``runs`` maps a query id to ranked item ids.

    Item ids are unique within a ranking (a document retrieved twice counts once, at its best rank).
    """
    totals = dict.fromkeys(METRIC_NAMES, 0.0)
    count = 0
    for query_id in query_ids:
        relevant = qrels.get(query_id, set())
        ranked = list(dict.fromkeys(runs.get(query_id, [])))
        totals["recall@1"] += recall_at(ranked, relevant, 1)
        totals["recall@5"] += recall_at(ranked, relevant, 5)
        totals["recall@10"] += recall_at(ranked, relevant, 10)
        totals["mrr@10"] += mrr_at(ranked, relevant, 10)
        totals["ndcg@10"] += ndcg_at(ranked, relevant, 10)
        count += 1
    return {name: round(value / count, 4) if count else 0.0 for name, value in totals.items()}
