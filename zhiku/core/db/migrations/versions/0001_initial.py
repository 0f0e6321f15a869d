"""The first schema: datasets, documents, segments, keyword postings, embedding cache, document jobs
and API keys.

It also adopts a database made before migrations existed (its tables were created by
``create_all`` and it has no ``alembic_version``): tables it lacks are created, tables it has are
kept with their rows and brought to these columns (``_adopt``). Alembic then records this
revision, as for a new database. The table definitions below are this revision's and stay as
they are; later changes are later revisions.

Revision ID: 0001
Revises:
Create Date: 2026-11-01
"""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None

schema = sa.MetaData()


def _created_at() -> sa.Column[datetime]:
    return sa.Column("created_at", sa.DateTime(timezone=True), nullable=False)


def _timestamp(name: str) -> sa.Column[datetime]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=True)


sa.Table(
    "datasets",
    schema,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("name", sa.String(255), nullable=False, unique=True),
    sa.Column("description", sa.Text(), nullable=False),
    sa.Column("embedding_model", sa.String(255), nullable=False),
    sa.Column("embedding_dim", sa.Integer(), nullable=False),
    sa.Column("embedding_options", sa.JSON(), nullable=False),
    sa.Column("retrieval_config", sa.JSON(), nullable=False),
    sa.Column("llm_options", sa.JSON(), nullable=False),
    sa.Column("process_rule", sa.JSON(), nullable=False),
    sa.Column("tokenizer_settings", sa.JSON(), nullable=False),
    sa.Column("doc_form", sa.String(32), nullable=False),
    _created_at(),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)

sa.Table(
    "documents",
    schema,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("dataset_id", sa.String(36), sa.ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    sa.Column("name", sa.String(1024), nullable=False),
    sa.Column("source", sa.Text(), nullable=False),
    sa.Column("file_hash", sa.String(64), nullable=True),
    sa.Column("size", sa.Integer(), nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("error", sa.Text(), nullable=True),
    sa.Column("enabled", sa.Boolean(), nullable=False),
    sa.Column("segment_count", sa.Integer(), nullable=False),
    sa.Column("token_count", sa.Integer(), nullable=False),
    sa.Column("doc_metadata", sa.JSON(), nullable=False),
    _created_at(),
    _timestamp("parsing_started_at"),
    _timestamp("cleaning_started_at"),
    _timestamp("splitting_started_at"),
    _timestamp("indexing_started_at"),
    _timestamp("completed_at"),
    _timestamp("error_at"),
    sa.Index("ix_documents_dataset_status", "dataset_id", "status"),
)

sa.Table(
    "segments",
    schema,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("dataset_id", sa.String(36), sa.ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    sa.Column(
        "document_id", sa.String(36), sa.ForeignKey("documents.id", ondelete="CASCADE"), nullable=False
    ),
    sa.Column("position", sa.Integer(), nullable=False),
    sa.Column("content", sa.Text(), nullable=False),
    sa.Column("answer", sa.Text(), nullable=True),
    sa.Column("hash", sa.String(64), nullable=False),
    sa.Column("tokens", sa.Integer(), nullable=False),
    sa.Column("keywords", sa.JSON(), nullable=False),
    sa.Column("enabled", sa.Boolean(), nullable=False),
    sa.Column("seg_metadata", sa.JSON(), nullable=False),
    _created_at(),
    sa.Index("ix_segments_document_position", "document_id", "position"),
    sa.Index("ix_segments_dataset", "dataset_id"),
)

sa.Table(
    "keyword_postings",
    schema,
    sa.Column(
        "segment_id", sa.String(36), sa.ForeignKey("segments.id", ondelete="CASCADE"), primary_key=True
    ),
    sa.Column("keyword", sa.String(255), primary_key=True),
    sa.Column("dataset_id", sa.String(36), nullable=False),
    sa.Column("weight", sa.Float(), nullable=False),
    sa.Index("ix_postings_dataset_keyword", "dataset_id", "keyword"),
)

sa.Table(
    "embedding_cache",
    schema,
    sa.Column("model", sa.String(255), primary_key=True),
    sa.Column("hash", sa.String(64), primary_key=True),
    sa.Column("dim", sa.Integer(), nullable=False),
    sa.Column("vector", sa.LargeBinary(), nullable=False),
)

sa.Table(
    "document_jobs",
    schema,
    sa.Column(
        "document_id", sa.String(36), sa.ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True
    ),
    sa.Column("dataset_id", sa.String(36), sa.ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False),
    sa.Column("batch", sa.String(32), nullable=True),
    sa.Column("upload", sa.Text(), nullable=True),
    sa.Column("process_rule", sa.JSON(), nullable=True),
    _timestamp("paused_at"),
    sa.Column("archived", sa.Boolean(), nullable=False),
    _created_at(),
    sa.Index("ix_document_jobs_dataset_batch", "dataset_id", "batch"),
)

sa.Table(
    "api_keys",
    schema,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("name", sa.String(255), nullable=False),
    sa.Column("prefix", sa.String(16), nullable=False),
    sa.Column("key_hash", sa.String(64), nullable=False, unique=True),
    sa.Column("datasets", sa.JSON(), nullable=True),
    _created_at(),
    _timestamp("revoked_at"),
)


def upgrade() -> None:
    bind = op.get_bind()
    adopting = sa.inspect(bind).has_table("datasets")
    schema.create_all(bind, checkfirst=True)
    if adopting:
        _adopt(bind)


def _adopt(bind: sa.Connection) -> None:
    """Bring a database made before migrations to this revision's columns.

    ``datasets.llm_options`` is added with ``{}`` for existing rows, then its default dropped
    where the database can (SQLite cannot without rebuilding the table, so an adopted SQLite
    file keeps ``DEFAULT '{}'``). ``documents.status`` was ``VARCHAR(16)``, too short for
    ``completed_with_errors``: widened where the length is enforced (not on SQLite)."""
    inspector = sa.inspect(bind)
    if "llm_options" not in {column["name"] for column in inspector.get_columns("datasets")}:
        op.add_column("datasets", sa.Column("llm_options", sa.JSON(), nullable=False, server_default="{}"))
        if bind.dialect.name != "sqlite":
            op.alter_column("datasets", "llm_options", server_default=None)
    if bind.dialect.name != "sqlite":
        op.alter_column("documents", "status", type_=sa.String(32), existing_nullable=False)


def downgrade() -> None:
    schema.drop_all(op.get_bind())
