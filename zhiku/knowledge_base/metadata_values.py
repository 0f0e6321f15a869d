"""Documents' metadata values written as rows of the typed table that filters read.

``DocumentRow.metadata_values`` (values by field id, what callers get back) and the rows of
:class:`~zhiku.core.db.MetadataValueRow` say the same thing twice: the JSON for reading a
document's values, the rows for reading the documents that have a value, by index range. Every
write of the JSON calls one of these in the same transaction, so the two never disagree; deleting
a document or a dataset removes its rows by the foreign keys' cascade.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import delete, insert
from sqlalchemy.orm import Session

from zhiku.core.db.models import MetadataValueRow

VALUES = MetadataValueRow.metadata.tables[MetadataValueRow.__tablename__]
_CHUNK = 500


def replace_values(session: Session, dataset_id: str, stored_of: Mapping[str, Mapping[str, Any]]) -> None:
    """Make the rows of each document in ``stored_of`` those of its stored values (by field id);
    the document rows must exist, or be pending in ``session``."""
    session.flush()  # the rows' documents first (their foreign key), as the ORM has them
    ids = list(stored_of)
    for start in range(0, len(ids), _CHUNK):
        session.execute(delete(VALUES).where(VALUES.c.document_id.in_(ids[start : start + _CHUNK])))
    rows = [
        {"document_id": document_id, "field_id": field_id, "dataset_id": dataset_id, **typed}
        for document_id, stored in stored_of.items()
        for field_id, value in stored.items()
        if (typed := typed_value(value)) is not None
    ]
    if rows:
        session.execute(insert(VALUES), rows)


def remove_field(session: Session, dataset_id: str, field_id: str) -> None:
    """Drop every document's row for a field being deleted."""
    session.execute(delete(VALUES).where(VALUES.c.dataset_id == dataset_id, VALUES.c.field_id == field_id))


def typed_value(value: Any) -> dict[str, Any] | None:
    """A stored value as the table's columns: a string as text, a number (or time) as a number;
    None for anything else, which no filter could match (coercion stores nothing else)."""
    if isinstance(value, str):
        return {"text_value": value, "number_value": None}
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"text_value": None, "number_value": float(value)}
    return None
