"""How much each dataset's stores changed since their last optimize: ``dataset_changes``.

The background optimizer builds a dataset's indexes (HNSW, BM25 re-weighting) once enough of
it changed; the count lives in the database so that a server restarted after a large ingest
still optimizes. Existing datasets get no row: they count from their next write.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    if sa.inspect(op.get_bind()).has_table("dataset_changes"):
        return  # a database made from the models before migrations existed (see 0001)
    op.create_table(
        "dataset_changes",
        sa.Column(
            "dataset_id", sa.String(36), sa.ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("points_changed", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("optimized_at", sa.DateTime(timezone=True), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("dataset_changes")
