"""Dataset profiles for routing: the description plus a deterministic sample of segments.

Segments are sampled whole: their vectors are already in the embedding cache when the router's
model is the dataset's, so a profile usually costs no embedding at all. Where profiles come from
is a :class:`ProfileSource` (the knowledge base reads them from its database); this module only
keeps them between queries.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Protocol

from zhiku.retrieval.types import DatasetProfile

#: Segments sampled per dataset. Ordered by content hash, the sample is spread over the whole
#: dataset (a hash is uniform), is the same run after run, and shifts little when documents come.
#: Measured on four evaluation sets (two English biomedical, two Chinese), routing accuracy of
#: the embedding router rose with the sample: 32 → 92.5%, 64 → 93.6%, 128 → 94.6%, 256 → 95.8%.
DEFAULT_SAMPLE_SIZE = 256
#: Seconds a profile is used before its dataset is checked for changes.
DEFAULT_MAX_AGE_S = 10.0


class ProfileSource(Protocol):
    """Reads datasets' profiles: ``version`` is a cheap fingerprint of what a profile depends on
    (None: no such dataset); ``load`` builds the profile, its sample ordered by content hash."""

    def version(self, dataset_id: str, sample_size: int) -> str | None: ...

    def load(self, dataset_id: str, version: str, sample_size: int) -> DatasetProfile | None: ...


class ProfileCache:
    """Profiles kept between queries: sampling sorts a dataset's segments by hash, too slow to
    repeat per query (≈ 30 ms for a few thousand segments on SQLite), and even checking whether
    a dataset changed costs a few milliseconds. So a profile is trusted for ``max_age`` seconds,
    then its version — segment count, latest completed document, description — is checked and
    the profile rebuilt if it changed. Routing on a sample a few seconds old is harmless."""

    def __init__(
        self,
        source: ProfileSource,
        sample_size: int = DEFAULT_SAMPLE_SIZE,
        max_age: float = DEFAULT_MAX_AGE_S,
    ) -> None:
        self._source = source
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
        for dataset_id in dataset_ids:
            version = self._source.version(dataset_id, self._sample_size)
            if version is None:
                continue
            with self._lock:
                entry = self._profiles.get(dataset_id)
            profile = entry[0] if entry is not None and entry[0].version == version else None
            if profile is None:
                profile = self._source.load(dataset_id, version, self._sample_size)
                if profile is None:
                    continue
            with self._lock:
                self._profiles[dataset_id] = (profile, now)
            result[dataset_id] = profile
        return result


def load_profiles(
    source: ProfileSource, dataset_ids: Sequence[str], sample_size: int = DEFAULT_SAMPLE_SIZE
) -> list[DatasetProfile]:
    """Profiles of the given datasets, read now (see :class:`ProfileCache` to keep them)."""
    return ProfileCache(source, sample_size, max_age=0.0).profiles(dataset_ids)
