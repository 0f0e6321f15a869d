"""One dataset's served segments as its search reads them: live checks, parents, and hit records.

Every read here is on a search's path, so each is one statement, looked up by primary key only: a
``dataset_id`` condition lets some planners scan the dataset's index instead (a hundred times
slower at 100k segments on SQLite); the dataset is checked on the rows read. The statements are
built once, so a search only binds the ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Engine, and_, bindparam, select
from sqlalchemy.orm import Session, aliased, sessionmaker

from zhiku.core.db import DatasetRow, DocumentRow, SegmentRow
from zhiku.core.db.models import CHILD_KIND, SUMMARY_KIND, ChildChunkRow
from zhiku.core.documents import ChildHit, Hit
from zhiku.fusion.types import FusedHit
from zhiku.knowledge_base.indexing.document_states import served_condition

_Summary = aliased(ChildChunkRow)

#: The served ids among some candidates (what every search may ask). The covering indexes
#: ``ix_segments_served`` and ``ix_documents_served`` answer it without reading the rows.
SERVED_IDS = (
    select(SegmentRow.id, SegmentRow.dataset_id)
    .join(DocumentRow, DocumentRow.id == SegmentRow.document_id)
    .where(SegmentRow.id.in_(bindparam("ids", expanding=True)))
    .where(served_condition())
)

#: The served ids among some candidates with their texts (what a rerank model reads).
_SERVED_TEXTS = (
    select(SegmentRow.id, SegmentRow.content, SegmentRow.dataset_id)
    .join(DocumentRow, DocumentRow.id == SegmentRow.document_id)
    .where(SegmentRow.id.in_(bindparam("ids", expanding=True)))
    .where(served_condition())
)

#: The served hits' records: the segment's columns, its document's and dataset's names and its
#: summary, in one round trip; plain rows, no ORM objects. Being served is its live check.
_HIT_ROWS = (
    select(
        SegmentRow.id,
        SegmentRow.dataset_id,
        SegmentRow.content,
        SegmentRow.answer,
        SegmentRow.document_id,
        SegmentRow.position,
        SegmentRow.seg_metadata,
        SegmentRow.tokens,
        SegmentRow.hash,
        SegmentRow.keywords,
        SegmentRow.hit_count,
        SegmentRow.created_at,
        DocumentRow.name,
        DatasetRow.name,
        _Summary.content,
    )
    .join(DocumentRow, DocumentRow.id == SegmentRow.document_id)
    .join(DatasetRow, DatasetRow.id == SegmentRow.dataset_id)
    .outerjoin(
        _Summary,
        and_(_Summary.segment_id == SegmentRow.id, _Summary.kind == SUMMARY_KIND, _Summary.enabled.is_(True)),
    )
    .where(SegmentRow.id.in_(bindparam("ids", expanding=True)))
    .where(served_condition())
)

_PARENTS = select(ChildChunkRow.id, ChildChunkRow.segment_id, ChildChunkRow.dataset_id).where(
    ChildChunkRow.id.in_(bindparam("ids", expanding=True)), ChildChunkRow.enabled.is_(True)
)

_CHILD_ROWS = select(ChildChunkRow.id, ChildChunkRow.content, ChildChunkRow.position).where(
    ChildChunkRow.id.in_(bindparam("ids", expanding=True)), ChildChunkRow.kind == CHILD_KIND
)


class ServedSegments:
    """The :class:`~zhiku.retrieval.catalog.SegmentCatalog` of one dataset, over its rows.

    ``has_children`` is read once and, once true, stays true: the write path sets it when it
    adds the dataset's first child chunk or summary.
    """

    def __init__(self, sessions: sessionmaker[Session], engine: Engine, dataset_id: str) -> None:
        self._sessions = sessions
        self._engine = engine
        self.dataset_id = dataset_id
        with sessions() as session:
            first_child = select(ChildChunkRow.id).where(ChildChunkRow.dataset_id == dataset_id).limit(1)
            self.has_children = session.scalar(first_child) is not None

    def parents_of(self, ids: Sequence[str]) -> dict[str, str]:
        """``{child_id: parent segment id}`` for the enabled child chunks among these point ids
        (whether the parent is served is :meth:`live_ids`' answer)."""
        if not ids or not self.has_children:
            return {}
        with self._engine.connect() as connection:
            rows = connection.execute(_PARENTS, {"ids": list(ids)}).all()
        return {child: parent for child, parent, dataset_id in rows if dataset_id == self.dataset_id}

    def live_texts(self, ids: Sequence[str]) -> dict[str, str]:
        """Contents of the ids that are served (see :func:`served_condition`)."""
        if not ids:
            return {}
        with self._engine.connect() as connection:
            rows = connection.execute(_SERVED_TEXTS, {"ids": list(ids)}).all()
        return {
            segment_id: content for segment_id, content, dataset_id in rows if dataset_id == self.dataset_id
        }

    def live_ids(self, ids: Sequence[str]) -> set[str]:
        """The served ids among these (:meth:`live_texts` without the texts)."""
        if not ids:
            return set()
        with self._engine.connect() as connection:
            rows = connection.execute(SERVED_IDS, {"ids": list(ids)}).all()  # one fetch, not one per row
        return {segment_id for segment_id, dataset_id in rows if dataset_id == self.dataset_id}

    def hits(self, fused: Sequence[FusedHit]) -> list[Hit]:
        """Hits in the order fused, with their segment's whole record, document and dataset name,
        the child chunks that matched and the segment's summary; a segment not served (deleted,
        disabled since it was found) is left out. A summary that matched is shown as the summary,
        not as a child chunk. One statement, and one more for the children of a parent-child
        dataset's hits."""
        if not fused:
            return []
        child_ids = [child_id for hit in fused for child_id, _ in hit.children]
        with self._engine.connect() as connection:
            rows = {
                row[0]: row
                for row in connection.execute(_HIT_ROWS, {"ids": [hit.segment_id for hit in fused]})
                if row[1] == self.dataset_id
            }
            children = (
                {
                    row.id: (row.content, row.position)
                    for row in connection.execute(_CHILD_ROWS, {"ids": child_ids})
                }
                if child_ids
                else {}
            )
        return [_hit(item, rows[item.segment_id], children) for item in fused if item.segment_id in rows]


def _hit(item: FusedHit, row: Sequence[Any], children: dict[str, tuple[str, int]]) -> Hit:
    """One hit from its fusion and its row of :data:`_HIT_ROWS`."""
    (
        segment_id,
        dataset_id,
        content,
        answer,
        document_id,
        position,
        metadata,
        tokens,
        digest,
        keywords,
        hit_count,
        created_at,
        document_name,
        dataset_name,
        summary,
    ) = row
    return Hit(
        segment_id=segment_id,
        score=item.score,
        scores=dict(item.scores),
        ranks=dict(item.ranks),
        content=content,
        answer=answer,
        document_id=document_id,
        document_name=document_name,
        dataset_id=dataset_id,
        position=position,
        metadata=dict(metadata or {}),
        child_chunks=[
            ChildHit(child_id, *children[child_id], score)
            for child_id, score in item.children
            if child_id in children
        ],
        summary=summary,
        fusion_score=item.fusion,
        evidence=dict(item.evidence),
        dataset_name=dataset_name,
        tokens=tokens,
        hash=digest,
        keywords=list(keywords or []),
        hit_count=hit_count or 0,
        created_at=created_at,
    )
