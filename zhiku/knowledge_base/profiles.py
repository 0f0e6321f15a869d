"""Routing profiles read from the database: a dataset's description and a sample of its served
segments (see :mod:`zhiku.retrieval.profiles`, which keeps them between queries)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db import DatasetRow, DocumentRow, SegmentRow
from zhiku.core.documents import content_hash
from zhiku.knowledge_base.indexing.document_states import served_condition
from zhiku.retrieval.types import DatasetProfile


class DatabaseProfiles:
    """The :class:`~zhiku.retrieval.profiles.ProfileSource` of a knowledge base's database."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def version(self, dataset_id: str, sample_size: int) -> str | None:
        with self._sessions() as session:
            row = session.get(DatasetRow, dataset_id)
            if row is None:
                return None
            count, latest = session.execute(
                select(func.count(DocumentRow.id), func.max(DocumentRow.completed_at)).where(
                    DocumentRow.dataset_id == dataset_id
                )
            ).one()
            segments = session.scalar(
                select(func.count()).select_from(SegmentRow).where(SegmentRow.dataset_id == dataset_id)
            )
        return f"{segments}:{count}:{latest}:{content_hash(row.description or '')[:16]}:{sample_size}"

    def load(self, dataset_id: str, version: str, sample_size: int) -> DatasetProfile | None:
        with self._sessions() as session:
            row = session.get(DatasetRow, dataset_id)
            if row is None:
                return None
            sample = session.scalars(
                select(SegmentRow.content)
                .join(DocumentRow, DocumentRow.id == SegmentRow.document_id)
                .where(SegmentRow.dataset_id == dataset_id, served_condition())
                .order_by(SegmentRow.hash)
                .limit(sample_size)
            ).all()
            return DatasetProfile(
                id=row.id,
                name=row.name,
                description=row.description or "",
                sample=tuple(sample),
                version=version,
            )
