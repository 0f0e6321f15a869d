"""How a dense search restricted to a scope runs on Qdrant (the embedded shard and a server alike).

Qdrant's filtered HNSW walk follows the graph's links and drops the points the filter refuses; a
filter that admits few of the points cuts most links, and the walk ends stranded: at 100k
benchmark segments a filter admitting 10% of them found 19% of the exact top 10, and a 1% filter
at 1M often one point. So a restricted search first asks how many points the scope admits
(Qdrant's cardinality estimate from the payload indexes, no scan) and then:

- up to :data:`EXACT_SEARCH_MAX` admitted points, searches them exactly: Qdrant reads them
  through the payload index and compares each with the query. On the 100k-segment benchmark
  shard (384-d synthetic vectors, 100 candidates as hybrid search asks, CPU time per search on a
  busy 2-core machine) the exact search of 10,000 admitted points took 1.9 ms, an unfiltered
  graph search 1.8 ms, the stranded walk 1.0 ms (recall@10 0.43) and ACORN 9.2 ms; the exact
  search costs about one distance per admitted point, so it stays below ACORN up to some 50,000
  points, and idle the exact search of 100,000 points (~14 ms) costs what ACORN does at a
  million segments (~19 ms, recall 0.52 at Qdrant's default beam). The bound is the upper end
  of that range, so a filter keeping a tenth of a million segments is still searched exactly.
  The count is Qdrant's cardinality estimate (0.02-0.3 ms; 9,521 for 10,000 admitted points);
- above it, walks the graph with ACORN (each step also looks at the neighbours' neighbours, so
  the walk crosses refused points) and a beam of at least :data:`ACORN_HNSW_EF` (recall@10 0.93
  at a beam of 128, 0.99 at 256, with 10% of 100k admitted); Qdrant applies ACORN only when the
  estimated share admitted is at most its ``max_selectivity`` (0.4), above which the plain walk
  finds enough admitted points.

An unrestricted search (or one that only leaves documents out) is not counted and runs as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from zhiku.core.scope import DocumentScope

#: Admitted points up to which a restricted search is exact (see the module docstring).
EXACT_SEARCH_MAX = 100_000
#: The smallest beam of an ACORN walk.
ACORN_HNSW_EF = 256


@dataclass(frozen=True)
class DenseSearchPlan:
    """How one search runs: exactly, or a graph walk with beam ``hnsw_ef`` (and ACORN)."""

    exact: bool = False
    hnsw_ef: int | None = None
    acorn: bool = False


def is_restricted(scope: DocumentScope | None) -> bool:
    """Whether a search in ``scope`` may admit few points, so they are counted first: a list of
    the documents admitted, or a section. A scope leaving documents out admits most of them (a
    scope keeps the shorter list)."""
    return scope is not None and (not scope.exclude or scope.section is not None)


def graph_search(limit: int, hnsw_ef: int) -> DenseSearchPlan:
    """The unrestricted search: the graph walk with a beam of at least ``limit``."""
    return DenseSearchPlan(hnsw_ef=max(hnsw_ef, limit))


def restricted_search(
    admitted: int, limit: int, hnsw_ef: int, exact_max: int = EXACT_SEARCH_MAX
) -> DenseSearchPlan:
    """The plan for a search whose scope admits about ``admitted`` points: exact up to
    ``exact_max`` of them, else the ACORN walk with a beam of at least ``ACORN_HNSW_EF``."""
    if admitted <= exact_max:
        return DenseSearchPlan(exact=True)
    return DenseSearchPlan(hnsw_ef=max(hnsw_ef, limit, ACORN_HNSW_EF), acorn=True)
