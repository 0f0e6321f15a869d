"""Pending segment writes: a segment edit is journalled before its store points change.

A hand edit keeps the segment's id, so its new vector and BM25 point overwrite the old ones
before the database row changes. The journal row, committed first and removed in the
transaction that writes the new row, tells a restart which segments' points may disagree with
their rows; their points are written again from the rows.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    if sa.inspect(op.get_bind()).has_table("pending_segment_writes"):
        return  # a database made from the models before migrations existed (adopted by 0001)
    op.create_table(
        "pending_segment_writes",
        sa.Column("segment_id", sa.String(36), primary_key=True),
        sa.Column(
            "dataset_id", sa.String(36), sa.ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_pending_segment_writes_dataset", "pending_segment_writes", ["dataset_id"])


def downgrade() -> None:
    op.drop_index("ix_pending_segment_writes_dataset", "pending_segment_writes")
    op.drop_table("pending_segment_writes")
