"""Documents' metadata values in a typed, indexed table: ``document_metadata_values``.

A metadata filter used to read every document row of the dataset and cast its JSON
``documents.metadata_values``; it now reads index ranges of this table, one row per (document,
field): strings in ``text_value``, numbers and times (Unix seconds) in ``number_value``. The
JSON column stays as it was (values by field id, what the API returns) and the two are written
together. This revision fills the table from the JSON of every existing document.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | None = None
depends_on: str | None = None

_BATCH = 1000


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    # a database made from the models before migrations existed already has them (see 0001)
    if "ix_documents_dataset_id" not in {index["name"] for index in inspector.get_indexes("documents")}:
        op.create_index("ix_documents_dataset_id", "documents", ["dataset_id", "id"])
    if not inspector.has_table("document_metadata_values"):
        op.create_table(
            "document_metadata_values",
            sa.Column(
                "document_id", sa.String(36), sa.ForeignKey("documents.id", ondelete="CASCADE"),
                primary_key=True,
            ),
            sa.Column("field_id", sa.String(36), primary_key=True),
            sa.Column(
                "dataset_id", sa.String(36), sa.ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False
            ),
            sa.Column("text_value", sa.Text(), nullable=True),
            sa.Column("number_value", sa.Float(), nullable=True),
        )
        op.create_index(
            "ix_metadata_values_text",
            "document_metadata_values",
            ["dataset_id", "field_id", "text_value", "document_id"],
        )
        op.create_index(
            "ix_metadata_values_number",
            "document_metadata_values",
            ["dataset_id", "field_id", "number_value", "document_id"],
        )
        op.create_index(
            "ix_metadata_values_folded",
            "document_metadata_values",
            ["dataset_id", "field_id", sa.func.lower(sa.text("text_value")).label("folded"), "document_id"],
            postgresql_ops={"folded": "text_pattern_ops"},
        )
    _fill()


def _fill() -> None:
    """One row per value of every document's JSON, typed as the filters read it."""
    bind = op.get_bind()
    documents = sa.table(
        "documents", sa.column("id"), sa.column("dataset_id"), sa.column("metadata_values", sa.JSON())
    )
    values = sa.table(
        "document_metadata_values",
        sa.column("document_id"),
        sa.column("field_id"),
        sa.column("dataset_id"),
        sa.column("text_value"),
        sa.column("number_value"),
    )
    bind.execute(values.delete())
    rows: list[dict[str, Any]] = []
    for document_id, dataset_id, stored in bind.execute(
        sa.select(documents.c.id, documents.c.dataset_id, documents.c.metadata_values)
    ):
        for field_id, value in (stored or {}).items():
            typed = _typed(value)
            if typed is not None:
                key = {"document_id": document_id, "field_id": field_id, "dataset_id": dataset_id}
                rows.append(key | typed)
        if len(rows) >= _BATCH:
            bind.execute(values.insert(), rows)
            rows = []
    if rows:
        bind.execute(values.insert(), rows)


def _typed(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str):
        return {"text_value": value, "number_value": None}
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"text_value": None, "number_value": float(value)}
    return None


def downgrade() -> None:
    op.drop_table("document_metadata_values")
    op.drop_index("ix_documents_dataset_id", "documents")
