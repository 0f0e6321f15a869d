"""A dataset's metadata: its fields, its documents' values, and filters turned into SQL.

A filter is answered from an indexed table of typed values
(:mod:`zhiku.knowledge_base.metadata_filter`), written with the documents' JSON values
(:mod:`zhiku.knowledge_base.metadata_values`), and gives a
:class:`~zhiku.core.scope.DocumentScope` that every search channel applies inside its own
search (a payload filter in Qdrant, SQL in the keyword store), so the filter is never applied
after top-k. The scope lists the matching documents, or the non-matching ones when those are
fewer, so a filter that keeps 99% of a dataset costs as little as one that keeps 1%. Where the
points' payload holds the values (:mod:`zhiku.knowledge_base.metadata_points`), the scope also
carries the filter as tests of it, which the Qdrant backends run instead of the list.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db import DatasetRow, DocumentRow
from zhiku.core.db.models import MetadataValueRow
from zhiku.core.errors import AlreadyExists, InvalidInput, NotFound
from zhiku.core.metadata import (
    BUILTIN_FIELDS,
    FieldType,
    MetadataField,
    MetadataFilter,
    check_filter,
    coerce_value,
)
from zhiku.core.payload_filter import payload_filter
from zhiku.core.scope import DocumentScope
from zhiku.knowledge_base.metadata_filter import resolve
from zhiku.knowledge_base.metadata_points import has_pending, mark_changed
from zhiku.knowledge_base.metadata_values import remove_field, replace_values

#: How many metadata fields a dataset may declare.
MAX_FIELDS = 100


class DatasetMetadata:
    """The metadata of one dataset: fields (add, rename, delete), values, filters.

    ``values_changed(dataset_id)`` is called after a change of values has committed: it brings
    the store points' payload in step (see :mod:`zhiku.knowledge_base.metadata_points`).
    """

    def __init__(
        self,
        sessions: sessionmaker[Session],
        dataset_id: str,
        values_changed: Callable[[str], None] | None = None,
    ) -> None:
        self._sessions = sessions
        self.dataset_id = dataset_id
        self._values_changed = values_changed

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
            remove_field(session, self.dataset_id, field_id)
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
            stored_of = {}
            for document_id, values in values_of.items():
                document = session.get(DocumentRow, document_id)
                if document is None or document.dataset_id != self.dataset_id:
                    raise NotFound(f"no document {document_id!r} in this dataset")
                stored_of[document_id] = document.metadata_values = stored_values(fields, values)
                result[document_id] = named_values(fields, stored_of[document_id])
            replace_values(session, self.dataset_id, stored_of)
            mark_changed(session, self.dataset_id, stored_of)
        if self._values_changed is not None:
            self._values_changed(self.dataset_id)
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
        """How many documents have a value for each field, by field id."""
        with self._sessions() as session:
            rows = session.execute(
                select(MetadataValueRow.field_id, func.count())
                .where(MetadataValueRow.dataset_id == self.dataset_id)
                .group_by(MetadataValueRow.field_id)
            )
            return {field_id: count for field_id, count in rows}

    # -- filters -----------------------------------------------------------------------------

    def scope(self, metadata_filter: MetadataFilter) -> DocumentScope | None:
        """The documents ``metadata_filter`` keeps, as a scope for the search channels; None for
        a filter without conditions. InvalidInput names an unknown field or a misused operator.

        When the points' payload holds every value (no change waiting) and each condition has a
        payload test, the scope carries the tests and reads its list of documents only if a
        store that cannot test a payload asks for it (see :mod:`zhiku.core.scope`)."""
        if not metadata_filter.conditions:
            return None
        datasets = DatasetRow.__table__.c  # the table's columns: no ORM object for one read
        with self._sessions() as session:
            row = session.connection().execute(
                select(datasets.metadata_fields, datasets.builtin_metadata)
                .where(datasets.id == self.dataset_id)
            ).first()
            if row is None:
                raise NotFound(f"no dataset {self.dataset_id!r}")
            fields = {f["name"]: MetadataField.model_validate(f) for f in row.metadata_fields or []}
            checked = check_filter(metadata_filter, fields, builtin=row.builtin_metadata)
            joined = metadata_filter.logical_operator
            tests = payload_filter(checked, joined)
            if tests is None or has_pending(session.connection(), self.dataset_id):
                return resolve(session, self.dataset_id, checked, joined)

        def read() -> DocumentScope:
            with self._sessions() as session:
                return resolve(session, self.dataset_id, checked, joined)

        return DocumentScope.by_payload(tests, read)

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
