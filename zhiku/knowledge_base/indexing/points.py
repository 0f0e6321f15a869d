"""The store points of a dataset's segments, and the writes every change makes to them.

Points: a segment is a point of the stores unless it has child chunks (parent-child index);
then its children are, each with its own row in ``child_chunks`` and the parent's document id in
the stores' payload. A segment's summary (summary index) is one more point beside those, with a
``child_chunks`` row of kind ``summary`` and a ``summary`` flag in the stores' payload, so a
search leaves it out unless asked.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import select

from zhiku.core.db.models import CHILD_KIND, SUMMARY_KIND, ChildChunkRow, SegmentRow
from zhiku.core.documents import ChildChunk, Segment
from zhiku.core.sections import section_of
from zhiku.datasource.fulltext.base import TextRecord
from zhiku.datasource.points.base import SegmentStore
from zhiku.datasource.vector.base import VectorRecord
from zhiku.knowledge_base.metadata_points import metadata_payloads
from zhiku.knowledge_base.records import child_of, segment_of

if TYPE_CHECKING:
    from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex

log = logging.getLogger(__name__)

_UPSERT_BATCH = 512


@dataclass(frozen=True)
class Point:
    """What one store point indexes: a segment without children, or a child chunk or summary
    of the segment ``parent``; ``section`` is its segment's heading path (a child's or summary's
    is its segment's)."""

    id: str
    document_id: str
    content: str
    enabled: bool
    parent: str | None = None
    summary: bool = False
    section: str | None = None


def points_of(segments: Sequence[Segment]) -> list[Point]:
    """The points of these segments: each one's children if it has any, else itself, and its
    summary if it has one. A child's (or summary's) store flag is on only if it and its segment
    are enabled (never stricter than the rows)."""
    points: list[Point] = []
    for s in segments:
        section = section_of(s.metadata)
        if s.children:
            points.extend(
                Point(c.id, s.document_id, c.content, c.enabled and s.enabled, s.id, section=section)
                for c in s.children
            )
        else:
            points.append(Point(s.id, s.document_id, s.content, s.enabled, section=section))
        if s.summary is not None:
            summary = s.summary
            points.append(
                Point(
                    summary.id,
                    s.document_id,
                    summary.content,
                    summary.enabled and s.enabled,
                    s.id,
                    summary=True,
                    section=section,
                )
            )
    return points


def points_of_segment(segment: Segment) -> list[Segment | ChildChunk]:
    """What carries the keywords of a segment's points: its children or itself, and its summary."""
    items: list[Segment | ChildChunk] = list(segment.children) or [segment]
    if segment.summary is not None:
        items.append(segment.summary)
    return items


class StorePoints:
    """Writes to the vector and full-text stores of one dataset, point by point."""

    def __init__(self, index: DatasetIndex) -> None:
        self._index = index

    def upsert(
        self, segments: Sequence[Point], vectors: np.ndarray, token_lists: Sequence[Sequence[str]]
    ) -> None:
        """Write these points (their vectors and tokens in the same order) to both stores, in
        batches, with their documents' metadata values as the rows have them now (the caller
        holds the write lock, which a change of values waits for before it writes them; see
        ``metadata_points``); not flushed: the caller flushes before any row may point at them."""
        for start in range(0, len(segments), _UPSERT_BATCH):
            part = segments[start : start + _UPSERT_BATCH]
            metadata = self.metadata_of(part)
            self._index.vector.upsert(
                [
                    VectorRecord(
                        id=s.id,
                        vector=vectors[start + i],
                        document_id=s.document_id,
                        enabled=s.enabled,
                        summary=s.summary,
                        section=s.section,
                        metadata=metadata.get(s.document_id, {}),
                    )
                    for i, s in enumerate(part)
                ]
            )
            tokens = token_lists[start : start + len(part)]
            self._index.fulltext.upsert(self.text_records(part, tokens, metadata))
        self._index.changes.add(len(segments))

    def metadata_of(self, points: Sequence[Point]) -> dict[str, dict[str, str | float]]:
        """The payload of the metadata values of these points' documents, by document id."""
        with self._index.sessions() as session:
            return metadata_payloads(session, self._index.dataset_id, {p.document_id for p in points})

    def text_records(
        self,
        points: Sequence[Point],
        token_lists: Sequence[Sequence[str]],
        metadata: dict[str, dict[str, str | float]] | None = None,
    ) -> list[TextRecord]:
        """What the full-text store holds of these points, tokenized by the dataset's tokenizer
        (``metadata``: :meth:`metadata_of` them, read if not given)."""
        if metadata is None:
            metadata = self.metadata_of(points)
        return [
            TextRecord(
                id=p.id,
                tokens=self._index.tokenizer.terms(p.content, tokens),
                document_id=p.document_id,
                enabled=p.enabled,
                summary=p.summary,
                section=p.section,
                metadata=metadata.get(p.document_id, {}),
            )
            for p, tokens in zip(points, token_lists, strict=True)
        ]

    def retokenize_fulltext(self, segment_ids: Sequence[str]) -> int:
        """Write the full-text records of these segments' points again from their rows, with the
        dataset's tokenizer as it is now (after a user-dictionary change; the vectors stay).
        Call under the write lock. Returns how many records were written."""
        points = self.current(segment_ids)
        if points:
            token_lists = [self._index.tokenizer.tokenize(p.content) for p in points]
            self._index.fulltext.upsert(self.text_records(points, token_lists))
            self._index.fulltext.flush()
            self._index.changes.add(len(points))
        return len(points)

    def current(self, ids: Sequence[str]) -> list[Point]:
        """The points the rows say these ids have now: a segment's own (its children's, if it has
        any) and those of the child chunks among the ids; ids with no row have none."""
        with self._index.sessions() as session:
            segments = {
                row.id: segment_of(row)
                for row in session.scalars(select(SegmentRow).where(SegmentRow.id.in_(list(ids))))
            }
            children = session.scalars(
                select(ChildChunkRow).where(
                    ChildChunkRow.id.in_(list(ids)) | ChildChunkRow.segment_id.in_(list(segments))
                )
            ).all()
            parent_ids = {row.segment_id for row in children} - set(segments)
            for row in session.scalars(select(SegmentRow).where(SegmentRow.id.in_(list(parent_ids)))):
                segments[row.id] = segment_of(row)
        for child in children:
            if child.segment_id not in segments:
                continue
            if child.kind == SUMMARY_KIND:
                segments[child.segment_id].summary = child_of(child)
            else:
                segments[child.segment_id].children.append(child_of(child))
        wanted = set(ids)
        return [p for p in points_of(list(segments.values())) if p.id in wanted or p.parent in wanted]

    def discard(self, ids: Sequence[str]) -> None:
        """Delete points no row uses (any more); see :meth:`remove`."""
        if ids:
            self.remove(lambda store: store.delete(ids), f"{len(ids)} unused points")
            self._index.changes.add(len(ids))

    def remove(self, remove: Callable[[SegmentStore[Any, Any]], None], what: str) -> None:
        """Apply ``remove`` to the vector and full-text stores, then flush both. Best effort:
        points without a row are never served, and a failure leaves them to the sweep at the
        next open."""
        try:
            for store in (self._index.vector, self._index.fulltext):
                remove(store)
            self._index.vector.flush()
            self._index.fulltext.flush()
        except Exception:  # noqa: BLE001 - invisible leftovers; the next open sweeps them
            log.warning("could not delete %s; swept at the next open", what, exc_info=True)

    def set_flags(self, segment_ids: Sequence[str], enabled: bool) -> None:
        """Set these points' ``enabled`` flag in both stores, flushed."""
        self._index.vector.set_enabled(segment_ids, enabled)
        self._index.fulltext.set_enabled(segment_ids, enabled)
        self._index.vector.flush()
        self._index.fulltext.flush()

    def ids_by_document(self, document_ids: Sequence[str]) -> dict[str, set[str]]:
        """The ids of the points these documents' rows index now."""
        found: dict[str, set[str]] = {}
        with self._index.sessions() as session:
            parents: set[str] = set()
            if self._index.catalog.has_children:
                for child_id, parent_id, document_id, kind in session.execute(
                    select(
                        ChildChunkRow.id,
                        ChildChunkRow.segment_id,
                        ChildChunkRow.document_id,
                        ChildChunkRow.kind,
                    ).where(ChildChunkRow.document_id.in_(document_ids))
                ):
                    found.setdefault(document_id, set()).add(child_id)
                    if kind == CHILD_KIND:  # a summary's segment stays a point itself
                        parents.add(parent_id)
            for segment_id, document_id in session.execute(
                select(SegmentRow.id, SegmentRow.document_id).where(SegmentRow.document_id.in_(document_ids))
            ):
                if segment_id not in parents:
                    found.setdefault(document_id, set()).add(segment_id)
        return found

    def children_ids(self, segment_ids: Sequence[str]) -> set[str]:
        """The ids of these segments' child chunks."""
        if not self._index.catalog.has_children or not segment_ids:
            return set()
        with self._index.sessions() as session:
            return set(
                session.scalars(
                    select(ChildChunkRow.id).where(ChildChunkRow.segment_id.in_(list(segment_ids)))
                )
            )
