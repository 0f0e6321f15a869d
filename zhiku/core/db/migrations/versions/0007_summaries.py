"""Summaries of segments (summary index) as a kind of child chunk.

A summary is a point of the stores mapped back to its segment by the parent-child machinery, so
it lives in ``child_chunks`` with ``kind = 'summary'`` (and its keyword postings in
``child_keyword_postings``); existing rows are children.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    columns = {column["name"] for column in sa.inspect(op.get_bind()).get_columns("child_chunks")}
    if "kind" in columns:
        return  # a database made from the models before migrations existed (adopted by 0001)
    with op.batch_alter_table("child_chunks") as batch:
        batch.add_column(sa.Column("kind", sa.String(16), nullable=False, server_default="child"))


def downgrade() -> None:
    op.execute("DELETE FROM child_chunks WHERE kind = 'summary'")
    with op.batch_alter_table("child_chunks") as batch:
        batch.drop_column("kind")
