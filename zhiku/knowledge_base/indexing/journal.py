"""Repairs that keep a dataset's stores matching its rows across failures and crashes.

Segment edits overwrite points in place, so their ids are journalled first
(``pending_segment_writes``): a failure, or the next open after a kill, rewrites those points
from the rows. A crash between a point's write and its row's commit (or between a row's delete
and its points') leaves points without rows: invisible to search, and swept at the next open.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy import delete, func, select

from zhiku.core.db.models import CHILD_KIND, ChildChunkRow, PendingSegmentWriteRow, SegmentRow

if TYPE_CHECKING:
    from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex

log = logging.getLogger(__name__)


class PointJournal:
    """The journal of one dataset's segment edits, and the repairs an open runs."""

    def __init__(self, index: DatasetIndex) -> None:
        self._index = index

    def record(self, ids: Sequence[str]) -> None:
        """Record that these segments' points are about to change (an edit, or a flag flip)."""
        with self._index.sessions.begin() as session:
            known = set(
                session.scalars(
                    select(PendingSegmentWriteRow.segment_id).where(
                        PendingSegmentWriteRow.segment_id.in_(ids)
                    )
                )
            )
            session.add_all(
                PendingSegmentWriteRow(segment_id=i, dataset_id=self._index.dataset_id)
                for i in ids
                if i not in known
            )

    def clear(self, ids: Sequence[str]) -> None:
        """The points of these segments match their rows again: forget them."""
        with self._index.sessions.begin() as session:
            session.execute(
                delete(PendingSegmentWriteRow).where(PendingSegmentWriteRow.segment_id.in_(list(ids)))
            )

    def restore(self, ids: Sequence[str]) -> None:
        """Make these segments' points match their rows again (rows absent: no points), then clear
        their journal entries. On a failure the entries stay for the next open."""
        try:
            current = self._index.points.current(ids)
            gone = sorted(set(ids) - {p.id for p in current})
            if current:
                vectors = self._index.embedding.embed_documents([p.content for p in current])
                self._index.points.upsert(
                    current, vectors, [self._index.tokenizer.tokenize(p.content) for p in current]
                )
            if gone:
                self._index.vector.delete(gone)
                self._index.fulltext.delete(gone)
            self._index.vector.flush()
            self._index.fulltext.flush()
            self.clear(ids)
        except Exception:  # noqa: BLE001 - the journal keeps them for the next open
            log.warning(
                "could not restore %d segments' points; retried at the next open", len(ids), exc_info=True
            )

    def repair_pending(self) -> int:
        """Rewrite the points of segments whose edit was interrupted; returns how many."""
        with self._index.write_lock(), self._index.sessions() as session:
            ids = list(
                session.scalars(
                    select(PendingSegmentWriteRow.segment_id).where(
                        PendingSegmentWriteRow.dataset_id == self._index.dataset_id
                    )
                )
            )
        if ids:
            self.restore(ids)
        return len(ids)

    def sweep_orphans(self) -> int:
        """Delete store points without a segment row: left by a crash before a commit, or after
        one and before the replaced or deleted points went. A point is written before its row and
        deleted after it, so a store holding as many points as there are rows has no orphan:
        counting first keeps the usual call, with nothing to sweep, cheap."""
        with self._index.write_lock():
            with self._index.sessions() as session:
                segments = select(SegmentRow.id).where(SegmentRow.dataset_id == self._index.dataset_id)
                children = select(ChildChunkRow.id, ChildChunkRow.segment_id, ChildChunkRow.kind).where(
                    ChildChunkRow.dataset_id == self._index.dataset_id
                )
                parents = select(ChildChunkRow.segment_id).where(
                    ChildChunkRow.dataset_id == self._index.dataset_id, ChildChunkRow.kind == CHILD_KIND
                )
                child_ids = select(ChildChunkRow.id).where(ChildChunkRow.dataset_id == self._index.dataset_id)
                points = select(func.count()).select_from(
                    segments.where(SegmentRow.id.not_in(parents)).union_all(child_ids).subquery()
                    if self._index.catalog.has_children
                    else segments.subquery()
                )
                rows = session.scalar(points)
                stores = [
                    store for store in (self._index.vector, self._index.fulltext) if store.count() != rows
                ]
                if not stores:
                    return 0
                child_rows = session.execute(children).all() if self._index.catalog.has_children else []
                parent_ids = {parent for _, parent, kind in child_rows if kind == CHILD_KIND}
                known = {i for i in session.scalars(segments) if i not in parent_ids}
                known |= {child for child, _, _ in child_rows}
            removed = 0
            for store in stores:
                orphans = sorted(store.ids() - known)
                if orphans:
                    store.delete(orphans)
                    store.flush()
                    removed += len(orphans)
            return removed
