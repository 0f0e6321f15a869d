"""How a dense search restricted to a scope runs on Qdrant (the embedded shard and a server alike).

Qdrant's filtered HNSW walk follows the graph's links and drops the points the filter refuses; a
filter that admits few of the points cuts most links, and the walk ends stranded, missing most
of the exact top 10. So a restricted search first asks how many points the scope admits
(Qdrant's cardinality estimate from the payload indexes: no scan, well under a millisecond) and
then:

- up to the collection's ``plain_search_max`` admitted points (under Qdrant's full-scan bound:
  on the embedded shards a fifth of the shard's points, from about 13,000 to 131,072 of 384
  dimensions, see ``edge_config``; none on a server), leaves the plan to Qdrant, which scans them
  through the payload index by their int8 copies and rescores the best by their vectors
  (:data:`PLAIN_SCAN`: recall@10 against exact 1.0 at 10% of 100,000 points, 1.3 against 2.8 ms
  for ``exact``; at 10% of a million, 8.7–9 against 13.5–14 ms);
- up to :data:`EXACT_SEARCH_MAX` admitted points, searches them exactly: Qdrant reads them
  through the payload index and compares each with the query, about one distance per admitted
  point, which stays at or below what ACORN costs up to that bound (so a filter keeping a tenth
  of a million segments is still searched exactly);
- above it, walks the graph with ACORN (each step also looks at the neighbours' neighbours, so
  the walk crosses refused points) and a beam of at least :data:`ACORN_HNSW_EF`, where recall@10
  against exact reaches 0.99; Qdrant applies ACORN only when the estimated share admitted is at
  most its ``max_selectivity`` (0.4), above which the plain walk finds enough admitted points.

The figures behind both bounds are on the documentation's Speed page.

An unrestricted search (or one that only leaves documents out) is not counted and runs as before.
A scope of payload tests whose list of documents is not read may admit few points or most: it is
counted, and one admitting more than half the points runs as an unrestricted search (as a scope
listing the documents it leaves out does).
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


#: Left to the engine, whose full-scan bound the admitted points are under: it scans them, by
#: their int8 copies on the embedded shards (then rescoring the best by their vectors), which
#: costs about 0.12 µs a point against 0.3 µs for ``exact`` (which reads the float vectors).
PLAIN_SCAN = DenseSearchPlan()


def is_restricted(scope: DocumentScope | None) -> bool:
    """Whether a search in ``scope`` may admit few points, so they are counted first: a list of
    the documents admitted, a section, or payload tests (whose list is not read). A scope leaving
    documents out admits most of them (a scope keeps the shorter list)."""
    return scope is not None and (scope.section is not None or not scope.listed or not scope.exclude)


def graph_search(limit: int, hnsw_ef: int) -> DenseSearchPlan:
    """The unrestricted search: the graph walk with a beam of at least ``limit``."""
    return DenseSearchPlan(hnsw_ef=max(hnsw_ef, limit))


def restricted_search(
    admitted: int,
    limit: int,
    hnsw_ef: int,
    exact_max: int = EXACT_SEARCH_MAX,
    plain_max: int = 0,
    points: int = 0,
) -> DenseSearchPlan:
    """The plan for a search whose scope admits about ``admitted`` of ``points`` points: more
    than half of them, the unrestricted walk; up to ``plain_max`` (if above 0) the engine's own
    plan (a scan of the points, below its full-scan bound), up to ``exact_max`` exact, else the
    ACORN walk with a beam of at least ``ACORN_HNSW_EF``."""
    if 2 * admitted > points > 0:
        return graph_search(limit, hnsw_ef)
    if admitted <= plain_max and plain_max > 0:
        return PLAIN_SCAN
    if admitted <= exact_max:
        return DenseSearchPlan(exact=True)
    return DenseSearchPlan(hnsw_ef=max(hnsw_ef, limit, ACORN_HNSW_EF), acorn=True)
