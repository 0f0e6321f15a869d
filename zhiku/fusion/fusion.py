"""Fusion: turn each channel's ranked candidates into one ranking with one final score.

Every function takes :data:`~zhiku.fusion.types.Candidates` — per channel, ``(segment_id,
raw_score)`` best first, higher is better — and returns :class:`~zhiku.fusion.types.FusedHit`
sorted by final score, best first (only the best ``top_n`` when given: the others are never
built). What the final score means, and so what a ``score_threshold`` compares against, differs
per fusion:

=====================  ==========================================================================
``adaptive``           weighted mean of min-max normalised channel scores, the weights set per
                       query by how far each channel's best stands out of its list, in ``[0, 1]``
``weighted_score``     weighted mean of normalised channel scores, in ``[0, 1]``
``rrf``                weighted reciprocal-rank sum divided by its maximum, in ``(0, 1]``
``max_score``          one channel: its raw score (cosine, BM25, ...); several: best normalised
                       score, in ``[0, 1]``
``rerank_with_model``  the rerank model's score, on the model's own scale
=====================  ==========================================================================

Shared rules: a channel's rank is the 1-based position in its list (ties keep the channel's
order); a segment listed twice by one channel counts once, at its first (best) place; a channel
present in ``candidates`` with an empty list was searched and found nothing. Equal final scores
are ordered by the segment's best rank in any channel, then by the order of the channels in
``candidates``, so results are deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from itertools import chain, zip_longest
from typing import Literal

from zhiku.core.errors import ConfigError, InvalidInput, ModelUnavailable
from zhiku.fusion.adaptive import adaptive_weights
from zhiku.fusion.types import Candidates, FusedHit, Normalization
from zhiku.providers.rerank.base import RerankModel

#: One channel's candidates: segment id → raw score, in the channel's order, no repeats.
_Column = dict[str, float]


def normalize(scores: Sequence[float], method: Normalization = "minmax") -> list[float]:
    """Map one channel's raw scores (best first) onto ``[0, 1]``, 1 the best.

    - ``minmax``: ``(s - min) / (max - min)`` over this list; the channel's weakest candidate gets
      0, the same as a segment the channel did not find.
    - ``zscore``: ``sigmoid((s - mean) / std)`` (population std); keeps how far apart scores
      are, not only their order, and never reaches exactly 0 or 1.
    - ``rank``: ``1 - (rank - 1) / n``; ignores the raw scores: 1 for the best, ``1/n`` the last.

    A list whose scores are all equal (one candidate included) gives 1.0 to each for ``minmax``
    and ``zscore``: the channel cannot tell them apart and each is as good as its best.
    """
    n = len(scores)
    if n == 0:
        return []
    if method == "rank":
        return [1.0 - i / n for i in range(n)]
    if method == "minmax":
        low, high = min(scores), max(scores)
        if high == low:
            return [1.0] * n
        span = high - low
        return [(s - low) / span for s in scores]
    if method == "zscore":
        mean = math.fsum(scores) / n
        std = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / n)
        if std == 0.0:
            return [1.0] * n
        return [1.0 / (1.0 + math.exp(-(s - mean) / std)) for s in scores]
    raise ConfigError(f"unknown score normalization {method!r}; use minmax, zscore or rank")


def weighted_score(
    candidates: Candidates,
    weights: Mapping[str, float],
    normalization: Normalization = "minmax",
    top_n: int | None = None,
) -> list[FusedHit]:
    """Weighted mean of each channel's normalised score.

    ``final = sum_c w_c * norm_c(segment)``, where ``norm_c`` is :func:`normalize` over channel
    ``c``'s candidate list and is 0 when ``c`` did not find the segment. Only the weights of the
    channels in ``candidates`` count, renormalised to sum to 1 (a searched channel without a
    weight weighs 0), so the final score lies in ``[0, 1]``: 1 means best in every weighted
    channel.

    Normalising first matters: dense cosines of one query's top 100 often sit within 0.03 of each
    other while BM25 spans tens, so a raw mix would be decided by one channel alone.

    Raises ConfigError if a weight is negative or the searched channels' weights sum to 0.
    """
    share = _shares(candidates, weights)

    def values(channel: str, raw: list[float]) -> list[float]:
        w = share[channel]
        return [w * s for s in normalize(raw, normalization)]

    return _fuse(_columns(candidates), values, "sum", top_n)


def adaptive_score(
    candidates: Candidates,
    weights: Mapping[str, float],
    top_n: int | None = None,
) -> list[FusedHit]:
    """:func:`weighted_score` (min-max) with each channel's weight scaled, per query, by how far
    its best candidate stands out of its list (:func:`~zhiku.fusion.adaptive.evidence`).

    ``final = sum_c w_c(q) * minmax_c(segment)`` with ``w_c(q)`` proportional to
    ``weight_c * log(1 + top_zscore_c(q))`` and summing to 1, so the final score lies in ``[0, 1]`` like
    ``weighted_score``'s, 1 meaning best in every channel. A channel whose best candidate barely
    stands out of its list (a vague match) gives way, for this query, to one that found a clear
    match; a channel with equal scores throughout weighs 0 unless every channel is that flat
    (then the weights are used as given). Works for any number of channels.

    Raises ConfigError like :func:`weighted_score`.
    """
    columns = _columns(candidates)
    scores = {channel: list(column.values()) for channel, column in columns.items()}
    share = adaptive_weights(scores, _shares(candidates, weights))

    def values(channel: str, raw: list[float]) -> list[float]:
        w = share[channel]
        return [w * s for s in normalize(raw, "minmax")]

    return _fuse(columns, values, "sum", top_n)


def rrf(
    candidates: Candidates,
    k: int = 60,
    weights: Mapping[str, float] | None = None,
    top_n: int | None = None,
) -> list[FusedHit]:
    """Reciprocal rank fusion, scaled to ``(0, 1]``.

    The classic RRF sum is ``sum_c w_c / (k + rank_c)`` over the channels that found the segment
    (``w_c`` = 1 for all when ``weights`` is None; a searched channel missing from ``weights``
    weighs 0). Its maximum is ``sum_c w_c / (k + 1)`` — first in every weighted channel. The
    final score is that sum divided by this maximum, so it lies in ``(0, 1]`` whatever ``k`` and
    the weights, and a ``score_threshold`` keeps its meaning; multiply by the maximum to get the
    classic value back. Raw scores only fill ``FusedHit.scores``.

    Raises ConfigError if ``k`` < 1, a weight is negative or the weights sum to 0.
    """
    if k < 1:
        raise ConfigError(f"rrf k must be at least 1, got {k}")
    share = _shares(candidates, weights if weights is not None else dict.fromkeys(candidates, 1.0))

    def values(channel: str, raw: list[float]) -> list[float]:
        # With shares summing to 1 the sum's maximum is 1 / (k + 1): scale by k + 1.
        w = share[channel] * (k + 1)
        return [w / (k + rank) for rank in range(1, len(raw) + 1)]

    return _fuse(_columns(candidates), values, "sum", top_n)


def max_score(
    candidates: Candidates, normalization: Normalization = "minmax", top_n: int | None = None
) -> list[FusedHit]:
    """No fusion (mode ``none``): each segment keeps its best score.

    With one channel the final score is that channel's raw score (cosine for ``semantic``, BM25
    for ``full_text``), so a threshold is in the channel's own units. With several channels raw
    scores are not comparable, so the final score is the segment's best :func:`normalize` score
    over the channels, in ``[0, 1]``.
    """
    if len(candidates) == 1:
        return _fuse(_columns(candidates), lambda _, raw: raw, "max", top_n)
    return _fuse(_columns(candidates), lambda _, raw: normalize(raw, normalization), "max", top_n)


def rerank_with_model(
    query: str,
    candidates: Candidates,
    texts: Mapping[str, str],
    model: RerankModel,
    top_n: int | None = None,
) -> list[FusedHit]:
    """Score the union of all channels' candidates with ``model``; its score is the final score.

    The final score is on the model's scale (a cross-encoder logit, an API's relevance in
    ``[0, 1]``, ...), so a threshold must be chosen for that model. ``texts`` maps every candidate
    id to the text the model reads. The model is called once, with the union in best-rank order,
    and not at all when there are no candidates.

    Raises InvalidInput if a candidate has no text, ModelUnavailable if the model returns a
    different number of scores than texts (or raises it itself).
    """
    columns = _columns(candidates)
    union = _union(columns)
    if not union:
        return []
    missing = [sid for sid in union if sid not in texts]
    if missing:
        raise InvalidInput(f"no text for {len(missing)} candidate(s) to rerank, e.g. {missing[0]}")
    scores = model.rerank(query, [texts[sid] for sid in union])
    if len(scores) != len(union):
        raise ModelUnavailable(
            f"rerank model {model.name!r} returned {len(scores)} scores for {len(union)} texts"
        )
    return _best(columns, union, dict(zip(union, scores, strict=True)), top_n)


def cut(
    hits: Sequence[FusedHit], *, score_threshold: float | None = None, top_k: int | None = None
) -> list[FusedHit]:
    """Keep hits whose score is ``>= score_threshold``, then the first ``top_k``.

    ``hits`` must be sorted best first (as every fusion returns them); None disables a limit.
    """
    kept = list(hits) if score_threshold is None else [h for h in hits if h.score >= score_threshold]
    return kept if top_k is None else kept[:top_k]


def _shares(candidates: Candidates, weights: Mapping[str, float]) -> dict[str, float]:
    """Weights of the searched channels, renormalised to sum to 1."""
    chosen = {channel: float(weights.get(channel, 0.0)) for channel in candidates}
    negative = [channel for channel, w in chosen.items() if w < 0]
    if negative:
        raise ConfigError(f"fusion weights must not be negative: {', '.join(negative)}")
    total = sum(chosen.values())
    if chosen and total <= 0:
        raise ConfigError(f"fusion weights of the searched channels ({', '.join(chosen)}) sum to 0")
    return {channel: w / total for channel, w in chosen.items()}


def _fuse(
    columns: Mapping[str, _Column],
    values: Callable[[str, list[float]], Sequence[float]],
    combine: Literal["sum", "max"],
    top_n: int | None,
) -> list[FusedHit]:
    """Combine each channel's per-candidate ``values(channel, raw_scores)`` into final scores."""
    final: dict[str, float] = {}
    get = final.get
    for channel, column in columns.items():
        channel_values = values(channel, list(column.values()))
        if combine == "sum":
            for sid, value in zip(column, channel_values, strict=True):
                final[sid] = get(sid, 0.0) + value
        else:
            for sid, value in zip(column, channel_values, strict=True):
                best = get(sid)
                if best is None or value > best:
                    final[sid] = value
    return _best(columns, _union(columns), final, top_n)


def _columns(candidates: Candidates) -> dict[str, _Column]:
    columns: dict[str, _Column] = {}
    for channel, hits in candidates.items():
        column = dict(hits)
        if len(column) != len(hits):  # repeated ids: keep each at its first place
            column = {}
            for sid, score in hits:
                column.setdefault(sid, score)
        columns[channel] = column
    return columns


def _union(columns: Mapping[str, _Column]) -> list[str]:
    """Every candidate once, met rank by rank across channels (all rank 1, then all rank 2...)."""
    seen = dict.fromkeys(chain.from_iterable(zip_longest(*columns.values())))
    return [sid for sid in seen if sid is not None]  # None: zip_longest's filler


def _best(
    columns: Mapping[str, _Column],
    union: list[str],
    final: Mapping[str, float],
    top_n: int | None,
) -> list[FusedHit]:
    """The ``top_n`` best of ``union`` as FusedHits; the stable sort keeps ties in union order."""
    chosen = sorted(union, key=final.__getitem__, reverse=True)[:top_n]
    rank_of = {
        ch: dict(zip(column, range(1, len(column) + 1), strict=True)) for ch, column in columns.items()
    }
    hits = []
    for sid in chosen:
        scores: dict[str, float] = {}
        ranks: dict[str, int] = {}
        for channel, column in columns.items():
            if sid in column:
                scores[channel] = float(column[sid])
                ranks[channel] = rank_of[channel][sid]
        hits.append(FusedHit(sid, float(final[sid]), scores, ranks))
    return hits
