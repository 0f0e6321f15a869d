"""Per-query channel weights for the ``adaptive`` fusion, read from each channel's own scores.

A channel that has found what the query asks for puts a few candidates well above the rest of
its list; a channel that has not finds many candidates about equally (weakly) similar. Min-max
normalisation hides the difference — it stretches any list to ``[0, 1]`` — so a fixed mix lets a
vague channel push its noise into the top results. :func:`spread` measures a list's shape on
the channel's own scale: its range in standard deviations of its scores. An even list spreads
over about 3.5 standard deviations, one with a few clear matches above a flat tail over up to
``n / sqrt(n - 1)`` (about 7 for 50 candidates, the default recall; in lists shorter than a
dozen a lone outlier weighs on the deviation itself, and the measure tells less).
:func:`adaptive_weights` scales each channel's configured weight by it, per query; no labels
and nothing stored with the dataset are needed.

Weighting min-max scores by ``(s_1 - s_n) / sigma`` ranks exactly as summing each channel's
scores in its own standard deviations above its weakest candidate, ``(s - s_n) / sigma``: every
candidate is credited with how far it stands out of its channel's list.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

#: The spread given to a list of one candidate: that of the shortest list that has one (two
#: candidates, ``2.0``); a lone match is a clear one, but there is no tail to measure it against.
SINGLE_CANDIDATE_SPREAD = 2.0


def spread(scores: Sequence[float]) -> float:
    """``(s_1 - s_n) / sigma`` of one channel's scores (best first; ``sigma`` the population
    standard deviation): at least 2 for a list of distinct scores, larger the more its best
    stand out of a flat tail. Scale-free. One candidate counts as :data:`SINGLE_CANDIDATE_SPREAD`;
    an empty list, or one of equal scores, tells nothing (0.0)."""
    n = len(scores)
    if n == 0:
        return 0.0
    if n == 1:
        return SINGLE_CANDIDATE_SPREAD
    top, last = scores[0], scores[-1]
    if top == last:
        return 0.0
    mean = math.fsum(scores) / n
    sigma = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / n)
    return (top - last) / sigma


def adaptive_weights(scores: Mapping[str, Sequence[float]], shares: Mapping[str, float]) -> dict[str, float]:
    """The configured ``shares`` (summing to 1), moved between the channels that found something
    in proportion to ``share * spread``.

    ``scores`` are the channels' raw scores, best first. A channel that found nothing (or failed)
    keeps its share, unused, as in ``weighted_score``: the others' scores keep their scale, so a
    threshold is as strict as configured. When no answering channel shows any spread (all
    flat), the shares are returned unchanged: nothing tells the channels apart.
    """
    answered = [channel for channel, values in scores.items() if values]
    raw = {channel: shares[channel] * spread(scores[channel]) for channel in answered}
    total = sum(raw.values())
    if total <= 0.0:
        return dict(shares)
    pool = sum(shares[channel] for channel in answered)
    return {**shares, **{channel: pool * value / total for channel, value in raw.items()}}
