"""The segments of one dataset as stored: reading them in order with their children and
summaries, serving them or not, and counting the retrievals that returned them."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db import SegmentRow
from zhiku.core.db.models import SUMMARY_KIND, ChildChunkRow
from zhiku.core.documents import Segment
from zhiku.core.errors import NotFound
from zhiku.knowledge_base.dataset_settings import dataset_row
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex
from zhiku.knowledge_base.records import child_of, segment_of


class DatasetSegments:
    """The segments of one dataset; ``index`` opens its stores when a change must reach them."""

    def __init__(
        self, sessions: sessionmaker[Session], dataset_id: str, index: Callable[[], DatasetIndex]
    ) -> None:
        self._sessions = sessions
        self.dataset_id = dataset_id
        self._index = index

    def all(self, document_id: str | None = None, *, with_children: bool = False) -> list[Segment]:
        """The segments of one document (or all), in order; ``with_children`` fills each parent's
        ``children`` (parent-child datasets) in order and each segment's ``summary``."""
        with self._sessions() as session:
            query = select(SegmentRow).where(SegmentRow.dataset_id == self.dataset_id)
            if document_id is not None:
                query = query.where(SegmentRow.document_id == document_id)
            rows = session.scalars(query.order_by(SegmentRow.document_id, SegmentRow.position)).all()
            segments = [segment_of(row) for row in rows]
            if with_children:
                by_id = {segment.id: segment for segment in segments}
                children = select(ChildChunkRow).where(ChildChunkRow.dataset_id == self.dataset_id)
                if document_id is not None:
                    children = children.where(ChildChunkRow.document_id == document_id)
                for child in session.scalars(children.order_by(ChildChunkRow.position)):
                    if child.segment_id not in by_id:
                        continue
                    if child.kind == SUMMARY_KIND:
                        by_id[child.segment_id].summary = child_of(child)
                    else:
                        by_id[child.segment_id].children.append(child_of(child))
            return segments

    def set_enabled(self, segment_ids: Sequence[str], enabled: bool) -> None:
        """Enable or disable segments in the database and in both stores; NotFound, before
        anything changes, when one is not in this dataset."""
        index = self._index()
        with index.editing():  # a concurrent edit of the segment would set its stores' flag back
            with self._sessions() as session:
                found = set(
                    session.scalars(
                        select(SegmentRow.id).where(
                            SegmentRow.id.in_(list(segment_ids)), SegmentRow.dataset_id == self.dataset_id
                        )
                    )
                )
                missing = [segment_id for segment_id in segment_ids if segment_id not in found]
                if missing:
                    name = dataset_row(session, self.dataset_id).name
                    raise NotFound(f"no segment {missing[0]!r} in dataset {name!r}")
            index.set_segments_enabled(list(dict.fromkeys(segment_ids)), enabled)

    def count_hits(self, segment_ids: Sequence[str]) -> None:
        """Add one to the ``hit_count`` of each of these segments (each counted once)."""
        ids = sorted(set(segment_ids))
        if ids:
            with self._sessions.begin() as session:
                session.execute(
                    update(SegmentRow)
                    .where(SegmentRow.id.in_(ids), SegmentRow.dataset_id == self.dataset_id)
                    .values(hit_count=SegmentRow.hit_count + 1)
                )
