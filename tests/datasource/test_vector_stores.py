"""Contract of every VectorStore backend: qdrant-edge (embedded), qdrant-client (:memory:, path) and
pgvector (PostgreSQL)."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from zhiku.core.errors import InvalidInput, StoreError
from zhiku.core.scope import DocumentScope
from zhiku.datasource.vector.base import VectorRecord, VectorStore
from zhiku.datasource.vector.edge import EdgeVectorStore
from zhiku.datasource.vector.pgvector import PgVectorStore
from zhiku.datasource.vector.qdrant import QdrantClientVectorStore

DIM = 8
A, B, C, D = (str(uuid.UUID(int=i)) for i in (1, 2, 3, 4))

Opener = Callable[[], VectorStore]


def unit(*components: float) -> np.ndarray:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[: len(components)] = components
    return vector


def assert_one_hit(hits: list[tuple[str, float]], segment: str, cosine: float) -> None:
    assert len(hits) == 1 and hits[0][0] == segment, hits
    assert hits[0][1] == pytest.approx(cosine, abs=1e-6)


@pytest.fixture(params=["edge", "qdrant-memory", "qdrant-path", "pgvector"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens the same store again on each call (``:memory:`` only once: it cannot be reopened)."""
    opened: list[VectorStore] = []
    url = request.getfixturevalue("pgvector_url") if request.param == "pgvector" else ""

    def open_store() -> VectorStore:
        store: VectorStore
        if request.param == "edge":
            store = EdgeVectorStore(tmp_path / "dense", DIM)
        elif request.param == "pgvector":
            store = PgVectorStore(url, "segments", DIM)
        elif request.param == "qdrant-path":
            store = QdrantClientVectorStore(str(tmp_path / "qdrant"), "segments", DIM)
        else:
            if opened:
                pytest.skip(":memory: does not persist")
            store = QdrantClientVectorStore(":memory:", "segments", DIM)
        opened.append(store)
        return store

    yield open_store
    for store in opened:
        store.close()


@pytest.fixture
def store(opener: Opener) -> VectorStore:
    store = opener()
    store.upsert(
        [
            VectorRecord(A, unit(1, 0), "doc-1"),
            VectorRecord(B, unit(1, 1), "doc-1"),
            VectorRecord(C, unit(0, 1), "doc-2"),
            VectorRecord(D, unit(-1, 0), "doc-2", enabled=False),
        ]
    )
    return store


def test_search_orders_by_cosine(store: VectorStore) -> None:
    hits = store.search(unit(2, 0), 10)
    assert [segment for segment, _ in hits] == [A, B, C]
    assert [score for _, score in hits] == pytest.approx([1.0, 2**-0.5, 0.0], abs=1e-6)
    assert_one_hit(store.search(unit(0, 3), 1), C, 1.0)


def test_upsert_overwrites_vector_and_payload(store: VectorStore) -> None:
    store.upsert([VectorRecord(A, unit(0, 0, 1), "doc-3")])
    assert store.count() == 4
    assert_one_hit(store.search(unit(0, 0, 1), 1), A, 1.0)
    store.delete_document("doc-1")
    assert store.ids() == {A, C, D}


def test_delete_and_delete_document(store: VectorStore) -> None:
    store.delete([B, str(uuid.UUID(int=99))])  # an unknown id is ignored
    assert store.ids() == {A, C, D}
    assert B not in [segment for segment, _ in store.search(unit(1, 1), 10)]
    store.delete_document("doc-2")
    assert store.ids() == {A}
    assert store.count() == 1


def test_set_enabled_hides_and_unhides(store: VectorStore) -> None:
    assert D not in dict(store.search(unit(-1, 0), 10))  # written disabled
    store.set_enabled([A, str(uuid.UUID(int=98))], False)
    assert [segment for segment, _ in store.search(unit(1, 0), 10)] == [B, C]
    assert store.ids() == {A, B, C, D}
    assert store.count() == 4
    store.set_enabled([A, D], True)
    assert [segment for segment, _ in store.search(unit(1, 0), 10)] == [A, B, C, D]


def test_rejects_bad_input(store: VectorStore) -> None:
    with pytest.raises(InvalidInput):
        store.upsert([VectorRecord(str(uuid.uuid4()), np.ones(DIM + 1), "doc")])
    with pytest.raises(InvalidInput):
        store.upsert([VectorRecord("not-a-uuid", unit(1), "doc")])
    with pytest.raises(InvalidInput):
        store.search(np.zeros(DIM), 3)
    assert store.search(unit(1), 0) == []


def test_persists_across_close_and_reopen(opener: Opener) -> None:
    store = opener()
    store.upsert([VectorRecord(A, unit(1, 0), "doc-1"), VectorRecord(B, unit(0, 1), "doc-1")])
    store.set_enabled([B], False)
    store.flush()
    store.close()
    reopened = opener()
    assert reopened.ids() == {A, B}
    assert_one_hit(reopened.search(unit(1, 1), 10), A, 2**-0.5)


def test_drop_removes_everything(opener: Opener) -> None:
    store = opener()
    store.upsert([VectorRecord(A, unit(1), "doc-1")])
    store.drop()
    assert opener().count() == 0


def test_edge_second_open_while_open_fails(tmp_path: Path) -> None:
    first = EdgeVectorStore(tmp_path / "dense", DIM)
    try:
        with pytest.raises(StoreError, match="already open"):
            EdgeVectorStore(tmp_path / "dense", DIM)
        # Another process hits the same lock (checked on the engine: importing zhiku takes seconds).
        child = f"import qdrant_edge\nqdrant_edge.EdgeShard.load({str(tmp_path / 'dense')!r})"
        result = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
        assert result.returncode != 0 and "WouldBlock" in result.stderr
    finally:
        first.close()
    EdgeVectorStore(tmp_path / "dense", DIM).close()  # free again once closed


def test_edge_removes_stray_temp_segments_and_checks_dim(tmp_path: Path) -> None:
    EdgeVectorStore(tmp_path / "dense", DIM).close()
    stray = tmp_path / "dense" / "temp_segments" / "interrupted"
    stray.mkdir(parents=True)
    (stray / "data").write_bytes(b"partial")
    store = EdgeVectorStore(tmp_path / "dense", DIM)
    assert not (tmp_path / "dense" / "temp_segments").exists()
    store.close()
    with pytest.raises(StoreError, match="vector size"):
        EdgeVectorStore(tmp_path / "dense", DIM * 2)


def test_concurrent_writes_and_searches(opener: Opener) -> None:
    store = opener()
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(400, DIM)).astype(np.float32)
    ids = [str(uuid.UUID(int=1000 + i)) for i in range(400)]

    def write_then_search(batch: int) -> int:
        rows = range(batch * 50, batch * 50 + 50)
        store.upsert([VectorRecord(ids[i], vectors[i], f"doc-{batch}") for i in rows])
        return len(store.search(vectors[batch * 50], 5))

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(write_then_search, range(8))) == [5] * 8
    assert store.count() == 400


def test_qdrant_local_directory_is_shared_by_stores(tmp_path: Path) -> None:
    """The dense and BM25 stores of a dataset (and other datasets) share one local directory."""
    from zhiku.datasource.fulltext.sparse import QdrantClientSparseBM25Store

    location = str(tmp_path / "qdrant")
    dense = QdrantClientVectorStore(location, "ds1_dense", DIM)
    bm25 = QdrantClientSparseBM25Store(location, "ds1_bm25")
    other = QdrantClientVectorStore(location, "ds2_dense", DIM)
    dense.upsert([VectorRecord(A, unit(1), "doc")])
    other.upsert([VectorRecord(B, unit(1), "doc")])
    dense.close()
    assert other.ids() == {B} and bm25.count() == 0  # still usable after another store closed
    other.close()
    bm25.close()
    reopened = QdrantClientVectorStore(location, "ds1_dense", DIM)
    assert reopened.ids() == {A}
    reopened.close()


def test_a_document_scope_is_applied_inside_the_search(opener: Opener) -> None:
    store = opener()
    store.upsert(
        [
            VectorRecord(A, unit(1, 0), "doc-1"),
            VectorRecord(B, unit(1, 0.1), "doc-2"),
            VectorRecord(C, unit(1, 0.2), "doc-3"),
            VectorRecord(D, unit(0, 1), "doc-3", enabled=False),
        ]
    )
    query = unit(1, 0)
    # limit 1: a filter applied after the search would find doc-1's point and drop it
    assert [i for i, _ in store.search(query, 1, DocumentScope(frozenset({"doc-3"})))] == [C]
    excluded = store.search(query, 5, DocumentScope(frozenset({"doc-1"}), exclude=True))
    assert [i for i, _ in excluded] == [B, C]
    assert store.search(query, 5, DocumentScope(frozenset())) == []


def test_a_section_scope_is_applied_inside_the_search(opener: Opener) -> None:
    UNSECTIONED = str(uuid.UUID(int=5))  # noqa: N806 - named like the other ids
    store = opener()
    store.upsert(
        [
            VectorRecord(A, unit(1, 0), "doc-1", section="Guide > Install"),
            VectorRecord(B, unit(1, 0.1), "doc-1", section="Guide > Install > Linux"),
            VectorRecord(C, unit(1, 0.2), "doc-2", section="Guide"),
            VectorRecord(D, unit(1, 0.3), "doc-2", section="Guide > Installer"),
            VectorRecord(UNSECTIONED, unit(1, 0.05), "doc-2"),
        ]
    )
    query = unit(1, 0)

    def found(scope: DocumentScope, limit: int = 5) -> list[str]:
        return [i for i, _ in store.search(query, limit, scope)]

    # limit 1: a restriction applied after the search would find A and drop it
    assert found(DocumentScope.of_section("Guide > Install > Linux"), 1) == [B]
    assert found(DocumentScope.of_section("Guide > Install")) == [A, B]  # not "Guide > Installer"
    assert found(DocumentScope.of_section("Guide")) == [A, B, C, D]
    assert found(DocumentScope(frozenset({"doc-2"}), section="Guide")) == [C, D]
    assert found(DocumentScope(frozenset({"doc-2"}), exclude=True, section="Guide")) == [A, B]
    assert found(DocumentScope.of_section("Install")) == []
    assert len(found(DocumentScope(frozenset(), exclude=True))) == 5  # points without a section too


def test_a_summary_is_found_only_when_summaries_are_asked_for(opener: Opener) -> None:
    store = opener()
    store.upsert([VectorRecord(A, unit(1, 0), "doc-1"), VectorRecord(B, unit(1, 0.1), "doc-1", summary=True)])
    assert [i for i, _ in store.search(unit(1, 0.1), 5)] == [A]
    assert [i for i, _ in store.search(unit(1, 0.1), 5, summaries=True)] == [B, A]
    assert store.ids() == {A, B} and store.count() == 2


def test_vectors_reads_back_what_was_stored_in_its_direction(store: VectorStore) -> None:
    """What a copy to another store reads: each id's vector (disabled ones too), pointing where the
    written one did (a Qdrant collection keeps it normalised); unknown ids are left out."""
    unknown = str(uuid.UUID(int=99))
    read = store.vectors([B, D, unknown])
    assert set(read) == {B, D}
    for point, written in ((B, unit(1, 1)), (D, unit(-1, 0))):
        direction = written / np.linalg.norm(written)
        assert read[point] / np.linalg.norm(read[point]) == pytest.approx(direction, abs=1e-6)
    assert store.vectors([]) == {}
