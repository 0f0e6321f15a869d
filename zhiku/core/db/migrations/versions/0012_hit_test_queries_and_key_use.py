"""The console's hit-testing history in the database, and when each API key was last used.

``hit_test_queries`` keeps each dataset's recent hit-testing queries with the search method they
ran with (a restart used to forget them); ``api_keys.last_used_at`` says when a request last
used a key, to the minute, for the console's API access page.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    # a database made from the models before migrations existed already has them (see 0001)
    if "last_used_at" not in {column["name"] for column in inspector.get_columns("api_keys")}:
        with op.batch_alter_table("api_keys") as batch:
            batch.add_column(sa.Column("last_used_at", sa.DateTime(timezone=True)))
    if inspector.has_table("hit_test_queries"):
        return
    op.create_table(
        "hit_test_queries",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column(
            "dataset_id", sa.String(36), sa.ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("query", sa.Text, nullable=False),
        sa.Column("search_method", sa.String(32), nullable=False),
        sa.Column("hits", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_hit_test_queries_dataset", "hit_test_queries", ["dataset_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_hit_test_queries_dataset", "hit_test_queries")
    op.drop_table("hit_test_queries")
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("last_used_at")
