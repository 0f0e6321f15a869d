"""The dense family of the store contract (qdrant-edge embedded, qdrant-client)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from zhiku.datasource.points.base import SegmentStore


@dataclass
class VectorRecord:
    """One segment's embedding. ``id`` is the segment id (a UUID string); ``section`` its heading
    path, if it has one."""

    id: str
    vector: np.ndarray
    document_id: str
    enabled: bool = True
    #: a segment's summary (summary index): searched only when summaries are asked for
    summary: bool = False
    section: str | None = None
    #: its document's metadata values by payload key (see :mod:`zhiku.core.payload_filter`)
    metadata: Mapping[str, str | float] = field(default_factory=dict)


class VectorStore(SegmentStore[VectorRecord, np.ndarray], Protocol):
    """A collection of one dataset's segment embeddings, compared by cosine similarity.

    ``search(vector, limit)`` returns ``(segment_id, cosine)`` best first; the rest of the
    contract is :class:`~zhiku.datasource.points.base.SegmentStore`'s.
    """

    dim: int

    def vectors(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors of these ids (absent ones left out), as the store keeps them (a
        Qdrant collection keeps them normalised): what a copy to another store reads."""
        ...
