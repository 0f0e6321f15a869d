"""Fused search results turned into :class:`Hit` records, with their segment and document rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, bindparam, select
from sqlalchemy.orm import Session, aliased, sessionmaker

from zhiku.core.db import DatasetRow, DocumentRow, SegmentRow
from zhiku.core.db.models import CHILD_KIND, SUMMARY_KIND, ChildChunkRow
from zhiku.core.documents import ChildHit, Hit
from zhiku.fusion.types import FusedHit
from zhiku.knowledge_base.indexing.document_states import served_condition

_Summary = aliased(ChildChunkRow)

#: The served hits' columns, their document's name and their summary, in one round trip; plain
#: rows, no ORM objects; built once, so each search only binds the ids.
_HIT_ROWS = (
    select(
        SegmentRow.id,
        SegmentRow.content,
        SegmentRow.answer,
        SegmentRow.document_id,
        SegmentRow.position,
        SegmentRow.seg_metadata,
        DocumentRow.name,
        _Summary.content,
    )
    .join(DocumentRow, DocumentRow.id == SegmentRow.document_id)
    .outerjoin(
        _Summary,
        and_(_Summary.segment_id == SegmentRow.id, _Summary.kind == SUMMARY_KIND, _Summary.enabled.is_(True)),
    )
    .where(SegmentRow.id.in_(bindparam("ids", expanding=True)))
    .where(served_condition())
)
_CHILD_ROWS = select(ChildChunkRow.id, ChildChunkRow.content, ChildChunkRow.position).where(
    ChildChunkRow.id.in_(bindparam("ids", expanding=True)), ChildChunkRow.kind == CHILD_KIND
)


def hits_of(sessions: sessionmaker[Session], dataset_id: str, fused: Sequence[FusedHit]) -> list[Hit]:
    """Hits in the order fused, with content, answer, document name, metadata, the child chunks
    that matched and the segment's summary; a segment that stopped being served since it was
    found (deleted, disabled) is left out. A summary that matched is shown as the summary, not
    as a child chunk."""
    if not fused:
        return []
    child_ids = [child_id for hit in fused for child_id, _ in hit.children]
    with sessions() as session:
        rows = {row[0]: row for row in session.execute(_HIT_ROWS, {"ids": [hit.segment_id for hit in fused]})}
        children = (
            {row.id: (row.content, row.position) for row in session.execute(_CHILD_ROWS, {"ids": child_ids})}
            if child_ids
            else {}
        )
    hits = []
    for item in fused:
        if item.segment_id not in rows:
            continue
        segment_id, content, answer, document_id, position, metadata, document_name, summary = rows[
            item.segment_id
        ]
        hits.append(
            Hit(
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
            )
        )
    return hits


@dataclass(frozen=True)
class HitDetails:
    """What a hit's full segment record needs beyond the :class:`Hit` (the API's records)."""

    dataset_id: str
    dataset_name: str
    tokens: int
    hash: str
    keywords: list[str]
    enabled: bool
    hit_count: int
    created_at: datetime


#: The columns of a segment record a :class:`Hit` does not carry, with its dataset's name.
_DETAIL_ROWS = (
    select(
        SegmentRow.id,
        SegmentRow.dataset_id,
        DatasetRow.name,
        SegmentRow.tokens,
        SegmentRow.hash,
        SegmentRow.keywords,
        SegmentRow.enabled,
        SegmentRow.hit_count,
        SegmentRow.created_at,
    )
    .join(DatasetRow, DatasetRow.id == SegmentRow.dataset_id)
    .where(SegmentRow.id.in_(bindparam("ids", expanding=True)))
)


def hit_details(sessions: sessionmaker[Session], segment_ids: Sequence[str]) -> dict[str, HitDetails]:
    """The rest of each segment's record, for hits of any datasets, in one query (the search
    already read content, answer, document, position and metadata); missing ids are left out."""
    if not segment_ids:
        return {}
    with sessions() as session:
        return {
            row[0]: HitDetails(*row[1:5], list(row[5] or []), row[6], row[7] or 0, row[8])
            for row in session.execute(_DETAIL_ROWS, {"ids": list(dict.fromkeys(segment_ids))})
        }
