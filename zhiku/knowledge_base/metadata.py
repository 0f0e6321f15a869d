"""A dataset's metadata: its fields, its documents' values, and filters turned into SQL.

A filter is answered over the documents table (small next to the segments) and gives a
:class:`~zhiku.core.scope.DocumentScope` that every search channel applies inside its own
search (a payload filter in Qdrant, SQL in the keyword store), so the filter is never applied
after top-k. The scope lists the matching documents, or the non-matching ones when those are
fewer, so a filter that keeps 99% of a dataset costs as little as one that keeps 1%.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Float, String, and_, cast, func, not_, or_, select
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.sql.elements import ColumnElement

from zhiku.core.db import DatasetRow, DocumentRow
from zhiku.core.errors import AlreadyExists, InvalidInput, NotFound
from zhiku.core.metadata import (
    BUILTIN_FIELDS,
    NEGATIVE_OPERATORS,
    CheckedCondition,
    FieldType,
    MetadataField,
    MetadataFilter,
    check_filter,
    coerce_value,
)
from zhiku.core.scope import DocumentScope

#: How many metadata fields a dataset may declare.
MAX_FIELDS = 100


class DatasetMetadata:
    """The metadata of one dataset: fields (add, rename, delete), values, filters."""

    def __init__(self, sessions: sessionmaker[Session], dataset_id: str) -> None:
        self._sessions = sessions
        self.dataset_id = dataset_id

    # -- fields ------------------------------------------------------------------------------

    def fields(self) -> list[MetadataField]:
        with self._sessions() as session:
            return _fields(self._dataset(session))

    @property
    def builtin_enabled(self) -> bool:
        with self._sessions() as session:
            return self._dataset(session).builtin_metadata

    def add_field(self, name: str, field_type: FieldType) -> MetadataField:
        """A new field; AlreadyExists when the name is taken (built-in names included)."""
        field = MetadataField(id=str(uuid.uuid4()), name=name.strip(), type=field_type)
        with self._sessions.begin() as session:
            row = self._dataset(session, lock=True)
            fields = _fields(row)
            self._check_free(field.name, fields)
            if len(fields) >= MAX_FIELDS:
                raise InvalidInput(f"name: a dataset has at most {MAX_FIELDS} metadata fields")
            row.metadata_fields = [*row.metadata_fields, field.model_dump()]
        return field

    def rename_field(self, field_id: str, name: str) -> MetadataField:
        name = name.strip()
        with self._sessions.begin() as session:
            row = self._dataset(session, lock=True)
            fields = _fields(row)
            field = _field_by_id(fields, field_id)
            self._check_free(name, [f for f in fields if f.id != field_id])
            renamed = field.model_copy(update={"name": name})
            row.metadata_fields = [(renamed if f.id == field_id else f).model_dump() for f in fields]
        return renamed

    def delete_field(self, field_id: str) -> None:
        """Removes the field and every document's value for it."""
        with self._sessions.begin() as session:
            row = self._dataset(session, lock=True)
            fields = _fields(row)
            _field_by_id(fields, field_id)
            row.metadata_fields = [f.model_dump() for f in fields if f.id != field_id]
            for document in session.scalars(
                select(DocumentRow).where(DocumentRow.dataset_id == self.dataset_id)
            ):
                if field_id in (document.metadata_values or {}):
                    document.metadata_values = {
                        k: v for k, v in document.metadata_values.items() if k != field_id
                    }

    def set_builtin(self, enabled: bool) -> None:
        with self._sessions.begin() as session:
            self._dataset(session, lock=True).builtin_metadata = enabled

    # -- values ------------------------------------------------------------------------------

    def set_values(self, document_id: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """Replace a document's values, given by field name (or id); a ``None`` value clears
        the field. Returns the stored values by name. InvalidInput names a bad field or value."""
        return self.set_many({document_id: values})[document_id]

    def set_many(self, values_of: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
        """:meth:`set_values` for several documents, all or none."""
        result = {}
        with self._sessions.begin() as session:
            fields = _fields(self._dataset(session))
            for document_id, values in values_of.items():
                document = session.get(DocumentRow, document_id)
                if document is None or document.dataset_id != self.dataset_id:
                    raise NotFound(f"no document {document_id!r} in this dataset")
                stored = stored_values(fields, values)
                document.metadata_values = stored
                result[document_id] = named_values(fields, stored)
        return result

    def values(self, document_id: str) -> dict[str, Any]:
        with self._sessions() as session:
            fields = _fields(self._dataset(session))
            document = session.get(DocumentRow, document_id)
            if document is None or document.dataset_id != self.dataset_id:
                raise NotFound(f"no document {document_id!r} in this dataset")
            return named_values(fields, document.metadata_values or {})

    def values_of(self, document_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """The values of several documents by name, by document id (one query)."""
        if not document_ids:
            return {}
        with self._sessions() as session:
            fields = _fields(self._dataset(session))
            rows = session.execute(
                select(DocumentRow.id, DocumentRow.metadata_values).where(
                    DocumentRow.id.in_(sorted(set(document_ids))),
                    DocumentRow.dataset_id == self.dataset_id,
                )
            )
            return {doc_id: named_values(fields, values or {}) for doc_id, values in rows}

    def use_counts(self) -> dict[str, int]:
        """How many documents have a value for each field, by field id (counted by the database
        in one pass: a dataset of 10,000 documents is not read into Python for a settings page)."""
        with self._sessions() as session:
            ids = [field.id for field in _fields(self._dataset(session))]
            if not ids:
                return {}
            row = session.execute(
                select(
                    *(func.count(DocumentRow.metadata_values[field_id].as_string()) for field_id in ids)
                ).where(DocumentRow.dataset_id == self.dataset_id)
            ).one()
        return {field_id: int(count) for field_id, count in zip(ids, row, strict=True) if count}

    # -- filters -----------------------------------------------------------------------------

    def scope(self, metadata_filter: MetadataFilter) -> DocumentScope | None:
        """The documents ``metadata_filter`` keeps, as a scope for the search channels; None for
        a filter without conditions. InvalidInput names an unknown field or a misused operator."""
        if not metadata_filter.conditions:
            return None
        with self._sessions() as session:
            row = self._dataset(session)
            fields = {f.name: f for f in _fields(row)}
            checked = check_filter(metadata_filter, fields, builtin=row.builtin_metadata)
            tests = [_sql(c) for c in checked]
            matches = and_(*tests) if metadata_filter.logical_operator == "and" else or_(*tests)
            of_dataset = DocumentRow.dataset_id == self.dataset_id
            # The matching ids, up to one more than half the dataset: fewer, and they are the
            # scope; as many, and the others are fewer. Counting first (from the index) costs
            # less than counting matches, which reads every document's values once more.
            total = session.scalar(select(func.count()).where(of_dataset)) or 0
            at_most = total // 2 + 1
            kept = list(session.scalars(select(DocumentRow.id).where(of_dataset, matches).limit(at_most)))
            if len(kept) < at_most:
                return DocumentScope(frozenset(kept))
            ids = session.scalars(select(DocumentRow.id).where(of_dataset, not_(matches)))
            return DocumentScope(frozenset(ids), exclude=True)

    # -- helpers -----------------------------------------------------------------------------

    def _dataset(self, session: Session, *, lock: bool = False) -> DatasetRow:
        statement = select(DatasetRow).where(DatasetRow.id == self.dataset_id)
        row = session.scalar(statement.with_for_update() if lock else statement)
        if row is None:
            raise NotFound(f"no dataset {self.dataset_id!r}")
        return row

    @staticmethod
    def _check_free(name: str, fields: Sequence[MetadataField]) -> None:
        if not name:
            raise InvalidInput("name: a metadata field needs a name")
        if name in BUILTIN_FIELDS or any(f.name == name for f in fields):
            raise AlreadyExists(f"a metadata field named {name!r} already exists")


def _fields(row: DatasetRow) -> list[MetadataField]:
    return [MetadataField.model_validate(f) for f in row.metadata_fields or []]


def _field_by_id(fields: Sequence[MetadataField], field_id: str) -> MetadataField:
    for field in fields:
        if field.id == field_id:
            return field
    raise NotFound(f"no metadata field {field_id!r} in this dataset")


def stored_values(fields: Sequence[MetadataField], values: Mapping[str, Any]) -> dict[str, Any]:
    """Values by field name (or id) → values by field id, each coerced to its field's type."""
    by_key = {f.name: f for f in fields} | {f.id: f for f in fields}
    stored: dict[str, Any] = {}
    for key, value in values.items():
        field = by_key.get(key)
        if field is None:
            raise InvalidInput(f"metadata.{key}: no such metadata field in this dataset")
        if value is None:
            continue
        try:
            stored[field.id] = coerce_value(field.type, value)
        except ValueError as exc:
            raise InvalidInput(f"metadata.{field.name}: {exc}") from None
    return stored


def named_values(fields: Sequence[MetadataField], stored: Mapping[str, Any]) -> dict[str, Any]:
    names = {f.id: f.name for f in fields}
    return {names[k]: v for k, v in stored.items() if k in names}


def _builtin_column(name: str) -> ColumnElement[Any]:
    columns: dict[str, ColumnElement[Any]] = {
        "document_name": DocumentRow.__table__.c.name,
        "source": DocumentRow.__table__.c.source,
        "upload_date": DocumentRow.__table__.c.created_at,
        "last_update_date": func.coalesce(DocumentRow.completed_at, DocumentRow.created_at),
    }
    return columns[name]


def _sql(condition: CheckedCondition) -> ColumnElement[bool]:
    """One checked condition as a boolean SQL expression over the documents table."""
    op, value = condition.operator, condition.value
    if condition.field_id is None:
        column: ColumnElement[Any] = _builtin_column(condition.name)
        if condition.type == "time":
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
    test = _compare(column, op, value)
    if op in NEGATIVE_OPERATORS:
        return column.is_(None) | test
    return column.is_not(None) & test


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
"""Each filter operator's SQL test on a metadata column."""


def _compare(column: ColumnElement[Any], op: str, value: Any) -> ColumnElement[bool]:
    if op not in _OPERATOR_SQL:
        raise AssertionError(f"operator {op!r} passed check_filter but has no SQL")
    return _OPERATOR_SQL[op](column, value)


def _as_datetime(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)
