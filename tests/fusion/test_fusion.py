from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pytest

from zhiku.core.errors import ConfigError, InvalidInput, ModelUnavailable
from zhiku.fusion.fusion import (
    cut,
    max_score,
    normalize,
    rerank_with_model,
    rrf,
    weighted_score,
)
from zhiku.fusion.types import FusedHit

# semantic: minmax a=1, b=0.5, c=0; full_text: minmax c=1, d=0.5, a=0
TWO_CHANNELS = {
    "semantic": [("a", 0.9), ("b", 0.8), ("c", 0.7)],
    "full_text": [("c", 10.0), ("d", 5.0), ("a", 0.0)],
}


def scores(hits: Sequence[FusedHit]) -> dict[str, float]:
    return {h.segment_id: h.score for h in hits}


def order(hits: Sequence[FusedHit]) -> list[str]:
    return [h.segment_id for h in hits]


class TokenOverlap:
    """Share of the query's words found in the text: a deterministic stand-in for a reranker."""

    name = "token-overlap"

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls.append((query, list(texts)))
        words = set(query.split())
        return [len(words & set(t.split())) / len(words) for t in texts]


# --- normalize -------------------------------------------------------------------------------


def test_minmax_maps_best_to_one_and_worst_to_zero() -> None:
    assert normalize([0.84, 0.83, 0.82, 0.81]) == pytest.approx([1.0, 2 / 3, 1 / 3, 0.0])


def test_minmax_single_or_equal_scores_give_one() -> None:
    assert normalize([0.3], "minmax") == [1.0]
    assert normalize([2.0, 2.0], "minmax") == [1.0, 1.0]
    assert normalize([2.0, 2.0], "zscore") == [1.0, 1.0]
    assert normalize([], "minmax") == []


def test_zscore_is_a_squashed_standard_score() -> None:
    z = 1 / math.sqrt(2 / 3)  # scores 1, 2, 3: mean 2, population std sqrt(2/3)
    expected = [1 / (1 + math.exp(z)), 0.5, 1 / (1 + math.exp(-z))]
    assert normalize([1.0, 2.0, 3.0], "zscore") == pytest.approx(expected)
    assert expected[2] == pytest.approx(0.7729, abs=1e-4)


def test_rank_ignores_raw_scores() -> None:
    assert normalize([100.0, 1.0, 0.99, 0.0], "rank") == [1.0, 0.75, 0.5, 0.25]


def test_unknown_normalization_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="softmax"):
        normalize([1.0, 2.0], "softmax")  # type: ignore[arg-type]


# --- weighted_score --------------------------------------------------------------------------


def test_weighted_minmax_hand_computed() -> None:
    hits = weighted_score(TWO_CHANNELS, {"semantic": 0.6, "full_text": 0.4})
    # a = .6*1 + .4*0, b = .6*.5, c = .6*0 + .4*1, d = .4*.5 (missing from semantic → 0)
    assert order(hits) == ["a", "c", "b", "d"]
    assert scores(hits) == pytest.approx({"a": 0.6, "c": 0.4, "b": 0.3, "d": 0.2})
    a = hits[0]
    assert a.scores == {"semantic": 0.9, "full_text": 0.0}
    assert a.ranks == {"semantic": 1, "full_text": 3}
    assert hits[3].ranks == {"full_text": 2}


def test_weights_of_unsearched_channels_are_ignored_and_the_rest_renormalised() -> None:
    plain = weighted_score(TWO_CHANNELS, {"semantic": 0.6, "full_text": 0.4})
    scaled = weighted_score(TWO_CHANNELS, {"semantic": 3.0, "full_text": 2.0, "keyword": 50.0})
    assert scores(scaled) == pytest.approx(scores(plain))


def test_weighted_fusion_ignores_each_channel_scale() -> None:
    # e5 cosines of one query's candidates sit within a few hundredths; BM25 spans tens.
    # Min-max makes the fused scores independent of any positive affine rescaling per channel.
    squeezed = {
        "semantic": [(sid, 0.8 + s / 100) for sid, s in TWO_CHANNELS["semantic"]],
        "full_text": [(sid, 5 + 40 * s) for sid, s in TWO_CHANNELS["full_text"]],
    }
    weights = {"semantic": 0.7, "full_text": 0.3}
    assert scores(weighted_score(squeezed, weights)) == pytest.approx(
        scores(weighted_score(TWO_CHANNELS, weights))
    )
    assert order(weighted_score(squeezed, weights)) == ["a", "b", "c", "d"]


def test_weighted_searched_empty_channel_counts_as_zero() -> None:
    hits = weighted_score({"semantic": [("a", 0.5)], "full_text": []}, {"semantic": 1, "full_text": 1})
    assert scores(hits) == pytest.approx({"a": 0.5})


def test_weighted_channel_without_weight_weighs_zero() -> None:
    hits = weighted_score(TWO_CHANNELS, {"semantic": 1.0})
    assert scores(hits) == pytest.approx({"a": 1.0, "b": 0.5, "c": 0.0, "d": 0.0})


def test_weighted_other_normalizations() -> None:
    hits = weighted_score(TWO_CHANNELS, {"semantic": 0.5, "full_text": 0.5}, normalization="rank")
    # rank: 1, 2/3, 1/3 per channel of three
    assert scores(hits) == pytest.approx(
        {"a": (1 + 1 / 3) / 2, "b": (2 / 3) / 2, "c": (1 / 3 + 1) / 2, "d": (2 / 3) / 2}
    )


@pytest.mark.parametrize("weights", [{"semantic": -1.0, "full_text": 2.0}, {"keyword": 1.0}])
def test_weighted_bad_weights(weights: dict[str, float]) -> None:
    with pytest.raises(ConfigError):
        weighted_score(TWO_CHANNELS, weights)


def test_weighted_nothing_found() -> None:
    assert weighted_score({}, {"semantic": 1.0}) == []
    assert weighted_score({"semantic": []}, {"semantic": 1.0}) == []


def test_duplicate_ids_in_a_channel_count_once_at_their_best_place() -> None:
    hits = weighted_score({"semantic": [("a", 0.9), ("a", 0.1), ("b", 0.5)]}, {"semantic": 1})
    assert [(h.segment_id, h.ranks, h.scores) for h in hits] == [
        ("a", {"semantic": 1}, {"semantic": 0.9}),
        ("b", {"semantic": 2}, {"semantic": 0.5}),
    ]
    assert scores(hits) == pytest.approx({"a": 1.0, "b": 0.0})


# --- rrf -------------------------------------------------------------------------------------


def test_rrf_unweighted_hand_computed() -> None:
    hits = rrf({"semantic": [("a", 0.9), ("b", 0.8)], "full_text": [("b", 7.0), ("c", 3.0)]})
    # classic: a = 1/61, b = 1/61 + 1/62, c = 1/62; maximum 2/61
    top = 2 / 61
    assert order(hits) == ["b", "a", "c"]
    assert scores(hits) == pytest.approx(
        {"b": (1 / 61 + 1 / 62) / top, "a": (1 / 61) / top, "c": (1 / 62) / top}
    )
    assert hits[0].ranks == {"semantic": 2, "full_text": 1}


def test_rrf_weighted_and_k() -> None:
    candidates = {"semantic": [("a", 0.9), ("b", 0.8)], "full_text": [("b", 7.0), ("c", 3.0)]}
    hits = rrf(candidates, k=1, weights={"semantic": 3.0, "full_text": 1.0})
    # shares .75/.25, k=1: a = .75 * 2/2, b = .75 * 2/3 + .25 * 2/2, c = .25 * 2/3
    assert scores(hits) == pytest.approx({"a": 0.75, "b": 0.75, "c": 1 / 6})
    assert order(hits) == ["a", "b", "c"]  # tie broken by best rank (a: 1, b: 1) then id


def test_rrf_first_everywhere_scores_one() -> None:
    hits = rrf({"semantic": [("a", 0.1), ("b", 0.0)], "keyword": [("a", 1.0)]}, k=60)
    assert hits[0].segment_id == "a"
    assert hits[0].score == pytest.approx(1.0)


def test_rrf_bad_k() -> None:
    with pytest.raises(ConfigError):
        rrf(TWO_CHANNELS, k=0)


# --- max_score (mode none) -------------------------------------------------------------------


def test_none_single_channel_keeps_raw_scores() -> None:
    hits = max_score({"semantic": [("a", 0.83), ("b", 0.81)]})
    assert scores(hits) == {"a": 0.83, "b": 0.81}


def test_none_several_channels_keeps_best_normalised_score() -> None:
    hits = max_score(TWO_CHANNELS)
    assert scores(hits) == pytest.approx({"a": 1.0, "b": 0.5, "c": 1.0, "d": 0.5})
    assert order(hits) == ["a", "c", "b", "d"]


# --- rerank_with_model -----------------------------------------------------------------------


RERANK_CANDIDATES = {"semantic": [("a", 0.9), ("b", 0.8)], "full_text": [("c", 2.0), ("a", 1.0)]}
RERANK_TEXTS = {"a": "apples are red", "b": "the sky is grey", "c": "blue sky at dawn"}


def test_rerank_model_scores_the_union_once() -> None:
    model = TokenOverlap()
    hits = rerank_with_model("blue sky", RERANK_CANDIDATES, RERANK_TEXTS, model)
    assert order(hits) == ["c", "b", "a"]
    assert scores(hits) == {"c": 1.0, "b": 0.5, "a": 0.0}
    assert hits[2].ranks == {"semantic": 1, "full_text": 2}
    assert len(model.calls) == 1
    assert sorted(model.calls[0][1]) == sorted(RERANK_TEXTS.values())


def test_rerank_model_top_n() -> None:
    hits = rerank_with_model("blue sky", RERANK_CANDIDATES, RERANK_TEXTS, TokenOverlap(), top_n=2)
    assert order(hits) == ["c", "b"]


def test_rerank_model_not_called_without_candidates() -> None:
    model = TokenOverlap()
    assert rerank_with_model("q", {"semantic": []}, {}, model) == []
    assert model.calls == []


def test_rerank_model_missing_text() -> None:
    with pytest.raises(InvalidInput, match="no text"):
        rerank_with_model("q", RERANK_CANDIDATES, {"a": "x", "b": "y"}, TokenOverlap())


def test_rerank_model_wrong_number_of_scores() -> None:
    class Short:
        name = "short"

        def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
            return [1.0]

    with pytest.raises(ModelUnavailable, match="short"):
        rerank_with_model("q", RERANK_CANDIDATES, RERANK_TEXTS, Short())


@pytest.mark.parametrize(
    "fuse",
    [
        lambda top_n: weighted_score(TWO_CHANNELS, {"semantic": 0.6, "full_text": 0.4}, top_n=top_n),
        lambda top_n: rrf(TWO_CHANNELS, top_n=top_n),
        lambda top_n: max_score(TWO_CHANNELS, top_n=top_n),
    ],
)
def test_top_n_is_the_head_of_the_full_ranking(
    fuse: Callable[[int | None], list[FusedHit]],
) -> None:
    full = fuse(None)
    assert len(full) == 4
    assert fuse(2) == full[:2]


# --- cut -------------------------------------------------------------------------------------


def test_cut_threshold_is_inclusive_then_top_k() -> None:
    hits = weighted_score(TWO_CHANNELS, {"semantic": 0.6, "full_text": 0.4})
    assert order(cut(hits, score_threshold=0.3)) == ["a", "c", "b"]
    assert order(cut(hits, score_threshold=0.3, top_k=2)) == ["a", "c"]
    assert order(cut(hits, top_k=10)) == ["a", "c", "b", "d"]
    assert cut(hits, score_threshold=0.61) == []
