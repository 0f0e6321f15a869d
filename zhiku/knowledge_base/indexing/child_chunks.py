"""Reading and editing the child chunks of one dataset's parent segments (Dify's child chunk
endpoints), each change re-indexing that parent's children in every store."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db.models import CHILD_KIND, ChildChunkRow
from zhiku.core.documents import ChildChunk, Segment, child_chunk_id, content_hash
from zhiku.core.errors import InvalidInput, NotFound
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec
from zhiku.knowledge_base.indexing.segment_checks import EditableRows, length_function, non_empty
from zhiku.knowledge_base.records import child_of, segment_of


@dataclass(frozen=True)
class StoredChild:
    """A child chunk as stored, with its parent segment and document."""

    chunk: ChildChunk
    segment_id: str
    document_id: str
    created_at: datetime


class ChildChunkEditor:
    """List, add, change and delete the child chunks of one dataset's parent segments."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        rows: EditableRows,
        index: Callable[[], DatasetIndex],
        spec: PipelineSpec,
    ) -> None:
        self._sessions = sessions
        self._rows = rows
        self._index = index
        self._spec = spec

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
            self._rows.document(session, document_id)
            self._rows.segment(session, document_id, segment_id_)
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
        text = non_empty(content)
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
        text = non_empty(content)
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
            self._rows.editable(session, document_id)
            parent = segment_of(self._rows.segment(session, document_id, segment_id_))
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


def _child_index(children: Sequence[ChildChunk], child_id: str) -> int:
    for index, child in enumerate(children):
        if child.id == child_id:
            return index
    raise NotFound(f"no child chunk {child_id!r} in this segment")


def _stored_child(row: ChildChunkRow, document_id: str) -> StoredChild:
    return StoredChild(child_of(row), row.segment_id, document_id, row.created_at)
