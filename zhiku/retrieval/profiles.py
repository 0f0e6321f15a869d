"""Dataset profiles for routing: the description plus a deterministic sample of segments.

Segments are sampled whole: their vectors are already in the embedding cache when the router's
model is the dataset's, so a profile usually costs no embedding at all.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db import DatasetRow, DocumentRow, SegmentRow
from zhiku.core.documents import content_hash
from zhiku.retrieval.types import DatasetProfile

#: Segments sampled per dataset. Ordered by content hash, the sample is spread over the whole
#: dataset (a hash is uniform), is the same run after run, and shifts little when documents come.
DEFAULT_SAMPLE_SIZE = 64


def load_profiles(
    sessions: sessionmaker[Session], dataset_ids: Sequence[str], sample_size: int = DEFAULT_SAMPLE_SIZE
) -> list[DatasetProfile]:
    """Profiles of the given datasets, in the order given (unknown ids are skipped)."""
    profiles = []
    with sessions() as session:
        for dataset_id in dataset_ids:
            row = session.get(DatasetRow, dataset_id)
            if row is None:
                continue
            sample = session.scalars(
                select(SegmentRow.content)
                .join(DocumentRow, DocumentRow.id == SegmentRow.document_id)
                .where(
                    SegmentRow.dataset_id == dataset_id,
                    SegmentRow.enabled.is_(True),
                    DocumentRow.enabled.is_(True),
                    DocumentRow.status == "completed",
                )
                .order_by(SegmentRow.hash)
                .limit(sample_size)
            ).all()
            count = session.scalar(
                select(func.count()).select_from(SegmentRow).where(SegmentRow.dataset_id == dataset_id)
            )
            profiles.append(
                DatasetProfile(
                    id=row.id,
                    name=row.name,
                    description=row.description or "",
                    sample=tuple(sample),
                    version=f"{count}:{content_hash(row.description or '')[:16]}:{sample_size}",
                )
            )
    return profiles
