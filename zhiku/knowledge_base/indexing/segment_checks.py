"""What every hand edit of segments and child chunks checks first: the text is text a store can
hold, and the document and segment named are this dataset's and may be edited now."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sqlalchemy.orm import Session

from zhiku.core.db.models import DocumentJobRow, DocumentRow, SegmentRow
from zhiku.core.document_status import IN_PROGRESS
from zhiku.core.errors import InvalidInput, NotFound
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec
from zhiku.knowledge_base.runtime.jobs import ArchivedDocument, DocumentIndexing
from zhiku.splitters import TiktokenLength, TransformersTokenizerLength
from zhiku.splitters.length import LengthFunction


def length_function(spec: PipelineSpec) -> LengthFunction:
    """The token counter the dataset's splitter uses, so edited segments count tokens the same way."""
    return (
        TiktokenLength() if spec.length == "cl100k_base" else TransformersTokenizerLength(Path(spec.length))
    )


class EditableRows:
    """Finds the rows an edit names in one dataset: NotFound for a document or segment that is
    not there, and no edit of a document being indexed or archived."""

    def __init__(self, dataset_id: str) -> None:
        self._dataset_id = dataset_id

    def document(self, session: Session, document_id: str) -> DocumentRow:
        row = session.get(DocumentRow, document_id)
        if row is None or row.dataset_id != self._dataset_id:
            raise NotFound(f"no document {document_id!r} in this dataset")
        return row

    def editable(self, session: Session, document_id: str) -> DocumentRow:
        row = self.document(session, document_id)
        if row.status in IN_PROGRESS:
            raise DocumentIndexing(f"document {document_id!r} is being indexed; edit its segments afterwards")
        job = session.get(DocumentJobRow, document_id)
        if job is not None and job.archived:
            raise ArchivedDocument(f"document {document_id!r} is archived; unarchive it first")
        return row

    @staticmethod
    def segment(session: Session, document_id: str, segment_id_: str) -> SegmentRow:
        row = session.get(SegmentRow, segment_id_)
        if row is None or row.document_id != document_id:
            raise NotFound(f"no segment {segment_id_!r} in this document")
        return row


def non_empty(content: str) -> str:
    check_text("content", content)
    text = content.strip()
    if not text:
        raise InvalidInput("a segment needs non-empty content")
    return text


def check_keywords(keywords: Sequence[str]) -> None:
    for keyword in keywords:
        check_text("keywords", keyword)


def check_text(field: str, value: str | None) -> None:
    """InvalidInput naming ``field`` for text no store can hold: a lone surrogate (not Unicode
    text at all) or a NUL (PostgreSQL text refuses it)."""
    if value is None:
        return
    if "\x00" in value:
        raise InvalidInput(f"{field}: contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"{field}: not valid Unicode text (lone surrogate at {exc.start})") from exc
