"""Keyword postings indexed by (dataset, keyword, weight, point).

The keyword store reads each query word's heaviest postings only; with the weight and the point
in the index, that read is a short range scan of the index alone, however many postings the
word has. Replaces the (dataset, keyword) indexes.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None

#: table → (old index, new index, point column)
_INDEXES = {
    "keyword_postings": ("ix_postings_dataset_keyword", "ix_postings_dataset_keyword_weight", "segment_id"),
    "child_keyword_postings": (
        "ix_child_postings_dataset_keyword",
        "ix_child_postings_dataset_keyword_weight",
        "child_id",
    ),
}


def _index_names(table: str) -> set[str]:
    return {index["name"] for index in sa.inspect(op.get_bind()).get_indexes(table) if index["name"]}


def upgrade() -> None:
    for table, (old, new, point) in _INDEXES.items():
        names = _index_names(table)
        if new not in names:  # a database made from the models already has it (see 0001)
            op.create_index(new, table, ["dataset_id", "keyword", "weight", point])
        if old in names:
            op.drop_index(old, table)


def downgrade() -> None:
    for table, (old, new, _point) in _INDEXES.items():
        op.create_index(old, table, ["dataset_id", "keyword"])
        op.drop_index(new, table)
