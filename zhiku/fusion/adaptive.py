"""Per-query channel weights for the ``adaptive`` fusion, read from each channel's own scores.

A channel that has found what the query asks for puts a few candidates well above the rest of
its list; a channel that has not finds many candidates about equally (weakly) similar. Min-max
normalisation hides the difference — it stretches any list to ``[0, 1]`` — so a fixed mix lets a
vague channel push its noise into the top results. :func:`top_zscore` measures a list's shape on
the channel's own scale: how many standard deviations its best candidate stands above the
list's mean — the usual test of an outlier. The best of an even list stands about 1.7 above
(``sqrt(3)``), a lone clear match above a flat tail up to ``sqrt(n - 1)`` (7 for 50 candidates).
:func:`adaptive_weights` scales each channel's configured weight by :func:`evidence`,
``log(1 + z)``, per query; no labels and nothing stored with the dataset are needed. A cosine list
and a BM25 list compare without calibrating either, since the measure is free of each channel's
scale. The logarithm makes the trust grow less than the z-score: a best candidate 7 deviations
out is a clear match, but not four times as sure as an even list's best at 1.7 — with ``z``
itself, a BM25 list with one lucky term match takes nearly all the weight from a dense list
that ranks the answer well.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

#: The measure of a list of one candidate: that of any list of two distinct scores (1.0).
SINGLE_CANDIDATE = 1.0


def top_zscore(scores: Sequence[float]) -> float:
    """``(s_1 - mean) / sigma`` of one channel's scores, best first (``sigma`` the population
    standard deviation): 1 for two distinct scores, about 1.7 for an even list, up to
    ``sqrt(n - 1)`` when the best stands alone above equal others. Scale-free. One candidate
    counts as :data:`SINGLE_CANDIDATE`; an empty list, or one of equal scores, tells nothing (0.0).
    """
    n = len(scores)
    if n == 0:
        return 0.0
    if n == 1:
        return SINGLE_CANDIDATE
    if scores[0] == scores[-1]:
        return 0.0
    mean = math.fsum(scores) / n
    sigma = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / n)
    return (scores[0] - mean) / sigma


def evidence(scores: Sequence[float]) -> float:
    """How much a channel's list says it found the query's answer: ``log(1 + top_zscore)``; 0
    for a list that tells nothing (empty, or equal scores)."""
    return math.log1p(top_zscore(scores))


def adaptive_weights(scores: Mapping[str, Sequence[float]], shares: Mapping[str, float]) -> dict[str, float]:
    """The configured ``shares`` (summing to 1), moved between the channels that found something
    in proportion to ``share * evidence``.

    ``scores`` are the channels' raw scores, best first. A channel that found nothing (or failed)
    keeps its share, unused, as in ``weighted_score``: the others' scores keep their scale, so a
    threshold is as strict as configured. When no answering channel has distinct scores (all
    flat), the shares are returned unchanged: nothing tells the channels apart.
    """
    answered = [channel for channel, values in scores.items() if values]
    raw = {channel: shares[channel] * evidence(scores[channel]) for channel in answered}
    total = sum(raw.values())
    if total <= 0.0:
        return dict(shares)
    pool = sum(shares[channel] for channel in answered)
    return {**shares, **{channel: pool * value / total for channel, value in raw.items()}}
