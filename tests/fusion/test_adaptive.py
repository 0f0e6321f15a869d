from __future__ import annotations

import math
import statistics

import pytest

from zhiku.core.errors import ConfigError
from zhiku.fusion.adaptive import SINGLE_CANDIDATE, adaptive_weights, evidence, top_zscore
from zhiku.fusion.fusion import adaptive_score, weighted_score

EVEN = {"semantic": 0.5, "full_text": 0.5}


def flat(prefix: str, n: int = 50, top: float = 0.80, step: float = 0.001) -> list[tuple[str, float]]:
    """A vague channel: its candidates all about as similar, evenly spread."""
    return [(f"{prefix}{i}", top - i * step) for i in range(n)]


def peaked(prefix: str, n: int = 50) -> list[tuple[str, float]]:
    """A sure channel: two clear matches far above a flat tail."""
    tail = [(f"{prefix}{i}", 5.0 - 0.1 * i) for i in range(2, n)]
    return [(f"{prefix}0", 30.0), (f"{prefix}1", 25.0), *tail]


def test_top_zscore_is_the_best_in_standard_deviations_above_the_mean() -> None:
    even = [50.0 - i for i in range(50)]
    mean = sum(even) / 50
    assert top_zscore(even) == pytest.approx((50.0 - mean) / statistics.pstdev(even))  # ~sqrt(3)
    one_clear = [10.0] + [1.0] * 49
    assert top_zscore(one_clear) == pytest.approx(49**0.5)  # sqrt(n - 1), the most a list can have
    a_few_clear = [30.0, 25.0, 24.0] + [5.0 - 0.01 * i for i in range(47)]
    assert top_zscore(one_clear) > top_zscore(a_few_clear) > top_zscore(even)


def test_top_zscore_is_scale_free() -> None:
    cosines = [0.83, 0.80, 0.79, 0.785, 0.78, 0.70]
    assert top_zscore([s * 40 + 3 for s in cosines]) == pytest.approx(top_zscore(cosines))


def test_top_zscore_edge_cases() -> None:
    assert top_zscore([]) == 0.0
    # one candidate measures as any two distinct ones
    assert top_zscore([0.7]) == SINGLE_CANDIDATE == pytest.approx(top_zscore([0.7, 0.1]))
    assert top_zscore([0.5, 0.5, 0.5]) == 0.0  # cannot tell the candidates apart


def test_the_peaked_channel_gets_the_weight() -> None:
    scores = {"semantic": [s for _, s in flat("s")], "full_text": [s for _, s in peaked("f")]}
    weights = adaptive_weights(scores, EVEN)
    assert top_zscore(scores["full_text"]) > 2 * top_zscore(scores["semantic"])
    sure, vague = evidence(scores["full_text"]), evidence(scores["semantic"])
    assert sure == pytest.approx(math.log1p(top_zscore(scores["full_text"])))
    assert sure > 1.5 * vague  # less than the z-scores' ratio: trust grows slower than z
    assert weights["full_text"] == pytest.approx(sure / (sure + vague))
    assert weights["semantic"] == pytest.approx(vague / (sure + vague))
    assert sum(weights.values()) == pytest.approx(1.0)
    swapped = adaptive_weights({"semantic": scores["full_text"], "full_text": scores["semantic"]}, EVEN)
    assert swapped["semantic"] == pytest.approx(weights["full_text"])


def test_equally_shaped_lists_keep_the_configured_weights() -> None:
    shape = [1.0, 0.6, 0.5, 0.45, 0.4, 0.1]
    scores = {"semantic": shape, "full_text": [s * 20 for s in shape]}
    assert adaptive_weights(scores, {"semantic": 0.7, "full_text": 0.3}) == pytest.approx(
        {"semantic": 0.7, "full_text": 0.3}
    )


def test_flat_channels_fall_back_to_the_configured_weights() -> None:
    scores = {"semantic": [0.5, 0.5], "full_text": [2.0, 2.0, 2.0]}
    shares = {"semantic": 0.6, "full_text": 0.4}
    assert adaptive_weights(scores, shares) == shares


def test_configured_weights_still_scale_the_channels() -> None:
    scores = {"semantic": [s for _, s in peaked("s")], "full_text": [s for _, s in peaked("f")]}
    assert adaptive_weights(scores, {"semantic": 0.2, "full_text": 0.8})["full_text"] == pytest.approx(0.8)
    only_bm25 = {"semantic": 0.0, "full_text": 1.0}
    assert adaptive_weights(scores, only_bm25) == only_bm25


def test_adaptive_follows_the_sure_channel_where_weighted_score_follows_the_vague_one() -> None:
    # Both channels' top candidates are unique to them; the dense channel's is a vague match.
    candidates = {"semantic": flat("s"), "full_text": peaked("f")}
    adaptive = adaptive_score(candidates, EVEN, top_n=3)
    assert [h.segment_id for h in adaptive] == ["f0", "f1", "s0"]
    fixed = weighted_score(candidates, EVEN, top_n=3)
    assert [h.segment_id for h in fixed] == ["s0", "f0", "s1"]


def test_three_channels_each_weighted_by_the_evidence_of_its_top_zscore() -> None:
    candidates = {
        "semantic": flat("s"),
        "full_text": peaked("f"),
        "keyword": [("k0", 9.0)] + [(f"k{i}", 1.0 - 0.01 * i) for i in range(1, 50)],
    }
    hits = adaptive_score(candidates, {"semantic": 1.0, "full_text": 1.0, "keyword": 1.0})
    first = {h.segment_id: h.score for h in hits}
    # shares ∝ log(1 + top z-score): keyword (one clear match) > full_text (two) > semantic (even);
    # the tops score their shares
    assert first["k0"] > first["f0"] > first["s0"] > 0.0
    assert sum(first[top] for top in ("f0", "k0", "s0")) == pytest.approx(1.0)


def test_scores_stay_in_the_unit_interval_and_found_by_all_is_one() -> None:
    candidates = {"semantic": [("a", 0.9), ("b", 0.5), ("c", 0.4)], "full_text": [("a", 12.0), ("c", 1.0)]}
    hits = adaptive_score(candidates, EVEN)
    assert hits[0].segment_id == "a" and hits[0].score == pytest.approx(1.0)
    assert all(0.0 <= h.score <= 1.0 for h in hits)
    assert hits[0].ranks == {"semantic": 1, "full_text": 1}


def test_an_empty_channel_keeps_its_share_so_scores_keep_their_scale() -> None:
    hits = adaptive_score({"semantic": [("a", 0.9), ("b", 0.3)], "full_text": []}, EVEN)
    assert [(h.segment_id, h.score) for h in hits] == [("a", pytest.approx(0.5)), ("b", 0.0)]
    three = {"semantic": [s for _, s in flat("s")], "full_text": [s for _, s in peaked("f")], "keyword": []}
    weights = adaptive_weights(three, {"semantic": 0.4, "full_text": 0.4, "keyword": 0.2})
    assert weights["keyword"] == 0.2
    assert weights["semantic"] + weights["full_text"] == pytest.approx(0.8)
    assert weights["full_text"] > weights["semantic"]


def test_invalid_settings() -> None:
    with pytest.raises(ConfigError, match="negative"):
        adaptive_score({"semantic": [("a", 1.0)]}, {"semantic": -1.0})
