"""Reading and editing one dataset's segments by hand, each change re-indexed for that segment only.

An edit of ``content`` or ``keywords`` re-embeds and re-tokenizes the one segment in the vector,
BM25 and keyword stores; ``enabled`` flips its flag in the stores; ``answer`` is not indexed
(Q&A segments index the question) and changes only the row.

A segment with child chunks is a parent (its document was indexed as ``hierarchical_model``):
an edited parent, and a segment added to such a document, is cut into children again (its
keywords are not indexed: its children are), and each child chunk can be listed, added, changed
and deleted (Dify's child chunk endpoints, :mod:`.child_chunks`), re-indexing that parent's children.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import ColumnElement, func, select, update
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db.models import CHILD_KIND, ChildChunkRow, DocumentRow, SegmentRow
from zhiku.core.delegation import Delegated
from zhiku.core.document_status import FINISHED
from zhiku.core.documents import Segment, content_hash, segment_id
from zhiku.core.errors import InvalidInput, NotFound
from zhiku.index_processors.parent_child import child_chunks
from zhiku.knowledge_base.indexing.child_chunks import ChildChunkEditor
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec
from zhiku.knowledge_base.indexing.segment_checks import (
    EditableRows,
    check_keywords,
    check_text,
    length_function,
    non_empty,
)
from zhiku.knowledge_base.records import segment_of
from zhiku.knowledge_base.runtime.jobs import InvalidState

#: Every stored segment is indexed: its row is written in the transaction that indexes it.
SEGMENT_STATUS = "completed"


@dataclass(frozen=True)
class StoredSegment:
    """A segment as stored, with the time its row was first written and how often retrieval
    returned it."""

    segment: Segment
    created_at: datetime | None
    hit_count: int = 0


@dataclass(frozen=True)
class NewSegment:
    content: str
    answer: str | None = None
    keywords: Sequence[str] = ()


class SegmentEditor:
    """List, read, add, change and delete the segments of one dataset's documents."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        dataset_id: str,
        index: Callable[[], DatasetIndex],
        spec: PipelineSpec,
    ) -> None:
        self._sessions = sessions
        self._dataset_id = dataset_id
        self._index = index
        self._spec = spec
        self._rows = EditableRows(dataset_id)
        self._child_chunks = ChildChunkEditor(sessions, self._rows, index, spec)

    def _has_children(self, session: Session, *, document_id: str = "", segment_id_: str = "") -> bool:
        """Whether a segment (or any segment of a document) is a parent of child chunks."""
        column = ChildChunkRow.segment_id if segment_id_ else ChildChunkRow.document_id
        found = (
            select(ChildChunkRow.id)
            .where(column == (segment_id_ or document_id), ChildChunkRow.kind == CHILD_KIND)
            .limit(1)
        )
        return session.scalar(found) is not None

    def _with_children(self, segment: Segment) -> Segment:
        """A parent segment with its children cut again from its content."""
        splitter = self._spec.child_splitter_of(length_function(self._spec))
        return replace(segment, children=child_chunks(splitter, segment.id, segment.content))

    # -- reading -----------------------------------------------------------------------------

    def page(
        self,
        document_id: str | None,
        *,
        offset: int,
        limit: int,
        keyword: str | None = None,
        enabled: bool | None = None,
        statuses: Sequence[str] = (),
    ) -> tuple[list[StoredSegment], int]:
        """One page of a document's segments in order (of the whole dataset's, document by
        document in order of creation, when ``document_id`` is None), and how many match in all.

        ``keyword`` matches content or answer case-insensitively; ``statuses`` other than
        ``completed`` match nothing, since a stored segment is always indexed.
        """
        with self._sessions() as session:
            if document_id is not None:
                self._rows.document(session, document_id)
            if statuses and SEGMENT_STATUS not in statuses:
                return [], 0
            matching: list[ColumnElement[bool]] = []
            if document_id is not None:
                matching.append(SegmentRow.document_id == document_id)
            if keyword:
                matching.append(
                    SegmentRow.content.icontains(keyword, autoescape=True)
                    | SegmentRow.answer.icontains(keyword, autoescape=True)
                )
            if enabled is not None:
                matching.append(SegmentRow.enabled.is_(enabled))
            # counted from the segments alone (every segment has its document): no join to sort;
            # a document's (checked above to be of this dataset) from its own index
            within = [] if document_id is not None else [SegmentRow.dataset_id == self._dataset_id]
            total = session.scalar(select(func.count()).select_from(SegmentRow).where(*within, *matching))
            # the page's ids first, walking the documents' and segments' ordering indexes alone
            # (a segment's dataset is its document's), then only their rows
            page = session.scalars(
                select(SegmentRow.id)
                .join(DocumentRow, DocumentRow.id == SegmentRow.document_id)
                .where(DocumentRow.dataset_id == self._dataset_id, *matching)
                .order_by(DocumentRow.created_at, DocumentRow.id, SegmentRow.position)
                .offset(offset)
                .limit(limit)
            ).all()
            rows = {row.id: row for row in session.scalars(select(SegmentRow).where(SegmentRow.id.in_(page)))}
            # a segment deleted between the two reads (each sees the latest commits) is left out
            return [_stored(rows[id_]) for id_ in page if id_ in rows], int(total or 0)

    def get(self, document_id: str, segment_id_: str) -> StoredSegment:
        with self._sessions() as session:
            self._rows.document(session, document_id)
            return _stored(self._rows.segment(session, document_id, segment_id_))

    def find(self, segment_id_: str) -> StoredSegment:
        """A segment of this dataset by its id alone (its document is in the segment)."""
        found = self.by_ids([segment_id_]).get(segment_id_)
        if found is None:
            raise NotFound(f"no segment {segment_id_!r} in this dataset")
        return found

    def by_ids(self, segment_ids: Sequence[str]) -> dict[str, StoredSegment]:
        """Stored segments of this dataset by id (missing ids are left out)."""
        with self._sessions() as session:
            rows = session.scalars(
                select(SegmentRow).where(
                    SegmentRow.id.in_(list(segment_ids)), SegmentRow.dataset_id == self._dataset_id
                )
            ).all()
            return {row.id: _stored(row) for row in rows}

    # -- editing -----------------------------------------------------------------------------

    def add(self, document_id: str, items: Sequence[NewSegment]) -> list[StoredSegment]:
        """Append segments to an indexed document (Q&A documents need an answer for each)."""
        with self._index().editing():  # the next free position stays free until written
            with self._sessions() as session:
                document = self._rows.editable(session, document_id)
                if document.status not in FINISHED:
                    raise InvalidState(
                        f"document {document_id!r} is {document.status}; "
                        "segments are added once it is indexed"
                    )
                start = session.scalar(
                    select(func.coalesce(func.max(SegmentRow.position) + 1, 0)).where(
                        SegmentRow.document_id == document_id
                    )
                )
                parents = self._has_children(session, document_id=document_id) or (
                    not start and self._spec.doc_form == "hierarchical_model"
                )
            if self._spec.doc_form == "qa_model" and any(not (item.answer or "").strip() for item in items):
                raise InvalidInput("each segment of a qa_model dataset needs an answer")
            length = length_function(self._spec)
            segments = []
            for offset, item in enumerate(items):
                content = non_empty(item.content)
                check_text("answer", item.answer)
                check_keywords(item.keywords)
                position = int(start or 0) + offset
                segments.append(
                    Segment(
                        id=segment_id(document_id, position, content),
                        document_id=document_id,
                        position=position,
                        content=content,
                        tokens=length(content),
                        hash=content_hash(content),
                        keywords=[k for k in item.keywords if k.strip()],
                        answer=item.answer,
                        keywords_given=any(k.strip() for k in item.keywords),
                    )
                )
            if parents:
                segments = [self._with_children(s) for s in segments]
            self._index().write_segments(segments)
            # read back under the lock: a deletion right after the write cannot take them away first
            stored = self.by_ids([s.id for s in segments])
        return [stored[s.id] for s in segments]

    def update(
        self,
        document_id: str,
        segment_id_: str,
        *,
        content: str | None = None,
        answer: str | None = None,
        keywords: Sequence[str] | None = None,
        enabled: bool | None = None,
    ) -> StoredSegment:
        """Change a segment; only what changed is re-indexed, and only for this segment."""
        check_text("answer", answer)
        if keywords is not None:
            check_keywords(keywords)
        with self._index().editing():  # no other write between reading the segment and writing it
            with self._sessions() as session:
                self._rows.editable(session, document_id)
                current = _stored(self._rows.segment(session, document_id, segment_id_)).segment
                parent = self._has_children(session, segment_id_=segment_id_)
            changed = replace(current)
            if content is not None:
                changed.content = non_empty(content)
                changed.hash = content_hash(changed.content)
                changed.tokens = length_function(self._spec)(changed.content)
                if keywords is None:
                    changed.keywords = []  # extracted again from the new text
                    changed.keywords_given = False
            if keywords is not None:
                changed.keywords = [k for k in keywords if k.strip()]
                changed.keywords_given = bool(changed.keywords)  # none given: extracted again
            if answer is not None:
                changed.answer = answer
            if enabled is not None:
                changed.enabled = enabled
            if parent and changed.content != current.content:
                self._index().write_segments([self._with_children(changed)])
            elif not parent and (
                changed.content != current.content
                or changed.keywords != current.keywords
                or (keywords is not None and changed.keywords_given != current.keywords_given)
            ):
                self._index().write_segments([changed])
            else:
                self._update_row(changed, enabled_changed=changed.enabled != current.enabled)
            return self.get(document_id, segment_id_)

    def delete(self, document_id: str, segment_id_: str) -> None:
        with self._index().editing():
            with self._sessions() as session:
                self._rows.editable(session, document_id)
                self._rows.segment(session, document_id, segment_id_)
            self._index().delete_segments([segment_id_])

    def _update_row(self, segment: Segment, *, enabled_changed: bool) -> None:
        if enabled_changed:
            self._index().set_segments_enabled([segment.id], segment.enabled)
        with self._sessions.begin() as session:
            session.execute(
                update(SegmentRow)
                .where(SegmentRow.id == segment.id)
                .values(
                    answer=segment.answer, keywords=segment.keywords, keywords_given=segment.keywords_given
                )
            )

    # -- child chunks (parent-child datasets) ---------------------------------------------------

    children = Delegated("_child_chunks", ChildChunkEditor.children)
    child_counts = Delegated("_child_chunks", ChildChunkEditor.child_counts)
    add_child = Delegated("_child_chunks", ChildChunkEditor.add_child)
    update_child = Delegated("_child_chunks", ChildChunkEditor.update_child)
    delete_child = Delegated("_child_chunks", ChildChunkEditor.delete_child)


def _stored(row: SegmentRow) -> StoredSegment:
    return StoredSegment(segment_of(row), row.created_at, row.hit_count or 0)
