"""The values shared by the fusion functions and their callers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

#: Each channel's answer, best first, as the channel returned it: ``(segment_id, raw_score)``,
#: higher is better. Keys are channel names (``semantic``, ``full_text``, ``keyword``).
Candidates = Mapping[str, Sequence[tuple[str, float]]]

#: How ``weighted_score`` (and ``max_score`` over several channels) puts each channel's raw
#: scores on a common ``[0, 1]`` scale. See :func:`zhiku.fusion.fusion.normalize`.
Normalization = Literal["minmax", "zscore", "rank"]


@dataclass(slots=True)
class FusedHit:
    """One segment after fusion.

    ``score`` is the final score (its meaning depends on the fusion, see ``zhiku.fusion.fusion``);
    ``scores`` and ``ranks`` hold, for each channel that found the segment, its raw score and its
    1-based rank in that channel's list. ``children`` (parent-child index) are the segment's
    child chunks that matched, ``(child_id, score)`` best first.
    """

    segment_id: str
    score: float
    scores: dict[str, float] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)
    children: list[tuple[str, float]] = field(default_factory=list)
    #: The fusion's own score once ``score`` holds the hit's relevance (see
    #: :mod:`zhiku.retrieval.relevance`); None while ``score`` is still the fusion's.
    fusion: float | None = None
    #: What the relevance was estimated from (``cosine``, ``lexical``; see ``Evidence``).
    evidence: dict[str, float] = field(default_factory=dict)
