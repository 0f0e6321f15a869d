"""Document metadata fields per dataset, metadata values per document, hit counts per segment.

``datasets.metadata_fields`` lists the dataset's fields (id, name, type) and
``datasets.builtin_metadata`` turns the built-in fields on; ``documents.metadata_values`` holds a
document's values keyed by field id (a rename touches no document); ``segments.hit_count`` counts
how often retrieval returned the segment (Dify's field).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None

_COLUMNS: list[tuple[str, sa.Column[Any]]] = [
    ("datasets", sa.Column("metadata_fields", sa.JSON(), nullable=False, server_default="[]")),
    ("datasets", sa.Column("builtin_metadata", sa.Boolean(), nullable=False, server_default=sa.false())),
    ("documents", sa.Column("metadata_values", sa.JSON(), nullable=False, server_default="{}")),
    ("segments", sa.Column("hit_count", sa.Integer(), nullable=False, server_default="0")),
]


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    for table, column in _COLUMNS:
        # a database made from the models before migrations existed already has them (see 0001)
        if column.name not in {c["name"] for c in inspector.get_columns(table)}:
            with op.batch_alter_table(table) as batch:
                batch.add_column(column)


def downgrade() -> None:
    for table, column in reversed(_COLUMNS):
        with op.batch_alter_table(table) as batch:
            batch.drop_column(column.name)
