"""Fused search results turned into :class:`Hit` records, with their segment and document rows."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db import DocumentRow, SegmentRow
from zhiku.core.db.models import CHILD_KIND, SUMMARY_KIND, ChildChunkRow
from zhiku.core.documents import ChildHit, Hit
from zhiku.fusion.types import FusedHit
from zhiku.knowledge_base.document_states import served_condition


def hits_of(sessions: sessionmaker[Session], dataset_id: str, fused: Sequence[FusedHit]) -> list[Hit]:
    """Hits in the order fused, with content, answer, document name, metadata, the child chunks
    that matched and the segment's summary; a segment that stopped being served since it was
    found (deleted, disabled) is left out. A summary that matched is shown as the summary, not
    as a child chunk."""
    if not fused:
        return []
    with sessions() as session:
        rows = session.execute(
            select(SegmentRow, DocumentRow.name)
            .join(DocumentRow, DocumentRow.id == SegmentRow.document_id)
            .where(SegmentRow.id.in_([hit.segment_id for hit in fused]))
            .where(served_condition())
        ).all()
        child_ids = [child_id for hit in fused for child_id, _ in hit.children]
        children = (
            {
                row.id: (row.content, row.position)
                for row in session.execute(
                    select(ChildChunkRow.id, ChildChunkRow.content, ChildChunkRow.position).where(
                        ChildChunkRow.id.in_(child_ids), ChildChunkRow.kind == CHILD_KIND
                    )
                )
            }
            if child_ids
            else {}
        )
        summaries: dict[str, str] = {
            segment_id: content
            for segment_id, content in session.execute(
                select(ChildChunkRow.segment_id, ChildChunkRow.content).where(
                    ChildChunkRow.segment_id.in_([hit.segment_id for hit in fused]),
                    ChildChunkRow.kind == SUMMARY_KIND,
                    ChildChunkRow.enabled.is_(True),
                )
            )
        }
    by_id = {segment.id: (segment, document_name) for segment, document_name in rows}
    hits = []
    for item in fused:
        if item.segment_id not in by_id:
            continue
        segment, document_name = by_id[item.segment_id]
        hits.append(
            Hit(
                segment_id=segment.id,
                score=item.score,
                scores=dict(item.scores),
                ranks=dict(item.ranks),
                content=segment.content,
                answer=segment.answer,
                document_id=segment.document_id,
                document_name=document_name,
                dataset_id=dataset_id,
                position=segment.position,
                metadata=dict(segment.seg_metadata or {}),
                child_chunks=[
                    ChildHit(child_id, *children[child_id], score)
                    for child_id, score in item.children
                    if child_id in children
                ],
                summary=summaries.get(segment.id),
            )
        )
    return hits
