"""The bars of the hit-testing chart: for each hit, its relevance and each channel's own score and
rank. The relevance bar is absolute (0 to 1, the same meaning for every method, so the dataset's
threshold is a fixed mark on it); each channel's bar is scaled to the best score of its kind among
the hits shown (channels' raw scores live on different scales: cosine, BM25, keyword weight)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

BAR_WIDTH = 160


@dataclass(frozen=True)
class Bar:
    label: str
    score: float | None
    rank: int | None
    width: int  # pixels of BAR_WIDTH; 0 when the channel did not find the hit


def _width(score: float | None, best: float) -> int:
    if score is None or best <= 0:
        return 0
    return max(1, round(BAR_WIDTH * max(0.0, score) / best))


def channel_bars(records: Sequence[dict[str, Any]], channels: Sequence[str]) -> list[list[Bar]]:
    """One list per record: the relevance bar, then one bar per searched channel."""
    best = {
        channel: max((float(r["scores"][channel]) for r in records if channel in r["scores"]), default=0.0)
        for channel in channels
    }
    bars = []
    for record in records:
        relevance = float(record["score"])
        row = [Bar("relevance", relevance, None, _width(min(1.0, relevance), 1.0))]
        for channel in channels:
            score = record["scores"].get(channel)
            row.append(Bar(channel, score, record["ranks"].get(channel), _width(score, best[channel])))
        bars.append(row)
    return bars


def threshold_mark(threshold: float | None) -> int | None:
    """Where the threshold sits on the relevance bar, in pixels (None: no threshold)."""
    return None if threshold is None else round(BAR_WIDTH * min(1.0, max(0.0, threshold)))
