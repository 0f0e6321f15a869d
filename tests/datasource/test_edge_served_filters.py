"""The embedded shard leaves the ``enabled`` and ``summary`` checks out of a search's filter only
while no point fails them, and checks again after every write (``points/edge_filters.py``)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from zhiku.core.scope import DocumentScope
from zhiku.datasource.fulltext.base import TextRecord
from zhiku.datasource.fulltext.sparse import EdgeSparseBM25Store
from zhiku.datasource.points.edge import EdgeCollection
from zhiku.datasource.points.edge_filters import ServedFilters, search_filter
from zhiku.datasource.vector.base import VectorRecord
from zhiku.datasource.vector.edge import EdgeVectorStore

DIM = 16
DOCUMENTS = [str(uuid.UUID(int=(1 << 64) + n)) for n in range(2)]


def _ids(n: int) -> list[str]:
    return [str(uuid.UUID(int=i + 1)) for i in range(n)]


def _unrestricted_filter(store: EdgeVectorStore) -> Any:
    collection = store._collection
    assert isinstance(collection, EdgeCollection)
    with collection._reading() as shard:
        return collection._filters.of(shard, None, False)


def test_without_a_disabled_point_or_a_summary_there_is_nothing_to_check() -> None:
    assert search_filter(None, False, check_enabled=False, check_summary=False) is None
    assert search_filter(None, True, check_enabled=False, check_summary=True) is None
    restricted = search_filter(
        DocumentScope(frozenset({DOCUMENTS[0]})), False, check_enabled=False, check_summary=False
    )
    assert restricted is not None


def test_a_point_disabled_after_a_search_is_not_served_by_the_next(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(40, DIM)).astype(np.float32)
    ids = _ids(40)
    with EdgeVectorStore(tmp_path / "dense", DIM) as store:
        store.upsert(
            [VectorRecord(i, v, DOCUMENTS[n % 2]) for n, (i, v) in enumerate(zip(ids, vectors, strict=True))]
        )
        scope = DocumentScope(frozenset({DOCUMENTS[0]}))
        assert store.search(vectors[0], 1)[0][0] == ids[0]  # the shard is known to be all enabled
        assert store.search(vectors[0], 1, scope)[0][0] == ids[0]

        store.set_enabled([ids[0]], False)
        assert ids[0] not in {i for i, _ in store.search(vectors[0], 40)}
        assert ids[0] not in {i for i, _ in store.search(vectors[0], 40, scope)}
        assert _unrestricted_filter(store) is not None

        summary = str(uuid.UUID(int=1000))
        store.upsert([VectorRecord(summary, vectors[1], DOCUMENTS[1], summary=True)])
        assert summary not in {i for i, _ in store.search(vectors[1], 41)}
        assert summary in {i for i, _ in store.search(vectors[1], 41, summaries=True)}

        store.set_enabled([ids[0]], True)
        store.delete([summary])
        assert store.search(vectors[0], 1)[0][0] == ids[0]
        assert _unrestricted_filter(store) is None


def test_bm25_leaves_out_a_disabled_record_after_a_search(tmp_path: Path) -> None:
    with EdgeSparseBM25Store(tmp_path / "bm25") as store:
        store.upsert([TextRecord(i, ["oolong", f"w{n}"], DOCUMENTS[0]) for n, i in enumerate(_ids(5))])
        assert len(store.search(["oolong"], 10)) == 5
        store.set_enabled(_ids(1), False)
        assert {i for i, _ in store.search(["oolong"], 10)} == set(_ids(5)[1:])


class _Shard:
    """A shard whose counts run ``during`` once (a write landing while a search counts)."""

    def __init__(self, during: Any) -> None:
        self.during = during
        self.counts = 0

    def count(self, request: Any) -> int:
        self.counts += 1
        if self.during is not None:
            during, self.during = self.during, None
            during()
        return 0


def test_an_answer_counted_across_a_write_is_not_kept() -> None:
    filters = ServedFilters()
    shard = _Shard(during=filters.written)
    assert filters.of(shard, None, False) is None  # type: ignore[arg-type]
    assert filters.of(shard, None, False) is None  # type: ignore[arg-type]
    assert shard.counts == 4  # counted again: the first answer may predate the write
    assert filters.of(shard, None, False) is None  # type: ignore[arg-type]
    assert shard.counts == 4  # kept until the next write
    filters.written()
    filters.of(shard, None, False)  # type: ignore[arg-type]
    assert shard.counts == 6


def _keys(conditions: Any) -> list[str]:
    return sorted(condition.key for condition in conditions or [])


@pytest.mark.parametrize("summaries", [False, True])
def test_filters_keep_the_checks_while_some_point_fails_them(summaries: bool) -> None:
    checked = search_filter(DocumentScope(frozenset({DOCUMENTS[0]}), exclude=True), summaries)
    assert checked is not None
    assert _keys(checked.must) == ["enabled"]
    assert _keys(checked.must_not) == (["document_id"] if summaries else ["document_id", "summary"])
    left_out = search_filter(None, summaries, check_enabled=False)
    if summaries:
        assert left_out is None
    else:
        assert left_out is not None and _keys(left_out.must_not) == ["summary"]
