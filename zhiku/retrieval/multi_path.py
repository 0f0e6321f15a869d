"""Multi-path merging: hits from several datasets become one ranking.

Scores of different datasets are not comparable as they come: a weighted-fusion score is min-max
normalised within its own dataset (its best hit is near 1 however poor the match), a BM25 score
depends on the dataset's own statistics, and datasets may use different embedding models. So
zhiku does not mix raw scores. It offers three merges:

- ``weighted`` (default, no model needed): the federated-search recipe (as in CORI) — each hit's
  score is divided by its dataset's best score, then multiplied by the dataset's *fit* to the
  query, ``exp((s_d - s_max) / temperature)``. ``s_d`` is the best semantic (cosine) score among
  the dataset's own hits when all datasets share one embedding model — evidence from the whole
  dataset, not a sample — else the embedding router's score (one model for all). A dataset the
  query plainly belongs to keeps its ranking; the others' hits sink unless their dataset fits
  almost as well.
- ``reranking_model``: every candidate is re-scored by one rerank model (comparable by
  construction).
- ``rrf``: reciprocal-rank fusion of the datasets' rankings (no scores at all; treats every
  dataset as equally likely to hold the answer).

Duplicates (the same content in two datasets) are kept once, with the higher score.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Literal

from zhiku.core.documents import Hit, content_hash
from zhiku.core.errors import ConfigError
from zhiku.providers.rerank.base import RerankModel

Merge = Literal["weighted", "reranking_model", "rrf"]

#: Softness of the dataset fit in ``weighted``: with e5-style cosines a dataset 0.05 below the
#: best keeps exp(-0.05/0.03) = 19% of its weight. Chosen on the routing evaluation (README):
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


def merge_weighted(per_dataset: Mapping[str, Sequence[Hit]], weights: Mapping[str, float]) -> list[Hit]:
    """Hits scored ``score / best score of its dataset × dataset weight``, best first."""
    merged = []
    for dataset_id, hits in per_dataset.items():
        if not hits:
            continue
        top = max(hit.score for hit in hits)
        weight = weights.get(dataset_id, 1.0)
        for hit in hits:
            relative = hit.score / top if top > 0 else 1.0
            merged.append(replace(hit, score=relative * weight))
    return _deduplicated(merged)


def merge_rrf(per_dataset: Mapping[str, Sequence[Hit]], k: int = RRF_K) -> list[Hit]:
    merged = []
    for hits in per_dataset.values():
        for rank, hit in enumerate(hits, start=1):
            merged.append(replace(hit, score=1.0 / (k + rank)))
    return _deduplicated(merged)


def merge_reranked(query: str, per_dataset: Mapping[str, Sequence[Hit]], model: RerankModel) -> list[Hit]:
    """Every candidate re-scored by ``model``: the score is the model's."""
    candidates = _deduplicated([hit for hits in per_dataset.values() for hit in hits])
    if not candidates:
        return []
    scores = model.rerank(query, [_rerank_text(hit) for hit in candidates])
    rescored = [replace(hit, score=float(score)) for hit, score in zip(candidates, scores, strict=True)]
    return sorted(rescored, key=lambda hit: hit.score, reverse=True)


def merge(
    query: str,
    per_dataset: Mapping[str, Sequence[Hit]],
    how: Merge,
    *,
    weights: Mapping[str, float] | None = None,
    rerank_model: RerankModel | None = None,
) -> list[Hit]:
    if how == "reranking_model":
        if rerank_model is None:
            raise ConfigError("multi-path merge 'reranking_model' needs a rerank model (ZHIKU_RERANK_MODEL)")
        return merge_reranked(query, per_dataset, rerank_model)
    if how == "rrf":
        return merge_rrf(per_dataset)
    return merge_weighted(per_dataset, weights or {})


def _rerank_text(hit: Hit) -> str:
    """A Q&A hit is judged on question and answer together: the answer is what is returned."""
    return f"{hit.content}\n{hit.answer}" if hit.answer else hit.content


def _deduplicated(hits: list[Hit]) -> list[Hit]:
    best: dict[str, Hit] = {}
    for hit in hits:
        key = content_hash(_rerank_text(hit))
        if key not in best or hit.score > best[key].score:
            best[key] = hit
    return sorted(best.values(), key=lambda hit: hit.score, reverse=True)
