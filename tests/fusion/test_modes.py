"""Fusion by mode name: every built-in mode has one function in the registry, looked up once."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from zhiku.core.retrieval_config import RerankingConfig
from zhiku.fusion.fusion import adaptive_score, max_score, rrf, weighted_score
from zhiku.fusion.registry import fuse, fusion_modes
from zhiku.fusion.types import FusedHit

FOUND = {
    "semantic": [("a", 0.9), ("b", 0.8), ("c", 0.7)],
    "full_text": [("c", 10.0), ("d", 5.0), ("a", 0.0)],
}
WEIGHTS = {"semantic": 0.7, "full_text": 0.3}


def fused(hits: Sequence[FusedHit]) -> list[tuple[str, float]]:
    return [(hit.segment_id, hit.score) for hit in hits]


def test_the_built_in_modes_are_installed() -> None:
    assert {"adaptive", "weighted_score", "rrf", "none", "reranking_model"} <= set(fusion_modes())


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("adaptive", adaptive_score(FOUND, WEIGHTS, top_n=3)),
        ("weighted_score", weighted_score(FOUND, WEIGHTS, top_n=3)),
        ("rrf", rrf(FOUND, k=20, weights=WEIGHTS, top_n=3)),
        ("none", max_score(FOUND, top_n=3)),
        # a rerank model orders hits itself; what it does not order is fused as weighted_score
        ("reranking_model", weighted_score(FOUND, WEIGHTS, top_n=3)),
    ],
)
def test_each_mode_fuses_with_its_function_and_the_config_s_settings(
    mode: str, expected: list[FusedHit]
) -> None:
    reranking = RerankingConfig.model_validate({"mode": mode, "weights": WEIGHTS, "rrf_k": 20})
    assert fused(fuse(FOUND, reranking, 3)) == fused(expected)


def test_one_channel_keeps_its_raw_scores_whatever_the_mode() -> None:
    reranking = RerankingConfig.model_validate({"mode": "rrf"})
    assert fused(fuse({"full_text": FOUND["full_text"]}, reranking)) == FOUND["full_text"]
