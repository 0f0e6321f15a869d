"""Read-only views of database rows handed to callers (no live ORM objects escape)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from zhiku.core.db.models import ChildChunkRow, DocumentRow, SegmentRow
from zhiku.core.documents import ChildChunk, Segment


@dataclass(frozen=True)
class DocumentInfo:
    id: str
    dataset_id: str
    name: str
    status: str
    error: str | None
    segment_count: int
    token_count: int
    enabled: bool
    created_at: datetime
    stage_times: dict[str, datetime | None] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    #: set by an ingest that found this document's content already there: "skipped", "replaced"
    duplicate: str | None = None
    #: sha256 of the document's content (None when it was not read from bytes, e.g. Q&A pairs)
    file_hash: str | None = None
    #: where the content came from (a file path, or a label for text given directly) and its bytes
    source: str = ""
    size: int = 0

    @classmethod
    def of(cls, row: DocumentRow) -> DocumentInfo:
        return cls(
            id=row.id,
            dataset_id=row.dataset_id,
            name=row.name,
            status=row.status,
            error=row.error,
            segment_count=row.segment_count,
            token_count=row.token_count,
            enabled=row.enabled,
            created_at=row.created_at,
            stage_times={
                "parsing": row.parsing_started_at,
                "cleaning": row.cleaning_started_at,
                "splitting": row.splitting_started_at,
                "indexing": row.indexing_started_at,
                "completed": row.completed_at,
                "error": row.error_at,
            },
            metadata=dict(row.doc_metadata or {}),
            file_hash=row.file_hash,
            source=row.source,
            size=row.size,
        )


def segment_of(row: SegmentRow) -> Segment:
    """The segment a database row holds, detached from the session."""
    return Segment(
        id=row.id,
        document_id=row.document_id,
        position=row.position,
        content=row.content,
        tokens=row.tokens,
        hash=row.hash,
        keywords=list(row.keywords or []),
        answer=row.answer,
        enabled=row.enabled,
        metadata=dict(row.seg_metadata or {}),
        keywords_given=row.keywords_given,
    )


def child_of(row: ChildChunkRow) -> ChildChunk:
    """The child chunk a database row holds, detached from the session."""
    return ChildChunk(
        id=row.id,
        position=row.position,
        content=row.content,
        tokens=row.tokens,
        hash=row.hash,
        keywords=list(row.keywords or []),
        enabled=row.enabled,
    )
