"""Scores became relevance: every dataset's ``score_threshold`` starts at the default again.

A hit's score used to be its fusion's (min-max or reciprocal ranks, relative to the other hits of
the same query), and a dataset's stored threshold was on that scale, or absent. Scores are now
relevance (the estimated probability that a hit is relevant, 0 to 1), so an old threshold means
something else and an absent one would never let a dataset say "not found": each dataset gets the
default relevance threshold, which ``zhiku datasets update --threshold`` changes.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

from zhiku.core.retrieval_config import DEFAULT_SCORE_THRESHOLD

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    bind = op.get_bind()
    datasets = sa.table("datasets", sa.column("id", sa.String), sa.column("retrieval_config", sa.JSON))
    for dataset_id, stored in bind.execute(sa.select(datasets.c.id, datasets.c.retrieval_config)).all():
        config: dict[str, Any] = json.loads(stored) if isinstance(stored, str) else dict(stored or {})
        config["score_threshold"] = DEFAULT_SCORE_THRESHOLD
        bind.execute(datasets.update().where(datasets.c.id == dataset_id).values(retrieval_config=config))


def downgrade() -> None:
    """The old scale has no equivalent of a relevance threshold: thresholds are left as they are."""
