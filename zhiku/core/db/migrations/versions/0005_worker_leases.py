"""Celery workers: claim leases on document jobs, versions prepared for the store owner, uploads
kept in the database.

``document_jobs.lease_owner`` / ``lease_until`` name the worker process running a document and
until when its claim holds; a worker renews it while it runs, and a document whose lease ran out
is queued again. ``prepared_versions`` holds a version a worker embedded for the process that
owns the embedded stores to write. ``stored_uploads`` keeps uploaded files when the setting
``upload_store`` is ``database``.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None

_COLUMNS: list[sa.Column[Any]] = [
    sa.Column("lease_owner", sa.String(128), nullable=True),
    sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
]


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    known = {c["name"] for c in inspector.get_columns("document_jobs")}
    for column in _COLUMNS:
        if column.name not in known:  # a database made from the models already has it (see 0001)
            with op.batch_alter_table("document_jobs") as batch:
                batch.add_column(column)
    if not inspector.has_table("prepared_versions"):
        op.create_table(
            "prepared_versions",
            sa.Column(
                "document_id",
                sa.String(36),
                sa.ForeignKey("documents.id", ondelete="CASCADE"),
                primary_key=True,
            ),
            sa.Column(
                "dataset_id", sa.String(36), sa.ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False
            ),
            sa.Column("payload", sa.JSON(), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        )
        op.create_index("ix_prepared_versions_dataset_id", "prepared_versions", ["dataset_id"])
    if not inspector.has_table("stored_uploads"):
        op.create_table(
            "stored_uploads",
            sa.Column("document_id", sa.String(36), primary_key=True),
            sa.Column("name", sa.String(255), nullable=False),
            sa.Column("data", sa.LargeBinary(), nullable=False),
            sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        )


def downgrade() -> None:
    op.drop_table("stored_uploads")
    op.drop_index("ix_prepared_versions_dataset_id", "prepared_versions")
    op.drop_table("prepared_versions")
    with op.batch_alter_table("document_jobs") as batch:
        for column in reversed(_COLUMNS):
            batch.drop_column(column.name)
