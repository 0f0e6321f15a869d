"""Which documents of an evaluation dataset are served whole, so that a run scores the corpus it
claims to: an interrupted ingest leaves documents waiting, indexing or in error (none of their
passages served), and scores over them would be silently low."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from zhiku.core.db import DocumentRow, SegmentRow
from zhiku.core.document_status import DocumentStatus
from zhiku.knowledge_base import Dataset, KnowledgeBase

#: How many failed documents the report names (the count covers them all).
FIRST_ERRORS = 3


@dataclass
class Coverage:
    """The dataset's documents split into served ones and the rest."""

    #: names and content hashes of the documents served whole (the keys an eval set's units have)
    served_names: set[str] = field(default_factory=set)
    served_hashes: set[str] = field(default_factory=set)
    served_documents: int = 0
    served_segments: int = 0
    #: documents not served whole: not ``completed``, disabled, or whose segment rows do not
    #: match their segment count; in the order they were created
    unserved: list[dict[str, Any]] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return not self.unserved

    def errors(self) -> dict[str, Any]:
        """The count of unserved documents and the first ones with their reasons."""
        return {"count": len(self.unserved), "first": self.unserved[:FIRST_ERRORS]}


def coverage(kb: KnowledgeBase, dataset: Dataset) -> Coverage:
    """Audit ``dataset`` in two queries (one row per document, segment rows counted in SQL)."""
    with kb.sessions() as session:
        rows = session.execute(
            select(
                DocumentRow.id,
                DocumentRow.name,
                DocumentRow.file_hash,
                DocumentRow.status,
                DocumentRow.error,
                DocumentRow.enabled,
                DocumentRow.segment_count,
            )
            .where(DocumentRow.dataset_id == dataset.id)
            .order_by(DocumentRow.created_at, DocumentRow.id)
        ).all()
        stored = dict(
            session.execute(
                select(SegmentRow.document_id, func.count())
                .where(SegmentRow.dataset_id == dataset.id)
                .group_by(SegmentRow.document_id)
            ).all()
        )
    result = Coverage()
    for row in rows:
        segments = int(stored.get(row.id, 0))
        reason = _unserved_reason(row.status, row.error, row.enabled, row.segment_count, segments)
        if reason is None:
            result.served_names.add(row.name)
            if row.file_hash:
                result.served_hashes.add(row.file_hash)
            result.served_documents += 1
            result.served_segments += segments
        else:
            result.unserved.append({"id": row.id, "name": row.name, "status": row.status, "reason": reason})
    return result


def _unserved_reason(status: str, error: str | None, enabled: bool, expected: int, stored: int) -> str | None:
    """Why a document is not served whole, or None when it is."""
    if status != DocumentStatus.COMPLETED:
        return error or f"left {status}"
    if not enabled:
        return "disabled"
    if expected == 0 or stored != expected:
        return f"{stored} segment rows for a segment count of {expected}"
    return None
