"""The fusions a retrieval config names by ``reranking.mode``: one lookup from name to function.

A rerank model orders a search's hits itself (:func:`~zhiku.fusion.fusion.rerank_with_model`);
what it does not order (a hit's child chunks) is fused as ``weighted_score``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from zhiku.core.retrieval_config import RerankingConfig
from zhiku.fusion.fusion import adaptive_score, max_score, rrf, weighted_score
from zhiku.fusion.types import Candidates, FusedHit

#: A fusion: the channels' candidates, the config's reranking settings, how many hits to build.
Fuse = Callable[[Candidates, RerankingConfig, int | None], list[FusedHit]]


def _weights(reranking: RerankingConfig) -> dict[str, float]:
    return {channel: weight for channel, weight in reranking.weights.items()}


def _max(found: Candidates, reranking: RerankingConfig, top_n: int | None) -> list[FusedHit]:
    return max_score(found, top_n=top_n)


def _rrf(found: Candidates, reranking: RerankingConfig, top_n: int | None) -> list[FusedHit]:
    return rrf(found, k=reranking.rrf_k, weights=_weights(reranking), top_n=top_n)


def _adaptive(found: Candidates, reranking: RerankingConfig, top_n: int | None) -> list[FusedHit]:
    return adaptive_score(found, _weights(reranking), top_n=top_n)


def _weighted(found: Candidates, reranking: RerankingConfig, top_n: int | None) -> list[FusedHit]:
    return weighted_score(found, _weights(reranking), top_n=top_n)


FUSIONS: Mapping[str, Fuse] = {
    "adaptive": _adaptive,
    "weighted_score": _weighted,
    "rrf": _rrf,
    "none": _max,
    "reranking_model": _weighted,
}


def fuse(found: Candidates, reranking: RerankingConfig, top_n: int | None = None) -> list[FusedHit]:
    """The candidates fused by the config's mode, best first; one channel keeps its raw score."""
    if len(found) == 1:
        return max_score(found, top_n=top_n)
    return FUSIONS[reranking.mode](found, reranking, top_n)
