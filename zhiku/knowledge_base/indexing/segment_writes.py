"""Writes of single segments (edits through the HTTP API): new or changed segments, deletions,
enabling and disabling.

An edit keeps a segment's id, so its points are overwritten before its row changes; the ids are
journalled first (:mod:`zhiku.knowledge_base.indexing.journal`), so the database and the three
stores agree on the old or the new version whatever fails, at once or at the next open.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlalchemy import delete, insert, select, update

from zhiku.core.db.models import CHILD_KIND, ChildChunkRow, PendingSegmentWriteRow, SegmentRow
from zhiku.core.documents import ChildChunk, Segment
from zhiku.core.errors import StoreError, ZhikuError
from zhiku.knowledge_base.indexing.points import points_of, points_of_segment

if TYPE_CHECKING:
    from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex

log = logging.getLogger(__name__)


class SegmentWrites:
    """Writes some segments of one dataset, leaving the rest of their documents alone."""

    def __init__(self, index: DatasetIndex) -> None:
        self._index = index

    def write_segments(self, segments: Sequence[Segment]) -> None:
        """Index these segments (new, or changed) without touching the rest of their documents.

        Keywords a segment carries are indexed as given, each tokenized as queries are; a segment
        without keywords gets extracted ones. An edit keeps the segment's id, so its points are
        overwritten before its row changes: the ids are journalled first (``pending_segment_writes``);
        on a failure the previous points are written back, and a kill leaves the journal for the
        next open, which rewrites those points from the rows. Either way the database and the
        three stores agree on the old or the new version.

        A segment with ``children`` is a parent: its children (the complete new set; a child that
        keeps its id is overwritten) replace the ones it had, and those it no longer has are
        deleted after the commit.
        """
        ids = [s.id for s in segments]
        points = points_of(segments)
        with self._index.write_lock():
            vectors = self._index.embedding.embed_documents([p.content for p in points])
            token_lists = [self._index.tokenizer.tokenize(p.content) for p in points]
            items: dict[str, Segment | ChildChunk] = {s.id: s for s in segments}
            items.update({item.id: item for s in segments for item in points_of_segment(s)})
            weights = {
                point.id: self._index.rows.postings(items[point.id], tokens)
                for point, tokens in zip(points, token_lists, strict=True)
            }
            stale = sorted(self._index.points.children_ids(ids) - {p.id for p in points})
            touched = ids + [p.id for p in points if p.parent is not None]
            self._index.journal.record(touched + stale)
            try:
                self._index.points.upsert(points, vectors, token_lists)
                self._index.vector.flush()
                self._index.fulltext.flush()
                with self._index.sessions.begin() as session:
                    existing = set(session.scalars(select(SegmentRow.id).where(SegmentRow.id.in_(ids))))
                    self._index.keywords.delete_segments(session, ids)
                    session.execute(delete(ChildChunkRow).where(ChildChunkRow.segment_id.in_(ids)))
                    for segment in segments:
                        row = self._index.rows.row(segment)
                        if segment.id in existing:
                            for key in ("id", "dataset_id", "document_id"):
                                row.pop(key)
                            session.execute(
                                update(SegmentRow).where(SegmentRow.id == segment.id).values(**row)
                            )
                        else:
                            session.execute(insert(SegmentRow), [row])
                    self._index.rows.add_children(session, segments, weights)
                    self._index.keywords.add(
                        session, [(s.id, weights[s.id]) for s in segments if not s.children]
                    )
                    self._index.rows.recount(session, {s.document_id for s in segments})
                    session.execute(
                        delete(PendingSegmentWriteRow).where(PendingSegmentWriteRow.segment_id.in_(touched))
                    )
            except Exception as exc:
                self._index.journal.restore(touched + stale)
                if isinstance(exc, ZhikuError):
                    raise
                raise StoreError(f"writing segments failed: {type(exc).__name__}: {exc}") from exc
            if stale:
                self._index.journal.restore(stale)  # rows gone: deletes their points, clears the journal

    def delete_segments(self, segment_ids: Sequence[str]) -> None:
        """Remove segments: rows and postings first (they stop being served), then the points."""
        with self._index.write_lock():
            children = sorted(self._index.points.children_ids(segment_ids))
            with self._index.sessions.begin() as session:
                documents = set(
                    session.scalars(
                        select(SegmentRow.document_id).where(SegmentRow.id.in_(list(segment_ids)))
                    )
                )
                self._index.rows.delete(session, SegmentRow.id.in_(list(segment_ids)))
                self._index.rows.recount(session, documents)
            self._index.points.discard(list(segment_ids) + children)

    def set_segments_enabled(self, segment_ids: Sequence[str], enabled: bool) -> None:
        """Flip segments' ``enabled`` in the row and both stores, journalled like an edit. A store
        flag is never stricter than its row (enabling: stores first; disabling: row first), so a
        failure between the writes never hides a served segment; the journal then makes the
        stores match the rows again, at once or at the next open."""
        ids = list(segment_ids)
        with self._index.write_lock():
            self._index.journal.record(ids)
            targets = self._flag_targets(ids, enabled)
            try:
                if enabled:
                    self._index.points.set_flags(targets, True)
                with self._index.sessions.begin() as session:
                    session.execute(update(SegmentRow).where(SegmentRow.id.in_(ids)).values(enabled=enabled))
            except Exception as exc:
                self._index.journal.restore(ids)
                if isinstance(exc, ZhikuError):
                    raise
                raise StoreError(f"changing segments failed: {type(exc).__name__}: {exc}") from exc
            try:
                if not enabled:
                    self._index.points.set_flags(targets, False)
                self._index.journal.clear(ids)
            except Exception:  # noqa: BLE001 - the row already stops serving it; the journal repairs
                log.warning("disabled segments keep enabled store points until repaired", exc_info=True)
                self._index.journal.restore(ids)

    def _flag_targets(self, segment_ids: Sequence[str], enabled: bool) -> list[str]:
        """The points whose store flag follows these segments' ``enabled``: a segment's own, or
        its children's, and its summary's (only the enabled ones when enabling: a disabled child
        stays off)."""
        if not self._index.catalog.has_children:
            return list(segment_ids)
        with self._index.sessions() as session:
            children = session.execute(
                select(
                    ChildChunkRow.id, ChildChunkRow.segment_id, ChildChunkRow.enabled, ChildChunkRow.kind
                ).where(ChildChunkRow.segment_id.in_(list(segment_ids)))
            ).all()
        parents = {parent for _, parent, _, kind in children if kind == CHILD_KIND}
        return [i for i in segment_ids if i not in parents] + [
            child for child, _, child_enabled, _ in children if child_enabled or not enabled
        ]
