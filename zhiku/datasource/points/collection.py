"""A Qdrant collection seen as points with one named vector, a document id and an enabled flag.

The dense vector stores and the sparse BM25 stores are both written against
:class:`PointCollection`, so the embedded qdrant-edge shard and a qdrant-client collection differ
only in how they talk to Qdrant (``edge.py``, ``qdrant.py``), and each serves both families.

``enabled`` is stored as the integer 0 or 1: boolean payload filters are broken in
qdrant-edge-py 0.9 (``MatchValue(True)`` matches nothing). A point of a segment with a section
lists that section's path and every path above it in ``sections`` (a keyword index), so a search
restricted to a section and what lies under it is one ``MatchValue``; points without a section
(and points written before sections existed) have no ``sections`` key.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from zhiku.core.errors import InvalidInput, StoreError
from zhiku.core.payload_filter import METADATA_PREFIX, PayloadKind
from zhiku.core.scope import DocumentScope
from zhiku.core.sections import ancestors

DOCUMENT_KEY = "document_id"
ENABLED_KEY = "enabled"
#: 1 on a segment's summary (summary index); searches leave summaries out unless asked for them
SUMMARY_KEY = "summary"
SECTIONS_KEY = "sections"
#: Distinct values a facet may return (payload lengths of one collection: far fewer).
MAX_FACET_VALUES = 1_000_000


@dataclass(frozen=True)
class SparseValues:
    """A sparse vector: parallel lists of dimension indices (uint32) and values."""

    indices: list[int]
    values: list[float]


VectorValue: TypeAlias = list[float] | SparseValues


@dataclass(frozen=True)
class VectorSpec:
    """The collection's one named vector: dense cosine of ``dim`` dimensions, or sparse with IDF."""

    name: str
    dim: int | None = None

    @property
    def sparse(self) -> bool:
        return self.dim is None


@dataclass(frozen=True)
class DocumentPayloads:
    """Documents' metadata values by payload key (``values_of``: document id → values), and every
    key of the dataset's fields with the index it needs: a key a document has no value for is
    removed from its points."""

    values_of: Mapping[str, Mapping[str, str | float]]
    keys: Mapping[str, PayloadKind]

    def stale(self, indexed: Iterable[str]) -> list[str]:
        """The indexed metadata keys of no field any more (a field deleted): their indexes go."""
        return [key for key in indexed if key.startswith(METADATA_PREFIX) and key not in self.keys]

    def updates(self) -> Iterator[tuple[str, dict[str, Any], list[str]]]:
        """``(document_id, payload to set, keys to delete)``, for documents with either."""
        for document_id, values in self.values_of.items():
            absent = [key for key in self.keys if key not in values]
            if values or absent:
                yield document_id, dict(values), absent


@dataclass
class PointData:
    """A point as written or read back. ``vector`` is None when it was not asked for."""

    id: str
    vector: VectorValue | None
    payload: dict[str, Any] = field(default_factory=dict)


class PointCollection(Protocol):
    """The operations both Qdrant backends provide; ids are canonical UUID strings.

    ``holds_gil``: a search runs in this process and keeps the GIL for all its time (qdrant-edge;
    qdrant-client's local mode), so two such searches in two threads run one after the other.
    """

    spec: VectorSpec
    holds_gil: bool
    #: admitted points up to which a filtered search left to the engine's own plan (no ``exact``,
    #: no ``hnsw_ef``) surely scans them rather than walking the graph: 0 where it may not
    plain_search_max: int

    def upsert(self, points: Sequence[PointData]) -> None: ...

    def delete(self, ids: Sequence[str]) -> None: ...

    def delete_document(self, document_id: str) -> None: ...

    def set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None: ...

    def write_payloads(self, payloads: DocumentPayloads) -> None:
        """Index the payloads' keys (where the engine indexes), and write each document's values
        into its points."""
        ...

    def search(
        self,
        query: VectorValue,
        limit: int,
        *,
        exact: bool = False,
        hnsw_ef: int | None = None,
        acorn: bool = False,
        scope: DocumentScope | None = None,
        summaries: bool = False,
    ) -> list[tuple[str, float]]:
        """Best ``limit`` points with ``enabled == 1`` (and of a document and section ``scope``
        admits; no summary unless ``summaries``), best first: every such point compared with
        ``exact``, else the graph walked with beam ``hnsw_ef`` (with ``acorn``, Qdrant's ACORN
        walk when the filter admits a small share of the points)."""
        ...

    def admitted(self, scope: DocumentScope | None, *, summaries: bool = False) -> int:
        """About how many points a search in ``scope`` may return: Qdrant's cardinality estimate
        from the payload indexes (no scan); 0 where every search compares every point anyway
        (qdrant-client's local mode), so nothing is counted."""
        ...

    def best_points(
        self, queries: Sequence[VectorValue], *, summaries: bool = False
    ) -> list[tuple[PointData, float] | None]:
        """Each query's best enabled point, with its vector and score (None where none scores),
        searched as one batch: what several one-point searches and a read of their vectors cost
        in one round."""
        ...

    def get_points(self, ids: Sequence[str], with_vector: bool) -> list[PointData]: ...

    def scroll(self, with_vector: bool, page_size: int = 1024) -> Iterator[PointData]:
        """Every point with its payload (and vector), in pages of ``page_size``."""
        ...

    def value_counts(self, key: str) -> dict[int, int]:
        """How many points hold each value of the integer payload ``key`` (indexed)."""
        ...

    def count(self) -> int: ...

    def flush(self) -> None: ...

    def optimize(self, payloads: DocumentPayloads | None = None) -> None:
        """Build the indexes, with ``payloads`` written first (into the copy the build works on,
        where the engine builds on one: see ``edge_build``)."""
        ...

    def drop(self) -> None: ...

    def close(self) -> None: ...


def canonical_ids(ids: Iterable[str]) -> list[str]:
    """Ids as canonical lower-case UUID strings (what Qdrant returns); InvalidInput otherwise."""
    out = []
    for value in ids:
        try:
            out.append(str(uuid.UUID(str(value))))
        except ValueError as exc:
            raise InvalidInput(f"point id must be a UUID string, got {value!r}") from exc
    return out


def base_payload(
    document_id: str,
    enabled: bool,
    *,
    summary: bool = False,
    section: str | None = None,
    metadata: Mapping[str, str | float] | None = None,
) -> dict[str, Any]:
    """The payload every point carries: a summary also ``summary: 1``, a point with a section its
    ``sections``; others lack those keys. ``metadata``: its document's values by payload key."""
    payload: dict[str, Any] = dict(metadata or {})
    payload.update({DOCUMENT_KEY: document_id, ENABLED_KEY: 1 if enabled else 0})
    if summary:
        payload[SUMMARY_KEY] = 1
    if section:
        payload[SECTIONS_KEY] = ancestors(section)
    return payload


def point_from_record(record: Any, spec: VectorSpec, with_vector: bool) -> PointData:
    """A point as read back from either engine (both return records with the same fields)."""
    vector: VectorValue | None = None
    if with_vector and record.vector:
        raw = record.vector[spec.name]
        vector = SparseValues(list(raw.indices), list(raw.values)) if spec.sparse else list(raw)
    return PointData(str(record.id), vector, dict(record.payload or {}))


def scroll_points(
    page: Callable[[Any], tuple[Sequence[Any], Any]], spec: VectorSpec, with_vector: bool
) -> Iterator[PointData]:
    """Every point of a collection, reading pages with ``page(offset) -> (records, next_offset)``
    from offset None until the engine returns no next offset."""
    offset: Any = None
    while True:
        records, offset = page(offset)
        for record in records:
            yield point_from_record(record, spec, with_vector)
        if offset is None:
            return


@contextmanager
def store_errors(action: str, where: str) -> Iterator[None]:
    """Turn an engine's exception (qdrant-edge raises bare ``Exception``) into StoreError
    naming the store (``where``) and what failed; StoreError passes through unchanged."""
    try:
        yield
    except StoreError:
        raise
    except Exception as exc:
        raise StoreError(f"{where}: {action} failed: {exc}") from exc
