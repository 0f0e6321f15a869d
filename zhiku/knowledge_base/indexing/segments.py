"""Reading and editing one dataset's segments by hand, each change re-indexed for that segment only.

An edit of ``content`` or ``keywords`` re-embeds and re-tokenizes the one segment in the vector,
BM25 and keyword stores; ``enabled`` flips its flag in the stores; ``answer`` is not indexed
(Q&A segments index the question) and changes only the row.

A segment with child chunks is a parent (its document was indexed as ``hierarchical_model``):
an edited parent, and a segment added to such a document, is cut into children again (its
keywords are not indexed: its children are), and each child chunk can be listed, added, changed
and deleted (Dify's child chunk endpoints), re-indexing that parent's children.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db.models import CHILD_KIND, ChildChunkRow, DocumentJobRow, DocumentRow, SegmentRow
from zhiku.core.document_status import FINISHED, IN_PROGRESS
from zhiku.core.documents import ChildChunk, Segment, child_chunk_id, content_hash, segment_id
from zhiku.core.errors import InvalidInput, NotFound
from zhiku.index_processors.parent_child import child_chunks
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec
from zhiku.knowledge_base.records import child_of, segment_of
from zhiku.knowledge_base.runtime.jobs import ArchivedDocument, DocumentIndexing, InvalidState
from zhiku.splitters import TiktokenLength, TransformersTokenizerLength
from zhiku.splitters.length import LengthFunction

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
class StoredChild:
    """A child chunk as stored, with its parent segment and document."""

    chunk: ChildChunk
    segment_id: str
    document_id: str
    created_at: datetime


@dataclass(frozen=True)
class NewSegment:
    content: str
    answer: str | None = None
    keywords: Sequence[str] = ()


def length_function(spec: PipelineSpec) -> LengthFunction:
    """The token counter the dataset's splitter uses, so edited segments count tokens the same way."""
    return (
        TiktokenLength() if spec.length == "cl100k_base" else TransformersTokenizerLength(Path(spec.length))
    )


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
                self._document(session, document_id)
            if statuses and SEGMENT_STATUS not in statuses:
                return [], 0
            query = (
                select(SegmentRow)
                .join(DocumentRow, DocumentRow.id == SegmentRow.document_id)
                .where(SegmentRow.dataset_id == self._dataset_id)
            )
            if document_id is not None:
                query = query.where(SegmentRow.document_id == document_id)
            if keyword:
                query = query.where(
                    SegmentRow.content.icontains(keyword, autoescape=True)
                    | SegmentRow.answer.icontains(keyword, autoescape=True)
                )
            if enabled is not None:
                query = query.where(SegmentRow.enabled.is_(enabled))
            total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
            order = (DocumentRow.created_at, DocumentRow.id, SegmentRow.position)
            rows = session.scalars(query.order_by(*order).offset(offset).limit(limit)).all()
            return [_stored(row) for row in rows], int(total)

    def get(self, document_id: str, segment_id_: str) -> StoredSegment:
        with self._sessions() as session:
            self._document(session, document_id)
            return _stored(self._segment(session, document_id, segment_id_))

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
                document = self._editable(session, document_id)
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
                content = _non_empty(item.content)
                _check_text("answer", item.answer)
                _check_keywords(item.keywords)
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
                    )
                )
            if parents:
                segments = [self._with_children(s) for s in segments]
            self._index().write_segments(segments)
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
        _check_text("answer", answer)
        if keywords is not None:
            _check_keywords(keywords)
        with self._index().editing():  # no other write between reading the segment and writing it
            with self._sessions() as session:
                self._editable(session, document_id)
                current = _stored(self._segment(session, document_id, segment_id_)).segment
                parent = self._has_children(session, segment_id_=segment_id_)
            changed = replace(current)
            if content is not None:
                changed.content = _non_empty(content)
                changed.hash = content_hash(changed.content)
                changed.tokens = length_function(self._spec)(changed.content)
                if keywords is None:
                    changed.keywords = []  # extracted again from the new text
            if keywords is not None:
                changed.keywords = [k for k in keywords if k.strip()]
            if answer is not None:
                changed.answer = answer
            if enabled is not None:
                changed.enabled = enabled
            if parent and changed.content != current.content:
                self._index().write_segments([self._with_children(changed)])
            elif not parent and (
                changed.content != current.content or changed.keywords != current.keywords
            ):
                self._index().write_segments([changed])
            else:
                self._update_row(changed, enabled_changed=changed.enabled != current.enabled)
            return self.get(document_id, segment_id_)

    def delete(self, document_id: str, segment_id_: str) -> None:
        with self._index().editing():
            with self._sessions() as session:
                self._editable(session, document_id)
                self._segment(session, document_id, segment_id_)
            self._index().delete_segments([segment_id_])

    def _update_row(self, segment: Segment, *, enabled_changed: bool) -> None:
        if enabled_changed:
            self._index().set_segments_enabled([segment.id], segment.enabled)
        with self._sessions.begin() as session:
            session.execute(
                update(SegmentRow)
                .where(SegmentRow.id == segment.id)
                .values(answer=segment.answer, keywords=segment.keywords)
            )

    # -- child chunks (parent-child datasets) ---------------------------------------------------

    def children(
        self,
        document_id: str,
        segment_id_: str,
        *,
        offset: int = 0,
        limit: int = 20,
        keyword: str | None = None,
    ) -> tuple[list[StoredChild], int]:
        """One page of a parent segment's child chunks in order, and how many match in all;
        ``keyword`` matches their content case-insensitively."""
        with self._sessions() as session:
            self._document(session, document_id)
            self._segment(session, document_id, segment_id_)
            query = select(ChildChunkRow).where(
                ChildChunkRow.segment_id == segment_id_, ChildChunkRow.kind == CHILD_KIND
            )
            if keyword:
                query = query.where(ChildChunkRow.content.icontains(keyword, autoescape=True))
            total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
            rows = session.scalars(query.order_by(ChildChunkRow.position).offset(offset).limit(limit)).all()
            return [_stored_child(row, document_id) for row in rows], int(total)

    def child_counts(self, segment_ids: Sequence[str]) -> dict[str, int]:
        """How many child chunks each of these segments has (parents only appear)."""
        if not segment_ids:
            return {}
        with self._sessions() as session:
            rows = session.execute(
                select(ChildChunkRow.segment_id, func.count())
                .where(ChildChunkRow.segment_id.in_(list(segment_ids)))
                .group_by(ChildChunkRow.segment_id)
            )
            return {segment_id: int(count) for segment_id, count in rows}

    def add_child(self, document_id: str, segment_id_: str, content: str) -> StoredChild:
        """Append a child chunk to a parent; its children are indexed again (all or none)."""
        text = _non_empty(content)
        with self._index().editing():
            parent = self._parent(document_id, segment_id_)
            position = max((c.position for c in parent.children), default=-1) + 1
            child = ChildChunk(
                id=child_chunk_id(parent.id, position, text),
                position=position,
                content=text,
                tokens=length_function(self._spec)(text),
                hash=content_hash(text),
            )
            self._index().write_segments([replace(parent, children=[*parent.children, child])])
        return self._child(document_id, segment_id_, child.id)

    def update_child(self, document_id: str, segment_id_: str, child_id: str, content: str) -> StoredChild:
        """Change a child chunk's content (it keeps its id); its parent's text is left as it is."""
        text = _non_empty(content)
        with self._index().editing():
            parent = self._parent(document_id, segment_id_)
            children = list(parent.children)
            index = _child_index(children, child_id)
            children[index] = replace(
                children[index],
                content=text,
                hash=content_hash(text),
                tokens=length_function(self._spec)(text),
                keywords=[],
            )
            self._index().write_segments([replace(parent, children=children)])
        return self._child(document_id, segment_id_, child_id)

    def delete_child(self, document_id: str, segment_id_: str, child_id: str) -> None:
        """Remove a child chunk; a parent keeps at least one (delete the segment instead)."""
        with self._index().editing():
            parent = self._parent(document_id, segment_id_)
            index = _child_index(list(parent.children), child_id)
            if len(parent.children) == 1:
                raise InvalidInput(
                    "a parent segment keeps at least one child chunk; delete the segment instead"
                )
            children = [c for i, c in enumerate(parent.children) if i != index]
            self._index().write_segments([replace(parent, children=children)])

    def _parent(self, document_id: str, segment_id_: str) -> Segment:
        """A parent segment with its stored children, of an editable document."""
        with self._sessions() as session:
            self._editable(session, document_id)
            parent = segment_of(self._segment(session, document_id, segment_id_))
            of_parent = select(ChildChunkRow).where(
                ChildChunkRow.segment_id == segment_id_, ChildChunkRow.kind == CHILD_KIND
            )
            rows = session.scalars(of_parent.order_by(ChildChunkRow.position)).all()
            if not rows:
                raise InvalidInput(
                    f"segment {segment_id_!r} has no child chunks: they exist only in documents "
                    "indexed as hierarchical_model (parent-child)"
                )
            parent.children = [child_of(row) for row in rows]
            return parent

    def _child(self, document_id: str, segment_id_: str, child_id: str) -> StoredChild:
        with self._sessions() as session:
            row = session.get(ChildChunkRow, child_id)
            if row is None or row.segment_id != segment_id_ or row.kind != CHILD_KIND:
                raise NotFound(f"no child chunk {child_id!r} in this segment")
            return _stored_child(row, document_id)

    # -- checks ------------------------------------------------------------------------------

    def _document(self, session: Session, document_id: str) -> DocumentRow:
        row = session.get(DocumentRow, document_id)
        if row is None or row.dataset_id != self._dataset_id:
            raise NotFound(f"no document {document_id!r} in this dataset")
        return row

    def _editable(self, session: Session, document_id: str) -> DocumentRow:
        row = self._document(session, document_id)
        if row.status in IN_PROGRESS:
            raise DocumentIndexing(f"document {document_id!r} is being indexed; edit its segments afterwards")
        job = session.get(DocumentJobRow, document_id)
        if job is not None and job.archived:
            raise ArchivedDocument(f"document {document_id!r} is archived; unarchive it first")
        return row

    @staticmethod
    def _segment(session: Session, document_id: str, segment_id_: str) -> SegmentRow:
        row = session.get(SegmentRow, segment_id_)
        if row is None or row.document_id != document_id:
            raise NotFound(f"no segment {segment_id_!r} in this document")
        return row


def _non_empty(content: str) -> str:
    _check_text("content", content)
    text = content.strip()
    if not text:
        raise InvalidInput("a segment needs non-empty content")
    return text


def _check_keywords(keywords: Sequence[str]) -> None:
    for keyword in keywords:
        _check_text("keywords", keyword)


def _check_text(field: str, value: str | None) -> None:
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


def _child_index(children: Sequence[ChildChunk], child_id: str) -> int:
    for index, child in enumerate(children):
        if child.id == child_id:
            return index
    raise NotFound(f"no child chunk {child_id!r} in this segment")


def _stored_child(row: ChildChunkRow, document_id: str) -> StoredChild:
    return StoredChild(child_of(row), row.segment_id, document_id, row.created_at)


def _stored(row: SegmentRow) -> StoredSegment:
    return StoredSegment(segment_of(row), row.created_at, row.hit_count or 0)
