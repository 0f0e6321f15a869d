"""Descriptions of a dataset's sections (heading paths), written by its users.

``datasets.section_descriptions`` maps a section path to its description: what an answer's
intent step reads to route a question to one section. The sections themselves are the segments'
``section`` metadata and need no table.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    columns = {c["name"] for c in sa.inspect(op.get_bind()).get_columns("datasets")}
    # a database made from the models before migrations existed already has it (see 0001)
    if "section_descriptions" not in columns:
        with op.batch_alter_table("datasets") as batch:
            batch.add_column(
                sa.Column("section_descriptions", sa.JSON(), nullable=False, server_default="{}")
            )


def downgrade() -> None:
    with op.batch_alter_table("datasets") as batch:
        batch.drop_column("section_descriptions")
