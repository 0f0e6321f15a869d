"""One store contract for both retrieval families, and its bookkeeping on a Qdrant collection.

A dense vector store and a BM25 full-text store keep the same thing — one record per segment,
with its document id and an enabled flag — and differ only in what a record holds and what a
search takes: :class:`SegmentStore` is generic in both, and ``vector/base.py`` and
``fulltext/base.py`` fix them (``VectorStore``: a vector; ``FullTextStore``: query tokens).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, Self, TypeVar

from zhiku.core.scope import DocumentScope
from zhiku.datasource.points.collection import ENABLED_KEY, DocumentPayloads, PointCollection, canonical_ids

RecordT = TypeVar("RecordT", contravariant=True)
QueryT = TypeVar("QueryT", contravariant=True)


class SegmentStore(Protocol[RecordT, QueryT]):
    """One dataset's segments in one retrieval channel, keyed by segment id (a UUID string).

    ``search`` returns ``(segment_id, score)`` best first and never returns disabled records, nor
    summaries (summary index) unless ``summaries``;
    ``ids``, ``count`` and ``disabled_ids`` include disabled records. Writes are visible to the
    next ``search`` of the same process and durable after ``flush``. ``optimize`` may take a long
    time (index building) and hold up writes meanwhile: run it after ingest jobs, off the request
    path. ``holds_gil``: a search keeps the GIL for all its time (see :class:`PointCollection`).
    ``keeps_metadata``: the points hold their documents' metadata values, which a scope's
    payload filter tests (see :meth:`set_metadata`).
    """

    @property
    def holds_gil(self) -> bool: ...

    @property
    def keeps_metadata(self) -> bool: ...

    def upsert(self, records: Sequence[RecordT]) -> None: ...

    def delete(self, ids: Sequence[str]) -> None: ...

    def delete_document(self, document_id: str) -> None: ...

    def set_enabled(self, ids: Sequence[str], enabled: bool) -> None: ...

    def set_metadata(self, payloads: DocumentPayloads) -> None:
        """Make the documents' metadata in their points' payload what ``payloads`` says. A store
        that filters by the list of documents only (PostgreSQL, memory) keeps nothing."""
        ...

    def search(
        self, query: QueryT, limit: int, scope: DocumentScope | None = None, /, *, summaries: bool = False
    ) -> list[tuple[str, float]]: ...

    def ids(self) -> set[str]: ...

    def disabled_ids(self) -> set[str]: ...

    def count(self) -> int: ...

    def flush(self) -> None: ...

    def optimize(self, payloads: DocumentPayloads | None = None) -> None:
        """Build the indexes; ``payloads`` as :meth:`set_metadata`, written as part of the build
        (a large change written into the open points would take them out of their graph)."""
        ...

    def drop(self) -> None: ...

    def close(self) -> None: ...


class PointStore:
    """The :class:`SegmentStore` bookkeeping on a :class:`PointCollection` (either backend).

    A family adds ``upsert`` and ``search``: how a record becomes a point and a query a vector.
    Ids are checked and made canonical here (:class:`InvalidInput` for a non-UUID); ``enabled``
    is stored as the payload integer 0/1, which every search filters on.
    """

    def __init__(self, collection: PointCollection) -> None:
        self._collection = collection

    #: a Qdrant point's payload holds its document's metadata values
    keeps_metadata = True

    @property
    def holds_gil(self) -> bool:
        return self._collection.holds_gil

    def delete(self, ids: Sequence[str]) -> None:
        self._collection.delete(canonical_ids(ids))

    def delete_document(self, document_id: str) -> None:
        self._collection.delete_document(document_id)

    def set_enabled(self, ids: Sequence[str], enabled: bool) -> None:
        self._collection.set_payload(canonical_ids(ids), {ENABLED_KEY: 1 if enabled else 0})

    def set_metadata(self, payloads: DocumentPayloads) -> None:
        self._collection.write_payloads(payloads)

    def ids(self) -> set[str]:
        return {point.id for point in self._collection.scroll(with_vector=False)}

    def disabled_ids(self) -> set[str]:
        """Records search leaves out, to compare with the rows' flags."""
        return {p.id for p in self._collection.scroll(with_vector=False) if not p.payload.get(ENABLED_KEY)}

    def count(self) -> int:
        return self._collection.count()

    def flush(self) -> None:
        self._collection.flush()

    def optimize(self, payloads: DocumentPayloads | None = None) -> None:
        """Let the engine build its index (embedded store: seconds to minutes; searches go on)."""
        self._collection.optimize(payloads)

    def drop(self) -> None:
        self._collection.drop()

    def close(self) -> None:
        self._collection.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
