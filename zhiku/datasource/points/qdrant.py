"""A :class:`PointCollection` on one collection reached through qdrant-client.

``location`` is a server URL (``http://host:6333``), ``":memory:"`` (a private in-process instance,
for tests and throw-away data) or a directory (qdrant-client's local mode, pure Python: fine for
small data, slow past ~20k points). A local directory is locked by the client that opens it, so
every store of this process that uses the same directory shares one client; another process
opening it gets :class:`StoreError`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from qdrant_client import QdrantClient, models

from zhiku.core.errors import StoreError
from zhiku.core.payload_filter import FieldTest, PayloadFilter
from zhiku.core.scope import DocumentScope
from zhiku.datasource.points.collection import (
    DOCUMENT_KEY,
    ENABLED_KEY,
    MAX_FACET_VALUES,
    SECTIONS_KEY,
    SUMMARY_KEY,
    DocumentPayloads,
    PointData,
    SparseValues,
    VectorSpec,
    VectorValue,
    point_from_record,
    scroll_points,
    store_errors,
)
from zhiku.datasource.points.server import QdrantServer

MEMORY = ":memory:"


def is_url(location: str) -> bool:
    return "://" in location


_SCHEMA_OF = {"keyword": models.PayloadSchemaType.KEYWORD, "float": models.PayloadSchemaType.FLOAT}


class _LocalClients:
    """One shared, reference-counted client per local directory (its lock admits one client)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._clients: dict[str, tuple[QdrantClient, int]] = {}

    def acquire(self, path: str) -> QdrantClient:
        key = str(Path(path).resolve())
        with self._lock:
            client, users = self._clients.get(key, (None, 0))
            if client is None:
                try:
                    client = QdrantClient(path=key, force_disable_check_same_thread=True)
                except RuntimeError as exc:
                    raise StoreError(
                        f"the qdrant directory {key} is already open in another process: {exc}"
                    ) from exc
            self._clients[key] = (client, users + 1)
            return client

    def release(self, path: str) -> None:
        key = str(Path(path).resolve())
        with self._lock:
            client, users = self._clients[key]
            if users > 1:
                self._clients[key] = (client, users - 1)
            else:
                del self._clients[key]
                client.close()


_local_clients = _LocalClients()


class ClientCollection:
    """One qdrant-client collection holding one named vector, created on first use.

    In local mode (``":memory:"`` or a directory) calls are serialised by a lock, since the
    local engine is not thread-safe; against a server they run concurrently.
    """

    def __init__(
        self,
        location: str,
        collection: str,
        spec: VectorSpec,
        integer_indexes: Sequence[str] = (),
        server: QdrantServer | None = None,
    ) -> None:
        self.location = location
        self._server = server or QdrantServer()
        self.collection = collection
        self.spec = spec
        self._where = f"qdrant collection {collection!r}"
        self.local = not is_url(location)
        #: local mode searches in Python; a server's search waits on the network, without the GIL
        self.holds_gil = self.local
        self.plain_search_max = 0  # the server's full-scan bound is its own
        self._lock: threading.RLock | None = threading.RLock() if self.local else None
        if location == MEMORY:
            self._client: QdrantClient | None = QdrantClient(
                location=MEMORY, force_disable_check_same_thread=True
            )
        elif self.local:
            self._client = _local_clients.acquire(location)
        else:
            with store_errors("connect", self._where):
                self._client = self._server.client(location)
        with self._guard("create collection"):
            self._create(integer_indexes)

    def _create(self, integer_indexes: Sequence[str]) -> None:
        client = self._require()
        if client.collection_exists(self.collection):
            if not self.local:  # a collection made before sections, or before summaries were indexed
                present = client.get_collection(self.collection).payload_schema
                later = {
                    SECTIONS_KEY: models.PayloadSchemaType.KEYWORD,
                    SUMMARY_KEY: models.PayloadSchemaType.INTEGER,
                }
                for key, schema in later.items():
                    if key not in present:
                        client.create_payload_index(self.collection, key, schema)
            return
        # a cluster's layout for new collections; local mode has no shards
        shards = None if self.local else self._server.shard_number
        copies = None if self.local else self._server.replication_factor
        if self.spec.sparse:
            client.create_collection(
                self.collection,
                vectors_config={},
                sparse_vectors_config={
                    self.spec.name: models.SparseVectorParams(modifier=models.Modifier.IDF)
                },
                shard_number=shards,
                replication_factor=copies,
            )
        else:
            assert self.spec.dim is not None
            client.create_collection(
                self.collection,
                vectors_config={
                    self.spec.name: models.VectorParams(size=self.spec.dim, distance=models.Distance.COSINE)
                },
                shard_number=shards,
                replication_factor=copies,
            )
        if not self.local:  # local mode ignores payload indexes (and warns)
            for keyword in (DOCUMENT_KEY, SECTIONS_KEY):
                client.create_payload_index(self.collection, keyword, models.PayloadSchemaType.KEYWORD)
            # summary: every search excludes summaries, and without an index Qdrant reads each
            # candidate's payload to do so (at 100k points, 2.7 against 0.8 ms per dense search)
            for key in (ENABLED_KEY, SUMMARY_KEY, *integer_indexes):
                client.create_payload_index(self.collection, key, models.PayloadSchemaType.INTEGER)

    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        with store_errors(action, self._where):
            if self._lock is None:
                yield
            else:
                with self._lock:
                    yield

    def _require(self) -> QdrantClient:
        if self._client is None:
            raise StoreError(f"the store on collection {self.collection!r} is closed")
        return self._client

    def _vector(self, value: VectorValue) -> Any:
        if isinstance(value, SparseValues):
            return models.SparseVector(indices=value.indices, values=value.values)
        return value

    # -- writes ------------------------------------------------------------------------------

    def upsert(self, points: Sequence[PointData]) -> None:
        batch = [
            models.PointStruct(id=p.id, vector={self.spec.name: self._vector(p.vector)}, payload=p.payload)
            for p in points
            if p.vector is not None
        ]
        if batch:
            with self._guard("upsert"):
                self._require().upsert(self.collection, batch, wait=True)

    def delete(self, ids: Sequence[str]) -> None:
        if ids:
            with self._guard("delete"):
                self._require().delete(self.collection, models.PointIdsList(points=list(ids)), wait=True)

    def delete_document(self, document_id: str) -> None:
        selector = models.FilterSelector(filter=_match(DOCUMENT_KEY, document_id))
        with self._guard("delete document"):
            self._require().delete(self.collection, selector, wait=True)

    def set_payload(self, ids: Sequence[str], payload: dict[str, Any]) -> None:
        if ids:
            selector = models.FilterSelector(
                filter=models.Filter(must=[models.HasIdCondition(has_id=list(ids))])
            )
            with self._guard("set payload"):
                self._require().set_payload(self.collection, payload, selector, wait=True)

    def write_payloads(self, payloads: DocumentPayloads) -> None:
        with self._guard("set payload"):
            client = self._require()
            if not self.local:  # local mode ignores payload indexes (and warns)
                present = client.get_collection(self.collection).payload_schema
                for key in payloads.stale(present):
                    client.delete_payload_index(self.collection, key)
                for key, kind in payloads.keys.items():
                    if key not in present:
                        client.create_payload_index(self.collection, key, _SCHEMA_OF[kind])
            for document_id, payload, remove in payloads.updates():
                selector = models.FilterSelector(filter=_match(DOCUMENT_KEY, document_id))
                if payload:
                    client.set_payload(self.collection, payload, selector, wait=True)
                if remove:
                    client.delete_payload(self.collection, remove, selector, wait=True)

    # -- reads -------------------------------------------------------------------------------

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
        params = None
        if not self.local:  # local mode compares every point
            walk = models.AcornSearchParams(enable=True) if acorn else None
            params = models.SearchParams(exact=exact, hnsw_ef=hnsw_ef, acorn=walk)
        with self._guard("search"):
            response = self._require().query_points(
                self.collection,
                query=self._vector(query),
                using=self.spec.name,
                query_filter=_search_filter(scope, summaries),
                search_params=params,
                limit=limit,
                with_payload=False,
            )
        return [(str(p.id), float(p.score)) for p in response.points]

    def best_points(
        self, queries: Sequence[VectorValue], *, summaries: bool = False
    ) -> list[tuple[PointData, float] | None]:
        if not queries:
            return []
        requests = [
            models.QueryRequest(
                query=self._vector(query),
                using=self.spec.name,
                filter=_search_filter(None, summaries),
                limit=1,
                with_payload=True,
                with_vector=[self.spec.name],
            )
            for query in queries
        ]
        with self._guard("search"):
            found = self._require().query_batch_points(self.collection, requests)
        return [
            (point_from_record(best.points[0], self.spec, True), float(best.points[0].score))
            if best.points
            else None
            for best in found
        ]

    def admitted(self, scope: DocumentScope | None, *, summaries: bool = False) -> int:
        if self.local:
            return 0
        with self._guard("count"):
            found = self._require().count(
                self.collection, count_filter=_search_filter(scope, summaries), exact=False
            )
        return int(found.count)

    def get_points(self, ids: Sequence[str], with_vector: bool) -> list[PointData]:
        if not ids:
            return []
        with self._guard("get_points"):
            records = self._require().retrieve(
                self.collection,
                list(ids),
                with_payload=True,
                with_vectors=[self.spec.name] if with_vector else False,
            )
        return [point_from_record(r, self.spec, with_vector) for r in records]

    def scroll(self, with_vector: bool, page_size: int = 1024) -> Iterator[PointData]:
        vectors = [self.spec.name] if with_vector else False

        def page(offset: Any) -> tuple[Sequence[Any], Any]:
            with self._guard("scroll"):
                return self._require().scroll(
                    self.collection, limit=page_size, offset=offset, with_payload=True, with_vectors=vectors
                )

        return scroll_points(page, self.spec, with_vector)

    def value_counts(self, key: str) -> dict[int, int]:
        with self._guard("facet"):
            response = self._require().facet(self.collection, key, limit=MAX_FACET_VALUES, exact=True)
        return {int(hit.value): int(hit.count) for hit in response.hits}

    def count(self) -> int:
        with self._guard("count"):
            return int(self._require().count(self.collection, exact=True).count)

    # -- lifecycle ---------------------------------------------------------------------------

    def flush(self) -> None:
        """Nothing to do: writes wait for the server (or the local file) before returning."""

    def optimize(self, payloads: DocumentPayloads | None = None) -> None:
        """Only ``payloads`` to write: a server builds its indexes in the background (a point
        written is indexed again there); local mode has none."""
        if payloads is not None:
            self.write_payloads(payloads)

    def close(self) -> None:
        if self._client is None:
            return
        client, self._client = self._client, None
        if self.local and self.location != MEMORY:
            _local_clients.release(self.location)
        else:
            client.close()

    def drop(self) -> None:
        """Delete the collection, then close."""
        with self._guard("drop"):
            self._require().delete_collection(self.collection)
        self.close()


def _search_filter(scope: DocumentScope | None, summaries: bool) -> models.Filter:
    """Enabled points, of the documents (and the section) ``scope`` admits, summaries only if
    ``summaries``."""
    must: list[models.Condition] = [models.FieldCondition(key=ENABLED_KEY, match=models.MatchValue(value=1))]
    must_not: list[models.Condition] = (
        [] if summaries else [models.FieldCondition(key=SUMMARY_KEY, match=models.MatchValue(value=1))]
    )
    if scope is not None and scope.payload_filter is not None:
        must.extend(_payload_conditions(scope.payload_filter))
    elif scope is not None and not scope.all_documents:
        in_scope = models.FieldCondition(key=DOCUMENT_KEY, match=models.MatchAny(any=sorted(scope.ids)))
        (must_not if scope.exclude else must).append(in_scope)
    if scope is not None and scope.section is not None:
        must.append(models.FieldCondition(key=SECTIONS_KEY, match=models.MatchValue(value=scope.section)))
    return models.Filter(must=must, must_not=must_not or None)


def _payload_conditions(tests: PayloadFilter) -> list[models.Condition]:
    """A payload filter as conditions that must all hold (as ``edge_filters.payload_conditions``)."""
    conditions = [_test_condition(test) for test in tests.tests]
    return [models.Filter(should=conditions)] if tests.any_of else conditions


def _test_condition(test: FieldTest) -> models.Condition:
    condition: models.Condition
    if test.empty:
        condition = models.IsEmptyCondition(is_empty=models.PayloadField(key=test.key))
    elif test.numbers:
        condition = models.Filter(
            should=[
                models.FieldCondition(key=test.key, range=models.Range(gte=v, lte=v)) for v in test.numbers
            ]
        )
    elif test.strings:
        condition = models.FieldCondition(key=test.key, match=models.MatchAny(any=list(test.strings)))
    else:
        bounds = models.Range(gt=test.gt, gte=test.gte, lt=test.lt, lte=test.lte)
        condition = models.FieldCondition(key=test.key, range=bounds)
    return models.Filter(must_not=[condition]) if test.negate else condition


def _match(key: str, value: str | int) -> models.Filter:
    return models.Filter(must=[models.FieldCondition(key=key, match=models.MatchValue(value=value))])
