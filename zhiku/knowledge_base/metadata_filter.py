"""A checked metadata filter resolved to a :class:`~zhiku.core.scope.DocumentScope`.

Each condition on a dataset's own field reads an index range of the typed values table
(:class:`~zhiku.core.db.models.MetadataValueRow`): the documents whose value passes the test, or,
for a condition that also keeps the documents without a value (``empty``, the negative
operators), the documents whose value fails it, which the condition leaves out. The conditions'
sets are joined in Python, so the cost grows with the documents a test names, not with the
dataset; only a built-in field (a column of the document itself) reads the documents table.

The scope lists the matching documents, or the non-matching ones when those are fewer: the
dataset's size is only probed that far (an index walk of twice the listed set), never counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import reduce
from operator import itemgetter
from typing import Any

from sqlalchemy import Select, Text, func, literal, literal_column, not_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from zhiku.core.db.models import DocumentRow, MetadataValueRow
from zhiku.core.metadata import CheckedCondition
from zhiku.core.scope import DocumentScope

# the tables' columns, not the ORM attributes: a filter builds its statements anew each time
_V = MetadataValueRow.__table__.c
_DOCUMENTS = DocumentRow.__table__.c

#: A negative operator's positive twin: the documents it leaves out are the twin's matches.
_POSITIVE_OF = {"not contains": "contains", "is not": "is", "≠": "=", "not in": "in"}


def resolve(
    session: Session, dataset_id: str, conditions: Sequence[CheckedCondition], logical_operator: str
) -> DocumentScope:
    """The documents of ``dataset_id`` that ``conditions`` keep, joined by ``and`` or ``or``."""
    parts = [_condition(session, dataset_id, c) for c in conditions]
    join = DocumentScope.intersect if logical_operator == "and" else DocumentScope.union
    return _shorter_list(session, dataset_id, reduce(join, parts))


def _condition(session: Session, dataset_id: str, condition: CheckedCondition) -> DocumentScope:
    if condition.field_id is None:
        of_dataset = _DOCUMENTS.dataset_id == dataset_id
        return DocumentScope(_ids(session, select(_DOCUMENTS.id).where(of_dataset, _builtin_test(condition))))
    statement, leaves_out = _listed(session, dataset_id, condition)
    return DocumentScope(_ids(session, statement), exclude=leaves_out)


def _listed(
    session: Session, dataset_id: str, condition: CheckedCondition
) -> tuple[Select[tuple[str]], bool]:
    """The values-table select of the documents a condition on a field keeps, or of those it
    leaves out (True) when it keeps the documents without a value too."""
    column = _V.text_value if condition.type == "string" else _V.number_value
    of_field = select(_V.document_id).where(
        _V.dataset_id == dataset_id, _V.field_id == condition.field_id, column.is_not(None)
    )
    op, value = condition.operator, condition.value
    if op in ("empty", "not empty"):
        present = of_field.where(column != "") if condition.type == "string" else of_field
        return present, op == "empty"
    positive = _POSITIVE_OF.get(op, op)
    statement = of_field.where(_compare(column, positive, value))
    if positive == "start with" and session.get_bind().dialect.name == "sqlite":
        statement = _prefix_range(statement, value)
    return statement, op in _POSITIVE_OF


def _prefix_range(statement: Select[tuple[str]], prefix: str) -> Select[tuple[str]]:
    """The folded texts that start with ``prefix`` as an index range (SQLite compares text by
    its bytes, and no UTF-8 text holds byte FF, so it bounds every continuation)."""
    folded, start = func.lower(_V.text_value), func.lower(literal(prefix, Text))
    return statement.where(folded >= start, folded < start.concat(literal_column("CAST(x'ff' AS TEXT)")))


def _shorter_list(session: Session, dataset_id: str, scope: DocumentScope) -> DocumentScope:
    """``scope`` as the shorter of its two lists: the kept documents when at most half the
    dataset, else the others. (The others are read as all the dataset's ids less the listed
    ones: a ``NOT IN`` of the listed ones costs SQLite more than that.)"""
    listed = len(scope.ids)
    of_dataset = _DOCUMENTS.dataset_id == dataset_id
    # does the dataset hold at least 2 × listed (kept), or 2 × listed + 1 (left out) documents?
    probe = 2 * listed if scope.exclude else 2 * listed - 1
    at = select(_DOCUMENTS.dataset_id).where(of_dataset).offset(probe).limit(1)
    if probe < 0 or session.connection().execute(at).first() is not None:
        return scope
    others = _ids(session, select(_DOCUMENTS.id).where(of_dataset)) - scope.ids
    return DocumentScope(others, exclude=not scope.exclude)


def _ids(session: Session, statement: Select[tuple[str]]) -> frozenset[str]:
    """The ids a one-column select reads, taken from the driver's cursor as they are: a row
    object per id would cost SQLAlchemy more than the database's own index walk."""
    result = session.connection().execute(statement)
    try:
        return frozenset(map(itemgetter(0), result.cursor.fetchall()))
    finally:
        result.close()


def _builtin_test(condition: CheckedCondition) -> ColumnElement[bool]:
    """A condition on a built-in field: a test of the document's own column."""
    op, value = condition.operator, condition.value
    column = _builtin_column(condition.name)
    if op in ("empty", "not empty"):
        empty = column.is_(None) | (column == "") if condition.type == "string" else column.is_(None)
        return empty if op == "empty" else not_(empty)
    if condition.type == "time":
        value = [_as_datetime(v) for v in value] if isinstance(value, list) else _as_datetime(value)
    test = _compare(column, op, value)
    if op in _POSITIVE_OF:
        return column.is_(None) | test
    return column.is_not(None) & test


def _builtin_column(name: str) -> ColumnElement[Any]:
    columns: dict[str, ColumnElement[Any]] = {
        "document_name": _DOCUMENTS.name,
        "source": _DOCUMENTS.source,
        "upload_date": _DOCUMENTS.created_at,
        "last_update_date": func.coalesce(_DOCUMENTS.completed_at, _DOCUMENTS.created_at),
    }
    return columns[name]


_OPERATOR_SQL: dict[str, Callable[[ColumnElement[Any], Any], ColumnElement[bool]]] = {
    "contains": lambda column, value: column.icontains(value, autoescape=True),
    "not contains": lambda column, value: not_(column.icontains(value, autoescape=True)),
    "start with": lambda column, value: column.istartswith(value, autoescape=True),
    "end with": lambda column, value: column.iendswith(value, autoescape=True),
    "is": lambda column, value: column == value,
    "=": lambda column, value: column == value,
    "is not": lambda column, value: column != value,
    "≠": lambda column, value: column != value,
    "in": lambda column, value: column.in_(value),
    "not in": lambda column, value: column.not_in(value),
    ">": lambda column, value: column > value,
    "after": lambda column, value: column > value,
    "<": lambda column, value: column < value,
    "before": lambda column, value: column < value,
    "≥": lambda column, value: column >= value,
    "≤": lambda column, value: column <= value,
}
"""Each filter operator's SQL test on a column."""


def _compare(column: ColumnElement[Any], op: str, value: Any) -> ColumnElement[bool]:
    if op not in _OPERATOR_SQL:
        raise AssertionError(f"operator {op!r} passed check_filter but has no SQL")
    return _OPERATOR_SQL[op](column, value)


def _as_datetime(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)
