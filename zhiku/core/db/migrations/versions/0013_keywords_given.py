"""Segments say whether their keywords were given by a user: ``segments.keywords_given``.

A keyword rebuild used to guess it (keywords that differ from what extraction shows were
given), which fails exactly when a rebuild is needed: after the user dictionary changed, every
segment's extracted keywords differ from the new extraction and were kept, weighted as given.
Rows from before this migration hold NULL: the rebuild still guesses for them, and their next
write sets the flag.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("segments")}
    # a database made from the models before migrations existed already has it (see 0001)
    if "keywords_given" not in columns:
        with op.batch_alter_table("segments") as batch:
            batch.add_column(sa.Column("keywords_given", sa.Boolean(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("segments") as batch:
        batch.drop_column("keywords_given")
