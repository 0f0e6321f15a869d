"""The database side of a dataset's writes: segment and child rows, keyword postings, counts.

Rows of segments, children and summaries are written in one transaction with the document's
status (see :mod:`zhiku.knowledge_base.indexing.document_writes`): that commit is the moment a
version becomes visible.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, func, insert, select, update
from sqlalchemy.orm import Session

from zhiku.core.db.models import CHILD_KIND, SUMMARY_KIND, ChildChunkRow, DocumentRow, SegmentRow
from zhiku.core.documents import ChildChunk, Segment

if TYPE_CHECKING:
    from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex

SEGMENTS = SegmentRow.metadata.tables[SegmentRow.__tablename__]
_CHILDREN = SegmentRow.metadata.tables[ChildChunkRow.__tablename__]


class SegmentRows:
    """Writes the rows and postings of one dataset's segments, in the caller's transaction."""

    def __init__(self, index: DatasetIndex) -> None:
        self._index = index

    def row(self, segment: Segment) -> dict[str, Any]:
        """A segment's row, as a plain mapping for a Core insert."""
        return {
            "id": segment.id,
            "dataset_id": self._index.dataset_id,
            "document_id": segment.document_id,
            "position": segment.position,
            "content": segment.content,
            "answer": segment.answer,
            "hash": segment.hash,
            "tokens": segment.tokens,
            "keywords": segment.keywords,
            "keywords_given": keywords_given(segment),
            "enabled": segment.enabled,
            "seg_metadata": segment.metadata,
        }

    def child_row(self, segment: Segment, child: ChildChunk, kind: str) -> dict[str, Any]:
        """A child chunk's (or summary's, by ``kind``) row, as a plain mapping for a Core insert."""
        return {
            "id": child.id,
            "segment_id": segment.id,
            "dataset_id": self._index.dataset_id,
            "document_id": segment.document_id,
            "position": child.position,
            "content": child.content,
            "hash": child.hash,
            "tokens": child.tokens,
            "keywords": child.keywords,
            "enabled": child.enabled,
            "kind": kind,
        }

    def add_children(
        self, session: Session, segments: Sequence[Segment], postings: dict[str, list[tuple[str, float]]]
    ) -> None:
        """Insert the child and summary rows of these segments and their postings (caller's
        transaction)."""
        rows = [self.child_row(s, c, CHILD_KIND) for s in segments for c in s.children]
        rows += [self.child_row(s, s.summary, SUMMARY_KIND) for s in segments if s.summary is not None]
        if rows:
            self._index.catalog.has_children = True
            session.execute(insert(_CHILDREN), rows)
            self._index.child_keywords.add(session, [(row["id"], postings[row["id"]]) for row in rows])

    def delete(self, session: Session, condition: Any) -> None:
        """Delete the segment rows matching ``condition`` and their keyword postings."""
        self._index.keywords.delete_segments(
            session, list(session.scalars(select(SegmentRow.id).where(condition)))
        )
        session.execute(delete(SegmentRow).where(condition))

    @staticmethod
    def recount(session: Session, document_ids: set[str]) -> None:
        """Set these documents' segment and token counts from their rows (caller's transaction)."""
        for document_id in document_ids:
            count, tokens = session.execute(
                select(func.count(), func.coalesce(func.sum(SegmentRow.tokens), 0)).where(
                    SegmentRow.document_id == document_id
                )
            ).one()
            session.execute(
                update(DocumentRow)
                .where(DocumentRow.id == document_id)
                .values(segment_count=int(count), token_count=int(tokens))
            )

    def postings(self, item: Segment | ChildChunk, tokens: Sequence[str]) -> list[tuple[str, float]]:
        """Keyword postings of a point: extracted ones, and those of the keywords it was given
        (weighted above them). A point given none shows the extracted ones as its keywords (a
        segment's stored extracted keywords are extracted again: they are not given)."""
        if self._index.keyword_extractor.tokenizer is not self._index.tokenizer:  # user dictionary re-read
            tokens = self._index.keyword_extractor.tokenizer.tokenize(item.content)
        given = keywords_given(item) if isinstance(item, Segment) else bool(item.keywords)
        if isinstance(item, Segment):
            item.keywords_given = given
        if given:
            return self._index.keyword_extractor.with_given(item.keywords, tokens)
        item.keywords = self._index.keyword_extractor.shown(tokens)
        return self._index.keyword_extractor.postings(tokens)


def keywords_given(segment: Segment) -> bool:
    """Whether a segment's keywords are given: as it says, else when it has any."""
    given = segment.keywords_given if segment.keywords_given is not None else True
    return given and bool(segment.keywords)
