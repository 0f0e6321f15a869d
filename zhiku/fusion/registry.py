"""Fusions by name: the ``fusion`` registry a dataset's ``reranking.mode`` names.

A fusion is a pure function ``fusion(candidates, reranking, top_n)`` over each channel's ranked
candidates (:class:`Fusion`), given the dataset's :class:`RerankingConfig` for its weights and
constants; what its final score means is its own to document (see :mod:`zhiku.fusion.fusion`).
``reranking_model`` is the one mode outside the registry: a rerank model re-scores the
candidates' texts, which a fusion never sees.
"""

from __future__ import annotations

from typing import Protocol

from zhiku.core.errors import ConfigError
from zhiku.core.registry import Registry
from zhiku.core.retrieval_config import RerankingConfig
from zhiku.fusion.fusion import adaptive_score, max_score, rrf, weighted_score
from zhiku.fusion.types import Candidates, FusedHit

RERANKING_MODEL = "reranking_model"


class Fusion(Protocol):
    """The contract of the ``fusion`` registry: the best ``top_n`` (None: all), best first."""

    def __call__(
        self, candidates: Candidates, reranking: RerankingConfig, top_n: int | None, /
    ) -> list[FusedHit]: ...


fusions: Registry[Fusion] = Registry("fusion")


def fusion_modes() -> list[str]:
    """Every ``reranking.mode`` a config may name: the installed fusions and ``reranking_model``."""
    return sorted({RERANKING_MODEL, *fusions.available()})


def check_fusion_mode(mode: str) -> str:
    """``mode`` if a config may name it; ConfigError listing the installed modes otherwise."""
    if mode != RERANKING_MODEL and not fusions.has(mode):
        raise ConfigError(f"unknown reranking.mode {mode[:80]!r}; installed: {', '.join(fusion_modes())}")
    return mode


@fusions.register("adaptive")
def _adaptive(candidates: Candidates, reranking: RerankingConfig, top_n: int | None, /) -> list[FusedHit]:
    return adaptive_score(candidates, _weights(reranking), top_n=top_n)


@fusions.register("weighted_score")
def _weighted(candidates: Candidates, reranking: RerankingConfig, top_n: int | None, /) -> list[FusedHit]:
    return weighted_score(candidates, _weights(reranking), top_n=top_n)


@fusions.register("rrf")
def _rrf(candidates: Candidates, reranking: RerankingConfig, top_n: int | None, /) -> list[FusedHit]:
    return rrf(candidates, k=reranking.rrf_k, weights=_weights(reranking), top_n=top_n)


@fusions.register("none")
def _none(candidates: Candidates, reranking: RerankingConfig, top_n: int | None, /) -> list[FusedHit]:
    return max_score(candidates, top_n=top_n)


def fuse(candidates: Candidates, reranking: RerankingConfig, top_n: int | None = None) -> list[FusedHit]:
    """The candidates fused by the config's mode, best first: one lookup in the registry. One
    channel keeps its raw scores; under a rerank model (which orders a search's hits itself, see
    :func:`~zhiku.fusion.fusion.rerank_with_model`) what it does not order — a hit's child chunks
    — is fused as ``weighted_score``."""
    if len(candidates) == 1:
        return max_score(candidates, top_n=top_n)
    mode = "weighted_score" if reranking.mode == RERANKING_MODEL else reranking.mode
    return fusions.factory(mode)(candidates, reranking, top_n)


def _weights(reranking: RerankingConfig) -> dict[str, float]:
    return {channel: weight for channel, weight in reranking.weights.items()}
