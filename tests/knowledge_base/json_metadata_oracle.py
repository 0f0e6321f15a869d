"""The metadata filter as it was answered before the typed values table: SQL over each
document's JSON ``metadata_values``. Kept here only as the oracle the new scope must equal."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Float, String, and_, cast, func, not_, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement

from zhiku.core.db import DocumentRow
from zhiku.core.metadata import NEGATIVE_OPERATORS, CheckedCondition
from zhiku.core.scope import DocumentScope


def json_scope(
    session: Session, dataset_id: str, checked: list[CheckedCondition], logical_operator: str
) -> DocumentScope:
    tests = [_sql(c) for c in checked]
    matches = and_(*tests) if logical_operator == "and" else or_(*tests)
    of_dataset = DocumentRow.dataset_id == dataset_id
    total = session.scalar(select(func.count()).where(of_dataset)) or 0
    at_most = total // 2 + 1
    kept = list(session.scalars(select(DocumentRow.id).where(of_dataset, matches).limit(at_most)))
    if len(kept) < at_most:
        return DocumentScope(frozenset(kept))
    ids = session.scalars(select(DocumentRow.id).where(of_dataset, not_(matches)))
    return DocumentScope(frozenset(ids), exclude=True)


def _sql(condition: CheckedCondition) -> ColumnElement[bool]:
    op, value = condition.operator, condition.value
    if condition.field_id is None:
        column: ColumnElement[Any] = _builtin_column(condition.name)
        if condition.type == "time" and value is not None:  # the old code raised on empty
            value = _as_datetime(value)
    elif condition.type == "string":
        column = cast(DocumentRow.metadata_values[condition.field_id].as_string(), String)
    else:
        column = cast(DocumentRow.metadata_values[condition.field_id].as_float(), Float)
    if op in ("empty", "not empty"):
        empty = column.is_(None) | (column == "") if condition.type == "string" else column.is_(None)
        return empty if op == "empty" else not_(empty)
    if isinstance(value, list) and condition.field_id is None and condition.type == "time":
        value = [_as_datetime(v) for v in value]
    test = _OPERATOR_SQL[op](column, value)
    if op in NEGATIVE_OPERATORS:
        return column.is_(None) | test
    return column.is_not(None) & test


def _builtin_column(name: str) -> ColumnElement[Any]:
    columns: dict[str, ColumnElement[Any]] = {
        "document_name": DocumentRow.__table__.c.name,
        "source": DocumentRow.__table__.c.source,
        "upload_date": DocumentRow.__table__.c.created_at,
        "last_update_date": func.coalesce(DocumentRow.completed_at, DocumentRow.created_at),
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


def _as_datetime(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)
