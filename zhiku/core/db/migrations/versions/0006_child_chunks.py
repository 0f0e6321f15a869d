"""Child chunks of parent segments (parent-child index) and their keyword postings.

A parent-child dataset returns its segment rows and indexes their children: ``child_chunks``
holds them (deleted with their segment), ``child_keyword_postings`` the keyword store's
postings of each child (deleted with their child).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    if sa.inspect(op.get_bind()).has_table("child_chunks"):
        return  # a database made from the models before migrations existed (adopted by 0001)
    op.create_table(
        "child_chunks",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column(
            "segment_id", sa.String(36), sa.ForeignKey("segments.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column(
            "dataset_id", sa.String(36), sa.ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("document_id", sa.String(36), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.Column("tokens", sa.Integer(), nullable=False),
        sa.Column("keywords", sa.JSON(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_child_chunks_segment_position", "child_chunks", ["segment_id", "position"])
    op.create_index("ix_child_chunks_dataset", "child_chunks", ["dataset_id"])
    op.create_table(
        "child_keyword_postings",
        sa.Column(
            "child_id",
            sa.String(36),
            sa.ForeignKey("child_chunks.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("keyword", sa.String(255), primary_key=True),
        sa.Column("dataset_id", sa.String(36), nullable=False),
        sa.Column("weight", sa.Float(), nullable=False),
    )
    op.create_index(
        "ix_child_postings_dataset_keyword", "child_keyword_postings", ["dataset_id", "keyword"]
    )


def downgrade() -> None:
    op.drop_index("ix_child_postings_dataset_keyword", "child_keyword_postings")
    op.drop_table("child_keyword_postings")
    op.drop_index("ix_child_chunks_dataset", "child_chunks")
    op.drop_index("ix_child_chunks_segment_position", "child_chunks")
    op.drop_table("child_chunks")
