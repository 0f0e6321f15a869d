"""Latency percentiles and a timing loop with warm-up."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from zhiku.core.errors import InvalidInput

T = TypeVar("T")

WARMUP_CALLS = 5


@dataclass(frozen=True)
class Latency:
    """Percentiles of one operation's wall time, in milliseconds, over ``count`` calls."""

    p50: float
    p95: float
    count: int
    p99: float = 0.0

    @classmethod
    def of(cls, seconds: Sequence[float]) -> Latency:
        if not seconds:
            raise InvalidInput("no timings to summarise")
        p50, p95, p99 = np.percentile(np.asarray(seconds) * 1000.0, [50, 95, 99])
        p50, p95, p99 = (round(float(value), 4) for value in (p50, p95, p99))
        return cls(p50=p50, p95=p95, count=len(seconds), p99=p99)

    def to_json(self) -> dict[str, float]:
        return {"p50": self.p50, "p95": self.p95, "p99": self.p99, "n": self.count}


def time_each(items: Sequence[T], call: Callable[[T], object], warmup: int = WARMUP_CALLS) -> list[float]:
    """Seconds of ``call(item)`` for each item, after ``warmup`` untimed calls on the first items."""
    for item in items[:warmup]:
        call(item)
    seconds = []
    for item in items:
        started = time.perf_counter()
        call(item)
        seconds.append(time.perf_counter() - started)
    return seconds


def time_warm(items: Sequence[T], call: Callable[[T], object]) -> list[float]:
    """Seconds of ``call(item)`` for each item, after one untimed pass over all of them.

    What a search costs once the pages it reads are in memory, as a running server's searches
    mostly find them: the first pass over a dataset just opened reads them from disk, and a
    ratio of two passes, one of them first, would measure which came first.
    """
    return time_each(items, call, warmup=len(items))


def paired_sum(first: Sequence[float], second: Sequence[float]) -> list[float]:
    """``first[i] + second[i % len(second)]``: the latency of two measured steps run in a row."""
    if not second:
        raise InvalidInput("second series is empty")
    return [value + second[i % len(second)] for i, value in enumerate(first)]
