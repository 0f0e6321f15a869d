"""The filter of an embedded shard's searches, without the conditions every point passes.

A search admits enabled points and, unless it asks for them, no summaries. Qdrant checks each
condition of a filter on every point it visits: on the 100,000-segment benchmark, the ``enabled``
check alone took 1.5 of the 3.9 ms of an exact search among the 9,500 points of a tenth of the
documents. Most datasets have no disabled segment and no summary, so the conditions are left out
while the shard holds no point that fails them; two counts through the payload indexes (as long
as the points that fail them, so next to nothing) tell, once per write.
"""

from __future__ import annotations

import threading
from typing import Any

import qdrant_edge as qe

from zhiku.core.payload_filter import FieldTest, PayloadFilter
from zhiku.core.scope import DocumentScope
from zhiku.datasource.points.collection import DOCUMENT_KEY, ENABLED_KEY, SECTIONS_KEY, SUMMARY_KEY

_DISABLED = qe.Filter(must=[qe.FieldCondition(ENABLED_KEY, match=qe.MatchValue(0))])
_SUMMARIES = qe.Filter(must=[qe.FieldCondition(SUMMARY_KEY, match=qe.MatchValue(1))])


class ServedFilters:
    """Builds a shard's search filters, knowing (until the next write) whether it holds any
    disabled point or any summary.

    Call :meth:`written` after every write has been applied: a search that begins after it
    counts again, and one that counted before it never keeps its answer past it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._writes = 0
        self._known: tuple[int, bool, bool] | None = None  # writes seen, any disabled, any summary

    def written(self) -> None:
        with self._lock:
            self._writes += 1

    def _present(self, shard: qe.EdgeShard) -> tuple[bool, bool]:
        """Whether the shard holds a disabled point, and a summary."""
        with self._lock:
            writes, known = self._writes, self._known
        if known is not None and known[0] == writes:
            return known[1], known[2]
        disabled = shard.count(qe.CountRequest(exact=True, filter=_DISABLED)) > 0
        summaries = shard.count(qe.CountRequest(exact=True, filter=_SUMMARIES)) > 0
        with self._lock:
            if self._writes == writes:  # no write began to count for since: still true
                self._known = (writes, disabled, summaries)
        return disabled, summaries

    def of(self, shard: qe.EdgeShard, scope: DocumentScope | None, summaries: bool) -> qe.Filter | None:
        """Enabled points, of the documents (and the section) ``scope`` admits, summaries only if
        ``summaries``; None when that is every point."""
        any_disabled, any_summary = self._present(shard)
        return search_filter(scope, summaries, check_enabled=any_disabled, check_summary=any_summary)


def search_filter(
    scope: DocumentScope | None, summaries: bool, *, check_enabled: bool = True, check_summary: bool = True
) -> qe.Filter | None:
    """The filter of ``scope`` and ``summaries``, leaving out the checks of ``enabled`` and of
    ``summary`` when told no point fails them."""
    must: list[Any] = [qe.FieldCondition(ENABLED_KEY, match=qe.MatchValue(1))] if check_enabled else []
    must_not: list[Any] = (
        [qe.FieldCondition(SUMMARY_KEY, match=qe.MatchValue(1))] if check_summary and not summaries else []
    )
    if scope is not None and scope.payload_filter is None and scope.exclude and not scope.all_documents:
        must_not.append(_in_documents(scope))
    must.extend(scope_conditions(scope))
    if not must and not must_not:
        return None
    return qe.Filter(must=must or None, must_not=must_not or None)


def scope_conditions(scope: DocumentScope | None) -> list[Any]:
    """The conditions a point must meet to be in ``scope``: of a listed document, of its section
    (a scope leaving documents out lists them in ``must_not``, see :func:`search_filter`); with a
    payload filter, its tests instead of the list."""
    conditions: list[Any] = []
    if scope is not None and scope.payload_filter is not None:
        conditions.extend(payload_conditions(scope.payload_filter))
    elif scope is not None and not scope.exclude and not scope.all_documents:
        conditions.append(_in_documents(scope))
    if scope is not None and scope.section is not None:
        conditions.append(qe.FieldCondition(SECTIONS_KEY, match=qe.MatchValue(scope.section)))
    return conditions


def _in_documents(scope: DocumentScope) -> Any:
    return qe.FieldCondition(DOCUMENT_KEY, match=qe.MatchAny(sorted(scope.ids)))


def payload_conditions(tests: PayloadFilter) -> list[Any]:
    """A payload filter as conditions that must all hold. Tests joined by ``and`` stay apart, not
    nested in a filter of their own: Qdrant reads a top-level condition through its payload
    index, and scanned a nested one's points one by one (a 10% range of a million points: 37
    against 19 ms)."""
    conditions = [_test_condition(test) for test in tests.tests]
    return [qe.Filter(should=conditions)] if tests.any_of else conditions


def _test_condition(test: FieldTest) -> Any:
    condition: Any
    if test.empty:
        condition = qe.IsEmptyCondition(test.key)
    elif test.numbers:
        condition = qe.Filter(
            should=[qe.FieldCondition(test.key, range=qe.RangeFloat(gte=v, lte=v)) for v in test.numbers]
        )
    elif test.strings:
        condition = qe.FieldCondition(test.key, match=qe.MatchAny(list(test.strings)))
    else:
        bounds = qe.RangeFloat(gt=test.gt, gte=test.gte, lt=test.lt, lte=test.lte)
        condition = qe.FieldCondition(test.key, range=bounds)
    return qe.Filter(must_not=[condition]) if test.negate else condition
