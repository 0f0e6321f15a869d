"""The contract every vector store backend fulfils (qdrant-edge embedded, qdrant-client)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from zhiku.core.scope import DocumentScope


@dataclass
class VectorRecord:
    """One segment's embedding. ``id`` is the segment id (a UUID string)."""

    id: str
    vector: np.ndarray
    document_id: str
    enabled: bool = True


class VectorStore(Protocol):
    """A collection of one dataset's segment embeddings, compared by cosine similarity.

    ``search`` returns ``(segment_id, cosine)`` best first and never returns disabled records.
    Writes are visible to the next ``search`` of the same process.
    """

    dim: int

    def upsert(self, records: Sequence[VectorRecord]) -> None: ...

    def delete(self, ids: Sequence[str]) -> None: ...

    def delete_document(self, document_id: str) -> None: ...

    def set_enabled(self, ids: Sequence[str], enabled: bool) -> None: ...

    def search(
        self, vector: np.ndarray, limit: int, scope: DocumentScope | None = None
    ) -> list[tuple[str, float]]: ...

    def ids(self) -> set[str]: ...

    def disabled_ids(self) -> set[str]: ...

    def count(self) -> int: ...

    def flush(self) -> None: ...

    def optimize(self) -> None: ...

    def drop(self) -> None: ...

    def close(self) -> None: ...
