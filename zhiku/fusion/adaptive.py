"""Per-query channel weights for the ``adaptive`` fusion, read from each channel's own scores.

A channel that has found what the query asks for usually puts a few candidates well above the
rest of its list; a channel that has not finds many candidates about equally (weakly) similar.
:func:`peakedness` measures that shape on the channel's own scale — how much of the list's score
range lies between its best and its ``k``-th candidate — so it compares a cosine list with a BM25
list without calibrating either. :func:`adaptive_weights` scales each channel's configured weight
by it, per query; no labels and nothing stored with the dataset are needed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

#: The candidate a channel's best is compared with: the 5th (measured on the evaluation sets, see
#: the README's "Quality"; 3 and 8 did slightly worse on all four).
PEAK_RANK = 5


def peakedness(scores: Sequence[float], k: int = PEAK_RANK) -> float:
    """``(s_1 - s_k) / (s_1 - s_n)`` of one channel's scores (best first), in ``[0, 1]``.

    ``s_k`` is the ``k``-th score (the last one if the list is shorter) and ``s_n`` the last: 1
    when the best ``k - 1`` stand out and the rest are alike, near 0 when the top of the list is as
    flat as its tail. A single candidate counts as fully peaked (1.0); a list of equal scores, or
    an empty one, tells nothing (0.0).
    """
    n = len(scores)
    if n == 0:
        return 0.0
    if n == 1:
        return 1.0
    top, last = scores[0], scores[-1]
    if top == last:
        return 0.0
    return (top - scores[min(k, n) - 1]) / (top - last)


def adaptive_weights(
    scores: Mapping[str, Sequence[float]], shares: Mapping[str, float], k: int = PEAK_RANK
) -> dict[str, float]:
    """The configured ``shares`` (summing to 1), moved between the channels that found something
    in proportion to ``share * peakedness``.

    ``scores`` are the channels' raw scores, best first. A channel that found nothing (or failed)
    keeps its share, unused, as in ``weighted_score``: the others' scores keep their scale, so a
    threshold is as strict as configured. When no answering channel shows any peak (all flat),
    the shares are returned unchanged: nothing tells the channels apart.
    """
    answered = [channel for channel, values in scores.items() if values]
    raw = {channel: shares[channel] * peakedness(scores[channel], k) for channel in answered}
    total = sum(raw.values())
    if total <= 0.0:
        return dict(shares)
    pool = sum(shares[channel] for channel in answered)
    return {**shares, **{channel: pool * value / total for channel, value in raw.items()}}
