"""Contract of every FullTextStore backend: sparse BM25 on qdrant-edge, qdrant-client and pgvector,
rank_bm25."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from zhiku.core.errors import StoreError
from zhiku.core.scope import DocumentScope
from zhiku.datasource.fulltext.base import FullTextStore, TextRecord
from zhiku.datasource.fulltext.memory import RankBM25Store
from zhiku.datasource.fulltext.pgvector import PgBM25Store
from zhiku.datasource.fulltext.sparse import EdgeSparseBM25Store, QdrantClientSparseBM25Store
from zhiku.datasource.points import edge_config

A, B, C, D, E, F, G, H = (str(uuid.UUID(int=i)) for i in range(1, 9))
MISSING = str(uuid.UUID(int=99))

Opener = Callable[[], FullTextStore]

RECORDS = [
    TextRecord(A, ["apple", "apple", "pie"], "doc-1"),
    TextRecord(B, ["apple", "tree", "green", "leaf", "big"], "doc-1"),
    TextRecord(C, ["banana", "tree"], "doc-2"),
    TextRecord(D, ["cherry"], "doc-2"),
    TextRecord(E, ["苹果", "派", "苹果"], "doc-3"),
    TextRecord(F, ["durian"], "doc-3"),
    TextRecord(G, ["elder"], "doc-4", enabled=False),
    TextRecord(H, [], "doc-4"),
]


@pytest.fixture(params=["edge", "qdrant-memory", "qdrant-path", "memory", "pgvector"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens the same store again on each call; in-memory stores cannot be reopened."""
    opened: list[FullTextStore] = []
    url = request.getfixturevalue("pgvector_url") if request.param == "pgvector" else ""

    def open_store() -> FullTextStore:
        store: FullTextStore
        if opened and request.param in ("qdrant-memory", "memory"):
            pytest.skip("an in-memory store does not persist")
        if request.param == "edge":
            store = EdgeSparseBM25Store(tmp_path / "bm25")
        elif request.param == "pgvector":
            store = PgBM25Store(url, "bm25")
        elif request.param == "qdrant-path":
            store = QdrantClientSparseBM25Store(str(tmp_path / "qdrant"), "bm25")
        elif request.param == "qdrant-memory":
            store = QdrantClientSparseBM25Store(":memory:", "bm25")
        else:
            store = RankBM25Store()
        opened.append(store)
        return store

    yield open_store
    for store in opened:
        store.close()


@pytest.fixture
def store(opener: Opener) -> FullTextStore:
    store = opener()
    store.upsert(RECORDS)
    return store


def ranked(store: FullTextStore, tokens: list[str], limit: int = 10) -> list[str]:
    return [segment for segment, _ in store.search(tokens, limit)]


def test_search_ranks_records_sharing_a_token(store: FullTextStore) -> None:
    hits = store.search(["apple"], 10)
    assert [segment for segment, _ in hits] == [A, B]  # A: twice and shorter
    assert hits[0][1] > hits[1][1] > 0
    assert ranked(store, ["苹果"]) == [E]
    assert ranked(store, ["tree", "cherry"], limit=2) == [D, C]  # rarer term outweighs
    assert store.search([], 10) == []
    assert store.search(["unknown"], 10) == []
    assert store.search(["apple"], 0) == []


def test_repeated_query_tokens_weigh_more(store: FullTextStore) -> None:
    once = dict(store.search(["apple", "tree"], 10))
    twice = dict(store.search(["apple", "tree", "tree"], 10))
    assert twice[B] > once[B]
    assert twice[A] == pytest.approx(once[A], rel=1e-6)


def test_upsert_overwrites(store: FullTextStore) -> None:
    store.upsert([TextRecord(A, ["cherry", "plum"], "doc-9")])
    assert ranked(store, ["apple"]) == [B]
    assert set(ranked(store, ["plum", "cherry"])) == {A, D}
    assert store.count() == len(RECORDS)
    store.delete_document("doc-9")
    assert A not in store.ids()


def test_delete_and_delete_document(store: FullTextStore) -> None:
    store.delete([A, MISSING])
    assert ranked(store, ["apple"]) == [B]
    store.delete_document("doc-1")
    assert store.search(["apple"], 10) == []
    assert store.ids() == {C, D, E, F, G, H}
    assert store.count() == 6


def test_set_enabled_hides_and_unhides(store: FullTextStore) -> None:
    assert store.search(["elder"], 10) == []  # written disabled
    store.set_enabled([A, MISSING], False)
    assert ranked(store, ["apple"]) == [B]
    assert A in store.ids() and store.count() == len(RECORDS)
    store.set_enabled([A, G], True)
    assert ranked(store, ["apple"]) == [A, B]
    assert ranked(store, ["elder"]) == [G]


def test_persists_across_close_and_reopen(opener: Opener) -> None:
    store = opener()
    store.upsert(RECORDS)
    store.set_enabled([A], False)
    before = store.search(["apple", "tree"], 10)
    store.flush()
    store.close()
    reopened = opener()
    assert reopened.ids() == {r.id for r in RECORDS}
    after = reopened.search(["apple", "tree"], 10)
    assert [s for s, _ in after] == [s for s, _ in before]
    assert [score for _, score in after] == pytest.approx([score for _, score in before], rel=1e-6)
    assert A not in ranked(reopened, ["apple"])


def test_drop_removes_everything(opener: Opener) -> None:
    store = opener()
    store.upsert(RECORDS)
    store.drop()
    assert store.count() == 0 if isinstance(store, RankBM25Store) else opener().count() == 0


def test_edge_second_open_while_open_fails(tmp_path: Path) -> None:
    first = EdgeSparseBM25Store(tmp_path / "bm25")
    try:
        with pytest.raises(StoreError, match="already open"):
            EdgeSparseBM25Store(tmp_path / "bm25")
    finally:
        first.close()


def test_an_edge_build_gives_its_sparse_segment_a_full_scan_bound_by_its_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bound a build chooses (a twentieth of the records; here all of them, so that a small
    shard shows it) reaches the built segment, where Qdrant reads it, and the shard keeps it."""
    monkeypatch.setattr(edge_config, "SPARSE_SCAN_SHARE", 1.0)
    records = 10_000  # of 151 terms: above the size from which Qdrant builds a sparse index
    documents = [str(uuid.UUID(int=(1 << 64) + n // 10)) for n in range(records)]
    with EdgeSparseBM25Store(tmp_path / "bm25") as store:
        store.upsert(
            [
                TextRecord(
                    str(uuid.UUID(int=n + 1)),
                    [f"w{(n * 7 + j) % 5000}" for j in range(150)] + [f"t{n % 97}"],
                    documents[n],
                )
                for n in range(records)
            ]
        )
        store.optimize()
        scope = DocumentScope(frozenset(documents[:3000]))  # 300 documents, 3,000 records
        hits = store.search(["t5"], 100, scope)
        assert len(hits) == 31 and all(score > 0 for _, score in hits)  # 5, 102, ..., 2915
    built = [
        json.loads(config.read_text(encoding="utf-8"))["full_scan_threshold"]
        for config in (tmp_path / "bm25" / "segments").glob("*/vector_index-bm25/sparse_index_config.json")
    ]
    assert built == [records]
    with EdgeSparseBM25Store(tmp_path / "bm25") as store:
        saved = json.loads((tmp_path / "bm25" / "edge_config.json").read_text(encoding="utf-8"))
        assert saved["sparse_vectors"]["bm25"]["full_scan_threshold"] == records
        assert store.count() == records


def test_a_document_scope_is_applied_inside_the_search(store: FullTextStore) -> None:
    # limit 1: a filter applied after the search would find doc-1's A and drop it
    assert [s for s, _ in store.search(["tree"], 1, DocumentScope(frozenset({"doc-2"})))] == [C]
    assert [s for s, _ in store.search(["apple"], 5, DocumentScope(frozenset({"doc-1"}), exclude=True))] == []
    assert [s for s, _ in store.search(["tree"], 5, DocumentScope(frozenset({"doc-1"}), exclude=True))] == [C]
    assert store.search(["tree"], 5, DocumentScope(frozenset())) == []


def test_a_section_scope_is_applied_inside_the_search(opener: Opener) -> None:
    store = opener()
    store.upsert(
        [
            TextRecord(A, ["tea", "tea", "tea"], "doc-1", section="Guide > Brew"),
            TextRecord(B, ["tea", "tea"], "doc-1", section="Guide > Brew > Cold"),
            TextRecord(C, ["tea"], "doc-2", section="Guide > Brewing"),
            TextRecord(D, ["tea", "leaf"], "doc-2"),
        ]
    )

    def found(scope: DocumentScope, limit: int = 5) -> set[str]:
        return {s for s, _ in store.search(["tea"], limit, scope)}

    # limit 1: a restriction applied after the search would find A and drop it
    assert found(DocumentScope.of_section("Guide > Brew > Cold"), 1) == {B}
    assert found(DocumentScope.of_section("Guide > Brew")) == {A, B}  # not "Guide > Brewing"
    assert found(DocumentScope.of_section("Guide")) == {A, B, C}
    assert found(DocumentScope(frozenset({"doc-2"}), section="Guide")) == {C}
    assert found(DocumentScope(frozenset(), exclude=True)) == {A, B, C, D}


def test_attainable_is_every_query_term_at_its_idf_saturated(opener: Opener) -> None:
    """A hit's BM25 over the attainable is the lexical evidence of relevance: the attainable is
    Σ count × IDF × (k1 + 1), an unknown term at the IDF of the rarest, and no hit exceeds it."""
    store = opener()
    store.upsert(RECORDS)
    query = ["apple", "apple", "tree", "zzz-unknown"]
    attainable = store.attainable(query)
    hits = store.search(query, 10)
    assert hits and all(0.0 < score < attainable for _, score in hits)
    assert store.attainable([]) == 0.0
    if isinstance(store, RankBM25Store):
        return
    from zhiku.datasource.fulltext.bm25_math import lucene_idf

    docs, k1 = len(RECORDS), store.k1  # type: ignore[attr-defined]
    # apple is in 2 records, tree in 2; the unknown term counts as one a single record holds
    expected = (2 * lucene_idf(docs, 2) + lucene_idf(docs, 2) + lucene_idf(docs, 1)) * (k1 + 1)
    assert attainable == pytest.approx(expected, rel=1e-3)


def test_a_long_query_reads_a_bounded_number_of_terms(tmp_path: Path) -> None:
    """The new terms of a query are looked up in one batch, at most 64 of them; the rest count
    as the rarest."""
    store = EdgeSparseBM25Store(tmp_path / "bm25")
    try:
        store.upsert(RECORDS)
        batches: list[int] = []
        best_points = store._collection.best_points

        def counting(queries, **kwargs):  # type: ignore[no-untyped-def]
            batches.append(len(queries))
            return best_points(queries, **kwargs)

        store._collection.best_points = counting  # type: ignore[method-assign]
        assert store.attainable([f"word{i}" for i in range(1000)] + ["apple"]) > 0
        assert batches == [64]
        # word1 was looked up; apple was not (past the bound), so it is now, with tree
        store.attainable(["word1", "apple", "tree"])
        assert batches == [64, 2]
    finally:
        store.close()


def test_a_summary_is_found_only_when_summaries_are_asked_for(opener: Opener) -> None:
    store = opener()
    others = [TextRecord(i, ["coffee"], "doc-2") for i in (C, D, E)]  # tea rare: rank_bm25's IDF > 0
    store.upsert(
        [TextRecord(A, ["tea", "leaf"], "doc-1"), TextRecord(B, ["tea", "tea"], "doc-1", summary=True)]
    )
    store.upsert(others)
    assert ranked(store, ["tea"]) == [A]
    assert [s for s, _ in store.search(["tea"], 5, summaries=True)] == [B, A]
    assert store.ids() == {A, B, C, D, E} and store.count() == 5
