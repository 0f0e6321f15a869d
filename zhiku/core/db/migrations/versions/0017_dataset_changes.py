"""How much each dataset's stores changed since their last optimize: ``dataset_changes``.

The background optimizer builds a dataset's indexes (HNSW, BM25 re-weighting) once enough of
it changed; the count lives in the database so that a server restarted after a large ingest
still optimizes. Each existing dataset starts with all its points counted as changed: one filled
through the API was never optimized, and one that was is built once more, in the background.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    if sa.inspect(op.get_bind()).has_table("dataset_changes"):
        return  # a database made from the models before migrations existed (see 0001)
    changes = op.create_table(
        "dataset_changes",
        sa.Column(
            "dataset_id", sa.String(36), sa.ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True
        ),
        sa.Column("points_changed", sa.Integer(), nullable=False, server_default="0"),
        sa.Column("changed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("optimized_at", sa.DateTime(timezone=True), nullable=True),
    )
    _count_existing(changes)


def _count_existing(changes: sa.Table) -> None:
    """A row per dataset with its segments and child chunks counted as changed."""
    bind = op.get_bind()
    datasets = sa.table("datasets", sa.column("id"))
    segments = sa.table("segments", sa.column("dataset_id"))
    children = sa.table("child_chunks", sa.column("dataset_id"))
    counts: dict[str, int] = {dataset_id: 0 for dataset_id in bind.scalars(sa.select(datasets.c.id))}
    for table in (segments, children):
        for dataset_id, count in bind.execute(
            sa.select(table.c.dataset_id, sa.func.count()).group_by(table.c.dataset_id)
        ):
            if dataset_id in counts:
                counts[dataset_id] += int(count)
    rows = [
        {"dataset_id": dataset_id, "points_changed": count, "changed_at": datetime.now(UTC)}
        for dataset_id, count in counts.items()
        if count
    ]
    if rows:
        bind.execute(changes.insert(), rows)


def downgrade() -> None:
    op.drop_table("dataset_changes")
