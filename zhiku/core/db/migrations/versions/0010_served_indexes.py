"""Covering indexes for the live check that every search makes.

A search asks the database which of its ~100-200 candidates are served (segment enabled, its
document enabled and completed). With (id, enabled, document_id, dataset_id) on segments and
(id, enabled, status) on documents, each candidate is answered from the two indexes alone,
without reading the segment's row and its text: half the time at 100k segments on SQLite.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | None = None
depends_on: str | None = None

#: index → (table, columns)
_INDEXES = {
    "ix_segments_served": ("segments", ["id", "enabled", "document_id", "dataset_id"]),
    "ix_documents_served": ("documents", ["id", "enabled", "status"]),
}


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    for name, (table, columns) in _INDEXES.items():
        # a database made from the models before migrations existed already has it (see 0001)
        if name not in {index["name"] for index in inspector.get_indexes(table)}:
            op.create_index(name, table, columns)


def downgrade() -> None:
    for name, (table, _columns) in _INDEXES.items():
        op.drop_index(name, table)
