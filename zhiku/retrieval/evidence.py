"""A search's hits scored by their relevance, from what the channels found."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from zhiku.core.retrieval_config import Channel
from zhiku.fusion.types import FusedHit
from zhiku.retrieval.channels import Ranked
from zhiku.retrieval.relevance import Calibration, Evidence

#: Channels whose score over the query's attainable score is lexical evidence: BM25 and, where it
#: was searched, the keyword postings (the larger share counts).
LEXICAL_CHANNELS: tuple[Channel, ...] = ("full_text", "keyword")


class EvidenceScale:
    """Turns fused hits' scores into relevance (:mod:`zhiku.retrieval.relevance`) from what the
    channels found: a hit's cosine is its semantic score, its lexical evidence its BM25 (or keyword)
    score over the query's attainable one. A hit a channel searched but did not return has at most that
    channel's weakest candidate's score (its list was full) or, for BM25, shares no term (it was
    not): those bounds are its evidence."""

    def __init__(self, calibration: Calibration, limit: int, attainable: Mapping[str, float]) -> None:
        self._calibration = calibration
        self._limit = limit
        self._attainable = attainable

    def score(self, hits: Sequence[FusedHit], found: Mapping[str, Ranked]) -> None:
        for hit in hits:
            evidence = self._evidence(hit, found)
            relevance = self._calibration.relevance(evidence)
            hit.fusion = hit.score
            hit.score = relevance if relevance is not None else 0.0
            hit.evidence = evidence.as_dict()

    def _evidence(self, hit: FusedHit, found: Mapping[str, Ranked]) -> Evidence:
        cosine = self._raw(hit, "semantic", found, absent=None)
        lexical = None
        for channel, attainable in self._attainable.items():
            raw = self._raw(hit, channel, found, absent=0.0)
            if raw is not None:
                share = min(1.0, raw / attainable) if attainable > 0 else 0.0
                lexical = share if lexical is None else max(lexical, share)
        return Evidence(cosine=_finite(cosine), lexical=_finite(lexical))

    def _raw(
        self, hit: FusedHit, channel: str, found: Mapping[str, Ranked], absent: float | None
    ) -> float | None:
        if channel not in found:
            return None
        if channel in hit.scores:
            return hit.scores[channel]
        listed = found[channel]
        if not listed:
            return absent
        score = dict(listed).get(hit.segment_id)
        if score is not None:
            return score
        return listed[-1][1] if len(listed) >= self._limit or absent is None else absent


def _finite(value: float | None) -> float | None:
    """A value a model can read: None for NaN or infinity (a zero vector's cosine, say)."""
    return value if value is not None and math.isfinite(value) else None
