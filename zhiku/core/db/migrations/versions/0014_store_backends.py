"""Where a dataset's stores live, when it is not where the settings say.

``datasets.store_backends`` holds ``{"vector": name, "fulltext": name}`` once ``zhiku stores
migrate`` has copied the dataset's points to other backends and switched it over; empty (every
dataset until then), the dataset's stores are of the settings' ``vector_backend`` and
``fulltext_backend``.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("datasets")}
    # a database made from the models before migrations existed already has it (see 0001)
    if "store_backends" not in columns:
        with op.batch_alter_table("datasets") as batch:
            batch.add_column(sa.Column("store_backends", sa.JSON(), nullable=False, server_default="{}"))


def downgrade() -> None:
    with op.batch_alter_table("datasets") as batch:
        batch.drop_column("store_backends")
