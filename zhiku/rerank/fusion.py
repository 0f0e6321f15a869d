"""Fusion: turn each channel's ranked candidates into one ranking with one final score.

Every function takes :data:`~zhiku.rerank.types.Candidates` — per channel, ``(segment_id,
raw_score)`` best first, higher is better — and returns :class:`~zhiku.rerank.types.FusedHit`
sorted by final score, best first. What the final score means (and so what a
``score_threshold`` compares against) differs per fusion:

=====================  ==========================================================================
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
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence

from zhiku.core.errors import ConfigError, InvalidInput, ModelUnavailable
from zhiku.rerank.types import Candidates, FusedHit, Normalization, RerankModel

_Ranked = list[tuple[str, float]]


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

    def channel_scores(channel: str, hits: _Ranked) -> list[float]:
        w = share[channel]
        return [w * s for s in normalize([s for _, s in hits], normalization)]

    return _merge(candidates, channel_scores, operator.add)


def rrf(
    candidates: Candidates,
    k: int = 60,
    weights: Mapping[str, float] | None = None,
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
    # With shares summing to 1 the maximum of the sum is 1 / (k + 1).
    top = k + 1

    def channel_scores(channel: str, hits: _Ranked) -> list[float]:
        w = share[channel]
        return [w * top / (k + rank) for rank in range(1, len(hits) + 1)]

    return _merge(candidates, channel_scores, operator.add)


def max_score(candidates: Candidates, normalization: Normalization = "minmax") -> list[FusedHit]:
    """No fusion (mode ``none``): each segment keeps its best score.

    With one channel the final score is that channel's raw score (cosine for ``semantic``, BM25
    for ``full_text``), so a threshold is in the channel's own units. With several channels raw
    scores are not comparable, so the final score is the segment's best :func:`normalize` score
    over the channels, in ``[0, 1]``.
    """
    if len(candidates) == 1:
        return _merge(candidates, lambda _, hits: [s for _, s in hits], max)
    return _merge(candidates, lambda _, hits: normalize([s for _, s in hits], normalization), max)


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
    id to the text the model reads; ``top_n`` keeps the best ``top_n`` (all when None). The model
    is called once, and not at all when there are no candidates.

    Raises InvalidInput if a candidate has no text, ModelUnavailable if the model returns a
    different number of scores than texts (or raises it itself).
    """
    fused = _merge(candidates, lambda _, hits: [0.0] * len(hits), max)
    if not fused:
        return []
    missing = [hit.segment_id for hit in fused if hit.segment_id not in texts]
    if missing:
        raise InvalidInput(f"no text for {len(missing)} candidate(s) to rerank, e.g. {missing[0]}")
    scores = model.rerank(query, [texts[hit.segment_id] for hit in fused])
    if len(scores) != len(fused):
        raise ModelUnavailable(
            f"rerank model {model.name!r} returned {len(scores)} scores for {len(fused)} texts"
        )
    for hit, score in zip(fused, scores, strict=True):
        hit.score = float(score)
    return _ordered(fused)[:top_n]


def cut(
    hits: Sequence[FusedHit], *, score_threshold: float | None = None, top_k: int | None = None
) -> list[FusedHit]:
    """Keep hits whose score is ``>= score_threshold``, then the first ``top_k``.

    ``hits`` must be sorted best first (as every fusion returns them); None disables a limit.
    """
    kept = (
        list(hits) if score_threshold is None else [h for h in hits if h.score >= score_threshold]
    )
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


def _merge(
    candidates: Candidates,
    channel_scores: Callable[[str, _Ranked], Sequence[float]],
    combine: Callable[[float, float], float],
) -> list[FusedHit]:
    """Union of the channels' candidates; each channel's per-candidate values are combined.

    Candidates are met rank by rank across channels (every rank 1, then every rank 2, ...), so
    the stable sort by score leaves ties in best-rank, then channel order.
    """
    columns = []
    for channel, listed in candidates.items():
        hits = _unique(listed)
        columns.append((channel, hits, channel_scores(channel, hits)))
    fused: dict[str, FusedHit] = {}
    depth = max((len(hits) for _, hits, _ in columns), default=0)
    for i in range(depth):
        rank = i + 1
        for channel, hits, values in columns:
            if i >= len(hits):
                continue
            sid, raw = hits[i]
            hit = fused.get(sid)
            if hit is None:
                fused[sid] = FusedHit(sid, values[i], {channel: raw}, {channel: rank})
            else:
                hit.score = combine(hit.score, values[i])
                hit.scores[channel] = raw
                hit.ranks[channel] = rank
    return _ordered(fused.values())


def _unique(hits: Iterable[tuple[str, float]]) -> _Ranked:
    seen: set[str] = set()
    out: _Ranked = []
    for sid, score in hits:
        if sid not in seen:
            seen.add(sid)
            out.append((sid, float(score)))
    return out


def _ordered(hits: Iterable[FusedHit]) -> list[FusedHit]:
    return sorted(hits, key=operator.attrgetter("score"), reverse=True)  # stable: keeps ties in order
