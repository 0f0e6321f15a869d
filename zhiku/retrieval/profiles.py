"""Dataset profiles for routing: the description plus a deterministic sample of segments.

Segments are sampled whole: their vectors are already in the embedding cache when the router's
model is the dataset's, so a profile usually costs no embedding at all.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db import DatasetRow, DocumentRow, SegmentRow
from zhiku.core.documents import content_hash
from zhiku.retrieval.types import DatasetProfile

#: Segments sampled per dataset. Ordered by content hash, the sample is spread over the whole
#: dataset (a hash is uniform), is the same run after run, and shifts little when documents come.
#: Measured on four evaluation sets (two English biomedical, two Chinese), routing accuracy of
#: the embedding router rose with the sample: 32 → 92.5%, 64 → 93.6%, 128 → 94.6%, 256 → 95.8%.
DEFAULT_SAMPLE_SIZE = 256
#: Seconds a profile is used before its dataset is checked for changes.
DEFAULT_MAX_AGE_S = 10.0


class ProfileCache:
    """Profiles kept between queries: sampling sorts a dataset's segments by hash, too slow to
    repeat per query (≈ 30 ms for a few thousand segments on SQLite), and even checking whether
    a dataset changed costs a few milliseconds. So a profile is trusted for ``max_age`` seconds,
    then its version — segment count, latest completed document, description — is checked and
    the profile rebuilt if it changed. Routing on a sample a few seconds old is harmless."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        sample_size: int = DEFAULT_SAMPLE_SIZE,
        max_age: float = DEFAULT_MAX_AGE_S,
    ) -> None:
        self._sessions = sessions
        self._sample_size = sample_size
        self._max_age = max_age
        self._profiles: dict[str, tuple[DatasetProfile, float]] = {}
        self._lock = threading.Lock()

    def profiles(self, dataset_ids: Sequence[str]) -> list[DatasetProfile]:
        """Profiles of the given datasets, in the order given (unknown ids are skipped)."""
        now = time.monotonic()
        with self._lock:
            fresh = {
                dataset_id: entry[0]
                for dataset_id, entry in self._profiles.items()
                if now - entry[1] < self._max_age
            }
        stale = [dataset_id for dataset_id in dataset_ids if dataset_id not in fresh]
        if stale:
            fresh.update(self._refresh(stale, now))
        return [fresh[dataset_id] for dataset_id in dataset_ids if dataset_id in fresh]

    def _refresh(self, dataset_ids: Sequence[str], now: float) -> dict[str, DatasetProfile]:
        result = {}
        with self._sessions() as session:
            for dataset_id in dataset_ids:
                version = _version(session, dataset_id, self._sample_size)
                if version is None:
                    continue
                with self._lock:
                    entry = self._profiles.get(dataset_id)
                profile = entry[0] if entry is not None and entry[0].version == version else None
                if profile is None:
                    profile = _load(session, dataset_id, version, self._sample_size)
                with self._lock:
                    self._profiles[dataset_id] = (profile, now)
                result[dataset_id] = profile
        return result


def load_profiles(
    sessions: sessionmaker[Session], dataset_ids: Sequence[str], sample_size: int = DEFAULT_SAMPLE_SIZE
) -> list[DatasetProfile]:
    """Profiles of the given datasets, read now (see :class:`ProfileCache` to keep them)."""
    return ProfileCache(sessions, sample_size, max_age=0.0).profiles(dataset_ids)


def _version(session: Session, dataset_id: str, sample_size: int) -> str | None:
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


def _load(session: Session, dataset_id: str, version: str, sample_size: int) -> DatasetProfile:
    row = session.get(DatasetRow, dataset_id)
    assert row is not None  # checked by _version in the same session
    sample = session.scalars(
        select(SegmentRow.content)
        .join(DocumentRow, DocumentRow.id == SegmentRow.document_id)
        .where(
            SegmentRow.dataset_id == dataset_id,
            SegmentRow.enabled.is_(True),
            DocumentRow.enabled.is_(True),
        )
        .order_by(SegmentRow.hash)
        .limit(sample_size)
    ).all()
    return DatasetProfile(
        id=row.id, name=row.name, description=row.description or "", sample=tuple(sample), version=version
    )
