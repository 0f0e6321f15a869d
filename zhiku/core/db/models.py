"""SQLAlchemy 2.0 models: the metadata database is the source of truth.

A segment is served only if its row exists, it is enabled, and its document is ``completed``
and enabled. Stores may briefly hold points that the database does not (an interrupted
ingest); they are invisible to search and swept at start-up.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    false,
    func,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return str(uuid.uuid4())


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, list[str]: JSON}


class DatasetRow(Base):
    __tablename__ = "datasets"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(255), unique=True)
    description: Mapped[str] = mapped_column(Text, default="")
    embedding_model: Mapped[str] = mapped_column(String(255))
    embedding_dim: Mapped[int] = mapped_column(Integer)
    embedding_options: Mapped[dict[str, Any]] = mapped_column(default=dict)
    retrieval_config: Mapped[dict[str, Any]] = mapped_column(default=dict)
    llm_options: Mapped[dict[str, Any]] = mapped_column(default=dict)
    process_rule: Mapped[dict[str, Any]] = mapped_column(default=dict)
    tokenizer_settings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    doc_form: Mapped[str] = mapped_column(String(32), default="paragraph")
    #: the dataset's metadata fields, ``[{"id", "name", "type"}]`` (see zhiku.core.metadata)
    metadata_fields: Mapped[list[Any]] = mapped_column(JSON, default=list, server_default="[]")
    builtin_metadata: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    #: descriptions of sections (heading paths) by path, written by users (see zhiku.core.sections)
    section_descriptions: Mapped[dict[str, Any]] = mapped_column(default=dict, server_default="{}")
    #: ``{"vector": name, "fulltext": name}``: the store backends ``zhiku stores migrate`` moved
    #: the dataset to; empty, the settings' ``vector_backend`` and ``fulltext_backend``
    store_backends: Mapped[dict[str, Any]] = mapped_column(default=dict, server_default="{}")
    #: the dataset is being deleted: no lookup finds it, and its rows go in short transactions
    #: (see zhiku.knowledge_base.dataset_purge)
    deleting: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)

    documents: Mapped[list[DocumentRow]] = relationship(
        back_populates="dataset", cascade="all, delete-orphan", passive_deletes=True
    )


class DocumentRow(Base):
    __tablename__ = "documents"
    __table_args__ = (
        Index("ix_documents_dataset_status", "dataset_id", "status"),
        # covering: the live check of each search reads a document's served state from it alone
        Index("ix_documents_served", "id", "enabled", "status"),
        # a dataset's documents in order of creation: its pages, numbering and segment listing
        Index("ix_documents_dataset_created", "dataset_id", "created_at", "id"),
        # covering: a metadata filter that keeps most of a dataset reads all its ids from it
        Index("ix_documents_dataset_id", "dataset_id", "id"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(1024))
    source: Mapped[str] = mapped_column(Text, default="")
    file_hash: Mapped[str | None] = mapped_column(String(64))
    size: Mapped[int] = mapped_column(Integer, default=0)
    status: Mapped[str] = mapped_column(String(32), default="waiting")
    error: Mapped[str | None] = mapped_column(Text)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    segment_count: Mapped[int] = mapped_column(Integer, default=0)
    token_count: Mapped[int] = mapped_column(Integer, default=0)
    doc_metadata: Mapped[dict[str, Any]] = mapped_column(default=dict)
    #: the user's metadata values keyed by field id (``doc_metadata`` is zhiku's own bookkeeping)
    metadata_values: Mapped[dict[str, Any]] = mapped_column(default=dict, server_default="{}")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    parsing_started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    cleaning_started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    splitting_started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    indexing_started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    completed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    error_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    dataset: Mapped[DatasetRow] = relationship(back_populates="documents")


class MetadataValueRow(Base):
    """One document's value for one metadata field, typed, so a filter reads an index range.

    Mirrors ``DocumentRow.metadata_values`` (written in the same transaction, see
    zhiku.knowledge_base.metadata_values): a string in ``text_value``, a number or a time (Unix
    seconds) in ``number_value``. The indexes serve equality and ranges per (dataset, field), and
    prefixes through the folded text (the database's own ``lower``, as the filters fold).
    """

    __tablename__ = "document_metadata_values"
    __table_args__ = (
        Index("ix_metadata_values_text", "dataset_id", "field_id", "text_value", "document_id"),
        Index("ix_metadata_values_number", "dataset_id", "field_id", "number_value", "document_id"),
        Index(
            "ix_metadata_values_folded",
            "dataset_id",
            "field_id",
            func.lower(text("text_value")).label("folded"),
            "document_id",
            # a prefix test is a LIKE on the folded text: this class serves it in any collation
            postgresql_ops={"folded": "text_pattern_ops"},
        ),
    )

    document_id: Mapped[str] = mapped_column(
        ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True
    )
    field_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    text_value: Mapped[str | None] = mapped_column(Text)
    number_value: Mapped[float | None] = mapped_column(Float)


class SegmentRow(Base):
    __tablename__ = "segments"
    __table_args__ = (
        # covering: a page of a dataset's segments in order is found from the indexes alone
        Index("ix_segments_document_order", "document_id", "position", "enabled", "id"),
        Index("ix_segments_dataset", "dataset_id"),
        # covering: the live check of each search reads the candidates from it, not their rows
        Index("ix_segments_served", "id", "enabled", "document_id", "dataset_id"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    document_id: Mapped[str] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"))
    position: Mapped[int] = mapped_column(Integer)
    content: Mapped[str] = mapped_column(Text)
    answer: Mapped[str | None] = mapped_column(Text)
    hash: Mapped[str] = mapped_column(String(64))
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    keywords: Mapped[list[str]] = mapped_column(default=list)
    #: whether ``keywords`` were given by a user (else extracted, and extracted again by a
    #: keyword rebuild); None on rows written before migration 0013
    keywords_given: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    seg_metadata: Mapped[dict[str, Any]] = mapped_column(default=dict)
    hit_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class KeywordPostingRow(Base):
    """One (keyword, segment) pair with the keyword's term weight in that segment."""

    __tablename__ = "keyword_postings"
    # covering: a query word's heaviest postings are read from the index alone (keyword store)
    __table_args__ = (
        Index("ix_postings_dataset_keyword_weight", "dataset_id", "keyword", "weight", "segment_id"),
    )

    segment_id: Mapped[str] = mapped_column(ForeignKey("segments.id", ondelete="CASCADE"), primary_key=True)
    keyword: Mapped[str] = mapped_column(String(255), primary_key=True)
    dataset_id: Mapped[str] = mapped_column(String(36))
    weight: Mapped[float] = mapped_column(Float)


#: ``child_chunks.kind`` of a child of a parent segment, and of a segment's summary
CHILD_KIND = "child"
SUMMARY_KIND = "summary"


class ChildChunkRow(Base):
    """A child chunk of a parent segment (parent-child index, see migration 0005): the parent row
    is what search returns; its children are the points of the vector, BM25 and keyword stores.
    Deleted with its segment."""

    __tablename__ = "child_chunks"
    __table_args__ = (
        Index("ix_child_chunks_segment_position", "segment_id", "position"),
        Index("ix_child_chunks_dataset", "dataset_id"),
    )

    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    segment_id: Mapped[str] = mapped_column(ForeignKey("segments.id", ondelete="CASCADE"))
    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    #: the parent's document, as the stores' payload holds it, so a document scope reaches children
    document_id: Mapped[str] = mapped_column(String(36))
    position: Mapped[int] = mapped_column(Integer)
    content: Mapped[str] = mapped_column(Text)
    hash: Mapped[str] = mapped_column(String(64))
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    keywords: Mapped[list[str]] = mapped_column(default=list)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    #: ``child`` (parent-child index) or ``summary`` (summary index, migration 0007): a summary is
    #: a point beside its segment, which stays a point itself
    kind: Mapped[str] = mapped_column(String(16), default=CHILD_KIND, server_default=CHILD_KIND)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class ChildKeywordPostingRow(Base):
    """One (keyword, child chunk) pair: the keyword store's postings for parent-child datasets."""

    __tablename__ = "child_keyword_postings"
    __table_args__ = (
        Index("ix_child_postings_dataset_keyword_weight", "dataset_id", "keyword", "weight", "child_id"),
    )

    child_id: Mapped[str] = mapped_column(ForeignKey("child_chunks.id", ondelete="CASCADE"), primary_key=True)
    keyword: Mapped[str] = mapped_column(String(255), primary_key=True)
    dataset_id: Mapped[str] = mapped_column(String(36))
    weight: Mapped[float] = mapped_column(Float)


class EmbeddingCacheRow(Base):
    """An embedding keyed by (model, sha256(text)); float32 bytes."""

    __tablename__ = "embedding_cache"

    model: Mapped[str] = mapped_column(String(255), primary_key=True)
    hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    dim: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)


class DocumentJobRow(Base):
    """How the HTTP API manages a document: the upload batch, the stored upload and process rule
    the indexing workers read, and the pause and archive state.

    A table of its own rather than columns of ``documents``: only documents the API manages have
    one. A document with a row here and an ``upload`` is queued for the workers while it is
    ``waiting``.
    """

    __tablename__ = "document_jobs"
    __table_args__ = (Index("ix_document_jobs_dataset_batch", "dataset_id", "batch"),)

    document_id: Mapped[str] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True)
    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    batch: Mapped[str | None] = mapped_column(String(32))
    upload: Mapped[str | None] = mapped_column(Text)
    process_rule: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    paused_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    archived: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    #: the Celery worker running the document and until when its claim holds (see migration 0005)
    lease_owner: Mapped[str | None] = mapped_column(String(128))
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ApiKeyRow(Base):
    """An HTTP API key: only its sha256 is stored, with a short prefix to recognise it by.

    ``datasets`` lists the dataset ids the key may use; ``None`` means every dataset, and only
    such a key may create datasets.
    """

    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(255), default="")
    prefix: Mapped[str] = mapped_column(String(16))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    datasets: Mapped[list[str] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: when a request last used the key, to the minute (see :data:`zhiku.api.keys.USE_RECORDED_EVERY`)
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class HitTestQueryRow(Base):
    """A query run in the console's hit testing, with the search method it ran with: the
    dataset's recent queries, kept across restarts (the newest few per dataset, see migration 0012)."""

    __tablename__ = "hit_test_queries"
    __table_args__ = (Index("ix_hit_test_queries_dataset", "dataset_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    query: Mapped[str] = mapped_column(Text)
    search_method: Mapped[str] = mapped_column(String(32))
    hits: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class PreparedVersionRow(Base):
    """A document version a worker extracted, split and embedded, waiting for the process that
    owns the embedded stores to write it (see :mod:`zhiku.knowledge_base.runtime.prepared_versions`)."""

    __tablename__ = "prepared_versions"

    document_id: Mapped[str] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True)
    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"), index=True)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class DatasetChangesRow(Base):
    """How much a dataset's stores changed since their indexes were last built (``optimize``):
    what the background optimizer reads to decide when a dataset is due (see
    :mod:`zhiku.knowledge_base.runtime.auto_optimize`). Kept in the database so a restart after a
    large ingest still optimizes. A dataset without a row has not changed since it was made."""

    __tablename__ = "dataset_changes"

    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"), primary_key=True)
    #: store points written or deleted since the last optimize began
    points_changed: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: when points were last written or deleted (the optimizer waits for a quiet dataset)
    changed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: when the last optimize ended
    optimized_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class StoredUploadRow(Base):
    """An uploaded file kept in the database (setting ``upload_store = "database"``), so a worker
    on any machine can read it. No foreign key: the file is stored before its document row."""

    __tablename__ = "stored_uploads"

    document_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    name: Mapped[str] = mapped_column(String(255))
    data: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class PendingSegmentWriteRow(Base):
    """A segment whose store points are being rewritten by an edit (see migration 0002).

    No foreign key to ``segments``: an edit may add a segment whose row does not exist yet.
    """

    __tablename__ = "pending_segment_writes"
    __table_args__ = (Index("ix_pending_segment_writes_dataset", "dataset_id"),)

    segment_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class PendingMetadataPointsRow(Base):
    """A document whose metadata values changed and whose store points do not hold them yet
    (see migration 0019 and ``zhiku.knowledge_base.metadata_points``). ``token`` is new at each
    change: the write that applied one clears the row only if no later change came meanwhile."""

    __tablename__ = "pending_metadata_points"
    __table_args__ = (Index("ix_pending_metadata_points_dataset", "dataset_id"),)

    document_id: Mapped[str] = mapped_column(ForeignKey("documents.id", ondelete="CASCADE"), primary_key=True)
    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    token: Mapped[str] = mapped_column(String(36))


class ConversationRow(Base):
    """A conversation with the knowledge base (see migration 0003); ``user`` is the caller's own
    label for its end user (Dify's ``user``), ``api_key_id`` the key that started it, so a key
    sees only its own conversations."""

    __tablename__ = "conversations"
    __table_args__ = (Index("ix_conversations_owner", "api_key_id", "user", "updated_at"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(255), default="")
    user: Mapped[str] = mapped_column(String(255), default="")
    api_key_id: Mapped[str | None] = mapped_column(String(36))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    messages: Mapped[list[MessageRow]] = relationship(
        back_populates="conversation", cascade="all, delete-orphan", passive_deletes=True
    )


class MessageRow(Base):
    """One turn's half: ``role`` is ``user`` (the question as asked) or ``assistant`` (the answer,
    with the plan that found its sources and the sources it cited as ``resources``)."""

    __tablename__ = "messages"
    __table_args__ = (Index("ix_messages_conversation", "conversation_id", "seq"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(Integer)  # order within the conversation, from 0
    role: Mapped[str] = mapped_column(String(16))
    text: Mapped[str] = mapped_column(Text)
    tokens: Mapped[int] = mapped_column(Integer, default=0)
    answerer: Mapped[str | None] = mapped_column(String(32))
    plan: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    resources: Mapped[list[Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    conversation: Mapped[ConversationRow] = relationship(back_populates="messages")
