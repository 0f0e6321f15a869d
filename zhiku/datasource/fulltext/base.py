"""The contract every BM25 full-text backend fulfils (Qdrant sparse vectors, rank_bm25)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from zhiku.core.scope import DocumentScope


@dataclass
class TextRecord:
    """One segment's tokens (already tokenized by the dataset's tokenizer)."""

    id: str
    tokens: list[str]
    document_id: str
    enabled: bool = True


class FullTextStore(Protocol):
    """BM25 over one dataset's segments.

    ``search`` takes the query's tokens (repeats count) and returns ``(segment_id, bm25)``
    best first, never disabled records, only records sharing at least one token.
    """

    def upsert(self, records: Sequence[TextRecord]) -> None: ...

    def delete(self, ids: Sequence[str]) -> None: ...

    def delete_document(self, document_id: str) -> None: ...

    def set_enabled(self, ids: Sequence[str], enabled: bool) -> None: ...

    def search(
        self, query_tokens: Sequence[str], limit: int, scope: DocumentScope | None = None
    ) -> list[tuple[str, float]]: ...

    def ids(self) -> set[str]: ...

    def disabled_ids(self) -> set[str]: ...

    def count(self) -> int: ...

    def flush(self) -> None: ...

    def optimize(self) -> None: ...

    def drop(self) -> None: ...

    def close(self) -> None: ...
