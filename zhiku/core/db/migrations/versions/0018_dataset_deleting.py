"""A dataset being deleted: ``datasets.deleting``.

Deleting a dataset removes its rows in many short transactions (a million segments' rows took
over twenty minutes in one, and no other write got through meanwhile), so the row says that it
is going: every lookup leaves it out from the first step, and the owner of the stores finishes a
deletion that a stopped process left half done (see ``zhiku.knowledge_base.dataset_purge``).

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("datasets")}
    # a database made from the models before migrations existed already has it (see 0001)
    if "deleting" not in columns:
        # in place: batch mode would copy the table on SQLite (its default is an expression)
        op.add_column(
            "datasets", sa.Column("deleting", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    # in place too; SQLite drops a plain column so from 3.35 on
    op.drop_column("datasets", "deleting")
