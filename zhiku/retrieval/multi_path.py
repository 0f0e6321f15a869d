"""Multi-path merging: hits from several datasets become one ranking.

Every hit carries its relevance (:mod:`zhiku.retrieval.relevance`): an estimate of the probability
that it is relevant, calibrated per embedding model, so hits of different datasets can be compared
as they come. Merges decide the order; a hit's score stays its relevance whatever the merge (a
rerank model's score when one re-scores them), so a ``score_threshold`` means the same after it:

- ``relevance`` (default): the hits in order of relevance.
- ``weighted``: the federated-search recipe (as in CORI) — each hit ordered by its fusion score
  over its dataset's best, times the dataset's *fit* to the query,
  ``exp((s_d - s_max) / temperature)``. ``s_d`` is the best semantic (cosine) score among the
  dataset's own hits when all datasets share one embedding model, else the embedding router's
  score (one model for all).
- ``reranking_model``: every candidate is re-scored by one rerank model (comparable by
  construction); its score becomes the hit's.
- ``rrf``: reciprocal-rank fusion of the datasets' rankings (treats every dataset as equally
  likely to hold the answer).

Duplicates (the same content in two datasets) are kept once, the more relevant one.

Each merge is registered by name in the ``merges`` registry (:mod:`zhiku.retrieval.merges`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from zhiku.core.documents import Hit, content_hash
from zhiku.providers.rerank.base import RerankModel
from zhiku.retrieval.relevance import rerank_relevance

#: Softness of the dataset fit in ``weighted``: with e5-style cosines a dataset 0.05 below the
#: best keeps exp(-0.05/0.03) = 19% of its weight. Chosen on the routing evaluation (docs/results/quality.md):
#: 0.01-0.05 are within 0.002 nDCG of each other, a hard choice (→ 0) or none (→ ∞) lose.
DEFAULT_TEMPERATURE = 0.03
RRF_K = 60


def dataset_weights(
    scores: Mapping[str, float], temperature: float = DEFAULT_TEMPERATURE
) -> dict[str, float]:
    """Router scores → weights in ``(0, 1]``, the best dataset at 1."""
    if not scores:
        return {}
    best = max(scores.values())
    return {dataset_id: math.exp((score - best) / temperature) for dataset_id, score in scores.items()}


def best_semantic_scores(per_dataset: Mapping[str, Sequence[Hit]]) -> dict[str, float] | None:
    """Each dataset's best semantic score among its hits, or None when a dataset with hits has
    none (it was searched without the semantic channel): then the fit must come from elsewhere.
    A dataset without hits fits worst."""
    best: dict[str, float] = {}
    for dataset_id, hits in per_dataset.items():
        scores = [hit.scores["semantic"] for hit in hits if "semantic" in hit.scores]
        if hits and not scores:
            return None
        best[dataset_id] = max(scores) if scores else -1.0
    return best


def merge_by_relevance(per_dataset: Mapping[str, Sequence[Hit]]) -> list[Hit]:
    """All hits, most relevant first (ties: the datasets' order, then each dataset's ranking)."""
    merged = _deduplicated([hit for hits in per_dataset.values() for hit in hits])
    return _ordered(merged, lambda hit: hit.score)


def merge_weighted(per_dataset: Mapping[str, Sequence[Hit]], weights: Mapping[str, float]) -> list[Hit]:
    """Hits ordered by ``fusion score / best fusion score of its dataset × dataset weight``."""
    key: dict[int, float] = {}
    merged = []
    for dataset_id, hits in per_dataset.items():
        if not hits:
            continue
        ranking = [_ranking_score(hit) for hit in hits]
        top = max(ranking)
        weight = weights.get(dataset_id, 1.0)
        for hit, value in zip(hits, ranking, strict=True):
            key[id(hit)] = (value / top if top > 0 else 1.0) * weight
            merged.append(hit)
    return _ordered(_deduplicated(merged), lambda hit: key[id(hit)])


def merge_rrf(per_dataset: Mapping[str, Sequence[Hit]], k: int = RRF_K) -> list[Hit]:
    """Hits ordered by ``1 / (k + rank in its dataset)``."""
    key: dict[int, float] = {}
    merged = []
    for hits in per_dataset.values():
        for rank, hit in enumerate(hits, start=1):
            key[id(hit)] = 1.0 / (k + rank)
            merged.append(hit)
    return _ordered(_deduplicated(merged), lambda hit: key[id(hit)])


def merge_reranked(query: str, per_dataset: Mapping[str, Sequence[Hit]], model: RerankModel) -> list[Hit]:
    """Every candidate re-scored by ``model``: the score is the model's, as a relevance."""
    candidates = _deduplicated([hit for hits in per_dataset.values() for hit in hits])
    if not candidates:
        return []
    scores = model.rerank(query, [_rerank_text(hit) for hit in candidates])
    rescored = [
        replace(hit, score=rerank_relevance(float(score)))
        for hit, score in zip(candidates, scores, strict=True)
    ]
    return _ordered(rescored, lambda hit: hit.score)


def _rerank_text(hit: Hit) -> str:
    """A Q&A hit is judged on question and answer together: the answer is what is returned."""
    return f"{hit.content}\n{hit.answer}" if hit.answer else hit.content


def _ranking_score(hit: Hit) -> float:
    """What ordered the hit in its dataset: its fusion score, else its score."""
    return hit.fusion_score if hit.fusion_score is not None else hit.score


def _deduplicated(hits: list[Hit]) -> list[Hit]:
    """Each content once, the more relevant copy, in the order first met."""
    best: dict[str, Hit] = {}
    for hit in hits:
        key = content_hash(_rerank_text(hit))
        if key not in best or hit.score > best[key].score:
            best[key] = hit
    return list(best.values())


def _ordered(hits: list[Hit], key: Callable[[Hit], float]) -> list[Hit]:
    return sorted(hits, key=key, reverse=True)
