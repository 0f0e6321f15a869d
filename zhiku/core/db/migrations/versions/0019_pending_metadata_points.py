"""Documents whose metadata the store points do not hold yet: ``pending_metadata_points``.

On the Qdrant backends a document's metadata values are now also written into its points'
payload, so a metadata filter is tested where the points are rather than as a list of documents
(see ``zhiku.knowledge_base.metadata_points``). A change of values marks the document here in its
own transaction; the points are brought in step after it, and the mark is cleared. While a
dataset has a mark, its filters use the list of documents. This revision marks every existing
document with a value: the points written before it hold none. Each dataset's next index build
writes them, into the copy it builds on (``zhiku serve`` builds such datasets in the background).

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28
"""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | None = None
depends_on: str | None = None

_BATCH = 1000


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    # a database made from the models before migrations existed already has it (see 0001)
    if not inspector.has_table("pending_metadata_points"):
        op.create_table(
            "pending_metadata_points",
            sa.Column(
                "document_id", sa.String(36), sa.ForeignKey("documents.id", ondelete="CASCADE"),
                primary_key=True,
            ),
            sa.Column(
                "dataset_id", sa.String(36), sa.ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False
            ),
            sa.Column("token", sa.String(36), nullable=False),
        )
        op.create_index("ix_pending_metadata_points_dataset", "pending_metadata_points", ["dataset_id"])
    _mark_documents_with_values()


def _mark_documents_with_values() -> None:
    bind = op.get_bind()
    values = sa.table("document_metadata_values", sa.column("document_id"), sa.column("dataset_id"))
    pending = sa.table(
        "pending_metadata_points", sa.column("document_id"), sa.column("dataset_id"), sa.column("token")
    )
    marked = set(bind.scalars(sa.select(pending.c.document_id)))
    rows = []
    for document_id, dataset_id in bind.execute(
        sa.select(values.c.document_id, values.c.dataset_id).distinct()
    ):
        if document_id not in marked:
            rows.append({"document_id": document_id, "dataset_id": dataset_id, "token": str(uuid.uuid4())})
        if len(rows) >= _BATCH:
            bind.execute(pending.insert(), rows)
            rows = []
    if rows:
        bind.execute(pending.insert(), rows)


def downgrade() -> None:
    op.drop_table("pending_metadata_points")
