"""A dense search restricted to a scope on the Qdrant stores: exact while the scope admits few
points, the ACORN walk above (see ``zhiku/datasource/vector/restricted.py``)."""

from __future__ import annotations

import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from zhiku.core.payload_filter import FieldTest, PayloadFilter
from zhiku.core.scope import DocumentScope
from zhiku.datasource.points.collection import DOCUMENT_KEY, PointCollection, VectorSpec
from zhiku.datasource.points.edge_config import (
    FULL_SCAN_KB,
    SCAN_MAX_POINTS,
    full_scan_kb,
    scanned_at_most,
)
from zhiku.datasource.points.qdrant import ClientCollection
from zhiku.datasource.vector.base import VectorRecord
from zhiku.datasource.vector.dense import DenseVectorStore
from zhiku.datasource.vector.edge import EdgeVectorStore
from zhiku.datasource.vector.qdrant import QdrantClientVectorStore
from zhiku.datasource.vector.restricted import (
    ACORN_HNSW_EF,
    EXACT_SEARCH_MAX,
    PLAIN_SCAN,
    DenseSearchPlan,
    graph_search,
    is_restricted,
    restricted_search,
)

DIM, POINTS, QUERIES, PER_DOCUMENT = 32, 4000, 50, 10


def clustered(rng: np.random.Generator, n: int) -> np.ndarray:
    """Unit vectors around 100 overlapping centres (as in test_vector_recall.py)."""
    centres = rng.normal(size=(100, DIM))
    vectors = centres[rng.integers(0, 100, n)] + rng.normal(size=(n, DIM))
    unit: np.ndarray = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    return unit


class Recording:
    """A collection that records the counts and the search plans asked of it."""

    def __init__(self, collection: PointCollection) -> None:
        self._collection = collection
        self.counted: list[DocumentScope | None] = []
        self.plans: list[DenseSearchPlan] = []

    def admitted(self, scope: DocumentScope | None, *, summaries: bool = False) -> int:
        self.counted.append(scope)
        return self._collection.admitted(scope, summaries=summaries)

    def search(self, query: Any, limit: int, **options: Any) -> list[tuple[str, float]]:
        self.plans.append(DenseSearchPlan(options["exact"], options["hnsw_ef"], options["acorn"]))
        return self._collection.search(query, limit, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._collection, name)


def recording(store: DenseVectorStore) -> Recording:
    spy = Recording(store._collection)
    store._collection = spy  # type: ignore[assignment]
    return spy


def exact_share_found(
    store: DenseVectorStore,
    queries: np.ndarray,
    points: np.ndarray,
    ids: list[str],
    documents: list[str],
    admitted: set[str],
) -> float:
    """The share of the exact top 10 among the ``admitted`` documents' points that the store's
    search in their scope finds, over ``queries``."""
    scope = DocumentScope(frozenset(admitted))
    inside = np.array([d in admitted for d in documents])
    found = 0
    for query in queries:
        scores = np.where(inside, points @ query, -np.inf)
        exact = {ids[i] for i in np.argsort(-scores)[:10]}
        found += len(exact & {s for s, _ in store.search(query, 10, scope)})
    return found / (10 * len(queries))


def test_plan_at_the_bounds() -> None:
    assert restricted_search(0, 10, 128) == DenseSearchPlan(exact=True)
    assert restricted_search(EXACT_SEARCH_MAX, 10, 128) == DenseSearchPlan(exact=True)
    walk = restricted_search(EXACT_SEARCH_MAX + 1, 10, 128)
    assert walk == DenseSearchPlan(exact=False, hnsw_ef=ACORN_HNSW_EF, acorn=True)
    assert restricted_search(101, 10, 128, exact_max=100) == walk
    # below the collection's full-scan bound the engine scans them by its own plan
    assert restricted_search(0, 10, 128, plain_max=500) == PLAIN_SCAN
    assert restricted_search(500, 10, 128, plain_max=500) == PLAIN_SCAN
    assert restricted_search(501, 10, 128, plain_max=500) == DenseSearchPlan(exact=True)
    # a scope admitting more than half the points (payload tests, no list) walks as unrestricted
    assert restricted_search(501, 10, 128, points=1000) == graph_search(10, 128)
    assert restricted_search(500, 10, 128, points=1000) == DenseSearchPlan(exact=True)
    # the beam is never narrower than the store's nor than the hits asked for
    assert restricted_search(10**6, 10, 2 * ACORN_HNSW_EF).hnsw_ef == 2 * ACORN_HNSW_EF
    assert restricted_search(10**6, 3 * ACORN_HNSW_EF, 128).hnsw_ef == 3 * ACORN_HNSW_EF


def test_which_scopes_are_counted() -> None:
    assert not is_restricted(None)
    assert is_restricted(DocumentScope(frozenset({"a"})))
    assert not is_restricted(DocumentScope(frozenset({"a"}), exclude=True))  # most documents
    assert is_restricted(DocumentScope.of_section("Intro"))
    most = DocumentScope.by_payload(PayloadFilter(()), lambda: DocumentScope(frozenset({"a"}), exclude=True))
    assert is_restricted(most)  # not known until its list is read, which counting avoids
    assert most.exclude and not is_restricted(most)  # once read, as a list


@pytest.fixture(scope="module")
def graph_store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """4,000 clustered points of 400 documents, with a real HNSW graph (lowered index threshold)."""
    rng = np.random.default_rng(11)
    vectors = clustered(rng, POINTS + QUERIES)
    queries, points = vectors[:QUERIES], vectors[QUERIES:]
    ids = [str(uuid.UUID(int=i + 1)) for i in range(POINTS)]
    documents = [str(uuid.UUID(int=(1 << 64) + i // PER_DOCUMENT)) for i in range(POINTS)]
    store = EdgeVectorStore(tmp_path_factory.mktemp("restricted") / "dense", DIM, index_threshold_kb=64)
    store.upsert([VectorRecord(i, v, d) for i, v, d in zip(ids, points, documents, strict=True)])
    store.optimize()
    yield store, queries, points, ids, documents
    store.close()


def test_few_admitted_points_give_the_exact_top_k(graph_store: Any) -> None:
    store, queries, points, ids, documents = graph_store
    spy = recording(store)
    try:
        admitted = set(documents[: 60 * PER_DOCUMENT])  # 15% of the points: above the scan bound
        assert len(admitted) * PER_DOCUMENT > store._collection.plain_search_max
        scope = DocumentScope(frozenset(admitted))
        inside = np.array([d in admitted for d in documents])
        for query in queries:
            scores = np.where(inside, points @ query, -np.inf)
            exact = [ids[i] for i in np.argsort(-scores)[:10]]
            assert [s for s, _ in store.search(query, 10, scope)] == exact
        assert spy.counted == [scope] * QUERIES
        assert spy.plans == [DenseSearchPlan(exact=True)] * QUERIES
    finally:
        store._collection = spy._collection


def test_points_under_the_full_scan_bound_are_scanned_by_their_int8_copies(graph_store: Any) -> None:
    """Left to Qdrant below its full-scan bound, the search scans the admitted points (by the
    int8 copies, then the best rescored): what it finds is the exact search's, not a filtered
    walk's (which finds a fraction of it when a filter admits 5% of the points)."""
    store, queries, points, ids, documents = graph_store
    spy = recording(store)
    try:
        admitted = set(documents[:: 20 * PER_DOCUMENT])  # 20 documents: 200 of the 4,000 points
        assert len(admitted) * PER_DOCUMENT <= store._collection.plain_search_max
        assert exact_share_found(store, queries, points, ids, documents, admitted) >= 0.99
        assert spy.plans == [PLAIN_SCAN] * QUERIES
    finally:
        store._collection = spy._collection


def test_many_admitted_points_walk_the_graph_with_acorn(graph_store: Any) -> None:
    store, queries, _, _, documents = graph_store
    spy = recording(store)
    store.exact_search_max = 100
    try:
        scope = DocumentScope(frozenset(documents[: POINTS // 2]))
        assert len(store.search(queries[0], 10, scope)) == 10
        assert spy.plans == [DenseSearchPlan(exact=False, hnsw_ef=ACORN_HNSW_EF, acorn=True)]
    finally:
        store._collection = spy._collection
        store.exact_search_max = EXACT_SEARCH_MAX


def test_unrestricted_searches_are_not_counted(graph_store: Any) -> None:
    store, queries, _, _, documents = graph_store
    spy = recording(store)
    try:
        store.search(queries[0], 10)
        store.search(queries[0], 10, DocumentScope(frozenset({documents[0]}), exclude=True))
        assert spy.counted == []
        assert spy.plans == [DenseSearchPlan(hnsw_ef=store.hnsw_ef)] * 2
    finally:
        store._collection = spy._collection


@pytest.mark.parametrize("share", [0.15, 0.9])
def test_payload_tests_are_counted_without_reading_the_list(graph_store: Any, share: float) -> None:
    """Tested on the points' payload, a scope's list of documents is never read: the search counts
    what it admits, exact at 15% of the points, the unrestricted walk at 90%."""
    store, queries, points, ids, documents = graph_store
    spy = recording(store)
    try:
        kept = sorted(set(documents))[: int(share * POINTS / PER_DOCUMENT)]
        tests = PayloadFilter((FieldTest(DOCUMENT_KEY, strings=tuple(kept)),))

        def unread() -> DocumentScope:
            raise AssertionError("the list was read")

        scope = DocumentScope.by_payload(tests, unread)
        inside = np.isin(documents, kept)
        for query in queries[:10]:
            scores = np.where(inside, points @ query, -np.inf)
            exact = {ids[i] for i in np.argsort(-scores)[:10]}
            found = {s for s, _ in store.search(query, 10, scope)}
            assert len(found & exact) >= (10 if share < 0.5 else 8)
        # above the full-scan bound, the servable points are counted too
        assert all(counted is scope for counted in spy.counted[::2]) and spy.counted[1::2] == [None] * 10
        if share < 0.5:
            assert spy.plans == [DenseSearchPlan(exact=True)] * 10
        else:  # the walk of an unrestricted search
            assert spy.plans == [DenseSearchPlan(hnsw_ef=store.hnsw_ef)] * 10
    finally:
        store._collection = spy._collection


def test_client_store_searches_a_section_exactly() -> None:
    """qdrant-client's local mode compares every point: the scope is not counted there."""
    store = QdrantClientVectorStore(":memory:", "segments", DIM)
    try:
        vectors = clustered(np.random.default_rng(3), 21)
        store.upsert(
            [
                VectorRecord(str(uuid.UUID(int=i + 1)), v, "doc", section="A" if i % 2 else None)
                for i, v in enumerate(vectors[1:])
            ]
        )
        hits = store.search(vectors[0], 20, DocumentScope.of_section("A"))
        assert len(hits) == 10
        assert store._collection.admitted(DocumentScope.of_section("A")) == 0
    finally:
        store.close()


def test_edge_count_estimates_the_admitted_points(graph_store: Any) -> None:
    store, _, _, _, documents = graph_store
    scope = DocumentScope(frozenset(documents[:400]))  # 40 documents, 400 points
    assert store._collection.admitted(scope) == pytest.approx(400, rel=0.5)
    assert store._collection.admitted(None) == pytest.approx(POINTS, rel=0.1)


class RecordingClient:
    """Stands for a Qdrant server's client: keeps what a count and a search sent."""

    def __init__(self) -> None:
        self.sent: dict[str, Any] = {}

    def count(self, collection: str, **options: Any) -> Any:
        self.sent["count"] = options
        return SimpleNamespace(count=1234)

    def query_points(self, collection: str, **options: Any) -> Any:
        self.sent["search"] = options
        return SimpleNamespace(points=[])


def test_a_server_gets_the_estimate_and_the_acorn_walk_asked_for() -> None:
    collection = ClientCollection(":memory:", "segments", VectorSpec("dense", DIM))
    memory = collection._client
    client = RecordingClient()
    collection._client, collection.local = client, False  # type: ignore[assignment]
    try:
        scope = DocumentScope(frozenset({str(uuid.UUID(int=5))}))
        assert collection.admitted(scope) == 1234
        assert client.sent["count"]["exact"] is False
        assert client.sent["count"]["count_filter"].must[1].match.any == sorted(scope.ids)
        collection.search([1.0] * DIM, 10, hnsw_ef=256, acorn=True, scope=scope)
        params = client.sent["search"]["search_params"]
        assert params.acorn.enable and params.hnsw_ef == 256 and not params.exact
        collection.search([1.0] * DIM, 10, exact=True, scope=scope)
        assert client.sent["search"]["search_params"].acorn is None
    finally:
        collection._client, collection.local = memory, True
        collection.close()


def test_a_shard_built_with_a_lower_full_scan_bound_keeps_it_until_rebuilt(tmp_path: Path) -> None:
    """Qdrant plans by the bound each segment was built with: a shard opened with a higher one
    is still planned by the old one (else a filter between the two would walk the graph), and a
    segment config that cannot be read leaves every restricted search exact."""
    rng = np.random.default_rng(5)
    points = clustered(rng, 4000)
    ids = [str(uuid.UUID(int=i + 1)) for i in range(len(points))]
    documents = [str(uuid.UUID(int=(1 << 64) + i // PER_DOCUMENT)) for i in range(len(points))]
    with EdgeVectorStore(tmp_path / "dense", DIM, index_threshold_kb=64) as store:
        store.upsert([VectorRecord(i, v, d) for i, v, d in zip(ids, points, documents, strict=True)])
        store.optimize()
        assert store._collection.plain_search_max == 64 * 1024 // (4 * DIM) - 1
    with EdgeVectorStore(tmp_path / "dense", DIM, index_threshold_kb=256) as store:
        assert store._collection.plain_search_max == 64 * 1024 // (4 * DIM) - 1
    config = next((tmp_path / "dense" / "segments").glob("*/segment.json"))
    config.write_text("{not json", encoding="utf-8")
    assert scanned_at_most(tmp_path / "dense", "dense", DIM, 256) == 0


def test_the_full_scan_bound_follows_the_shards_size_in_powers_of_two() -> None:
    assert full_scan_kb(None) == full_scan_kb(None, 1000, 384) == FULL_SCAN_KB  # 13,333 points
    assert full_scan_kb(None, 100_000, 384) == 16_384 * 384 * 4 // 1024  # a fifth, rounded down
    assert full_scan_kb(None, 110_000, 384) == full_scan_kb(None, 100_000, 384)  # no rebuild
    assert full_scan_kb(None, 10_000_000, 384) == SCAN_MAX_POINTS * 384 * 4 // 1024
    assert full_scan_kb(64, 8000, DIM) == 1024 * DIM * 4 // 1024  # above the index threshold's
    assert full_scan_kb(64, 4000, DIM) == 64


def test_a_larger_shard_scans_more_admitted_points_and_keeps_its_bound(tmp_path: Path) -> None:
    """A fifth of the points (1,024 of 8,000) are scanned by their int8 copies, where the fixed
    bound (the index threshold's 512) made the search exact; a later build of about as many
    points keeps the graph it has (Qdrant rebuilds a segment whose bound differs)."""
    rng = np.random.default_rng(8)
    vectors = clustered(rng, 8000 + QUERIES)
    queries, points = vectors[:QUERIES], vectors[QUERIES:]
    ids = [str(uuid.UUID(int=i + 1)) for i in range(len(points))]
    documents = [str(uuid.UUID(int=(1 << 64) + i // PER_DOCUMENT)) for i in range(len(points))]
    path = tmp_path / "dense"
    with EdgeVectorStore(path, DIM, index_threshold_kb=64) as store:
        store.upsert([VectorRecord(i, v, d) for i, v, d in zip(ids, points, documents, strict=True)])
        store.optimize()
        assert store._collection.plain_search_max == 1023
        built = sorted(path.glob("segments/*/vector_index-dense/hnsw_config.json"))
        spy = recording(store)
        admitted = set(documents[:: 8 * PER_DOCUMENT])  # 100 documents: 1,000 points
        share = exact_share_found(store, queries, points, ids, documents, admitted)
        store._collection = spy._collection
        assert spy.plans == [PLAIN_SCAN] * QUERIES
        assert share >= 0.99
        store.upsert([VectorRecord(str(uuid.UUID(int=9999)), points[0], documents[0])])
        store.optimize()
        assert sorted(path.glob("segments/*/vector_index-dense/hnsw_config.json")) == built
    with EdgeVectorStore(path, DIM, index_threshold_kb=64) as store:
        assert store._collection.plain_search_max == 1023
        store.optimize()
        assert sorted(path.glob("segments/*/vector_index-dense/hnsw_config.json")) == built
