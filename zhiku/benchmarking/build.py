"""Search latency while a dataset's stores build their indexes, and how long the build takes.

The benchmark's ``zhiku ingest`` leaves the build for later (``--no-optimize``). Here
:meth:`DatasetIndex.optimize` runs in a thread and, until it returns, hybrid searches with and
without a metadata filter are timed in turn, as served queries would meet them. On the embedded
stores the build runs in a child process on a copy of each shard (see
``zhiku/datasource/points/edge.py``): searches answer from the open shard, the dense channel by an
exact scan, and wait only while the built copy is swapped in. Were the build in this process, it
would hold the GIL and no search would answer until it ended: the p99 shows which it is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from zhiku.benchmarking.latency import hybrid_config, precomputed_queries
from zhiku.core.scope import DocumentScope
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex


@dataclass
class BuildRun:
    """The build's wall time and the seconds of each search made while it ran, per method."""

    seconds: float
    searches: dict[str, list[float]]


def latencies_during_build(
    index: DatasetIndex,
    queries: Sequence[str],
    filtered_scope: Callable[[], DocumentScope | None],
    top_k: int = 10,
) -> BuildRun:
    """Run ``index.optimize()`` and time ``hybrid`` and ``hybrid_filtered`` searches (scope from
    ``filtered_scope()``, its SQL included) until it returns; query embedding excluded. Raises
    what the build raised."""
    vectors: dict[str, np.ndarray] = {query: index.embedding.embed_query(query) for query in queries}
    hybrid = hybrid_config(top_k)
    searches: dict[str, list[float]] = {"hybrid": [], "hybrid_filtered": []}
    failures: list[BaseException] = []
    done = threading.Event()

    def build() -> None:
        try:
            index.optimize()
        except BaseException as exc:  # re-raised in the calling thread
            failures.append(exc)
        finally:
            done.set()

    with precomputed_queries(index, vectors):
        builder = threading.Thread(target=build, name="zhiku-bench-optimize")
        started = time.perf_counter()
        builder.start()
        turn = 0
        while True:  # at least one round, however short the build
            query = queries[turn % len(queries)]
            turn += 1
            for name in searches:
                before = time.perf_counter()
                scope = filtered_scope() if name == "hybrid_filtered" else None
                index.search_service.fused(query, hybrid, scope=scope)
                searches[name].append(time.perf_counter() - before)
            if done.is_set():
                break
        builder.join()
        seconds = time.perf_counter() - started
    if failures:
        raise failures[0]
    return BuildRun(seconds=seconds, searches=searches)
