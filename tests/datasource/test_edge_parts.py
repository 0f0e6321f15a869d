"""A large embedded shard is split by its build into parts, one segment each, that its search
pool's threads read side by side; the split keeps every point, vector, payload and index, and
later builds keep the parts apart until the shard has doubled."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np
import pytest
import qdrant_edge as qe

from zhiku.core.errors import StoreError
from zhiku.core.payload_filter import FieldTest, PayloadFilter, metadata_key
from zhiku.core.scope import DocumentScope
from zhiku.datasource.points import edge_build, edge_copy
from zhiku.datasource.points.collection import (
    DocumentPayloads,
    PointData,
    SparseValues,
    VectorSpec,
    base_payload,
)
from zhiku.datasource.points.edge import EdgeCollection
from zhiku.datasource.points.edge_config import build_full_scan, parts_due, read_parts
from zhiku.datasource.vector.dense import DENSE

DIM = 32
PART_MIN = 600
DOCUMENTS = [str(uuid.UUID(int=10_000 + n)) for n in range(10)]
TEAM = metadata_key("team")


def point_id(number: int) -> str:
    return str(uuid.UUID(int=number + 1))


def dense_points(first: int, count: int) -> list[PointData]:
    vectors = np.random.default_rng(first).standard_normal((count, DIM)).astype(np.float32)
    return [
        PointData(point_id(first + i), list(map(float, v)), base_payload(DOCUMENTS[(first + i) % 10], True))
        for i, v in enumerate(vectors)
    ]


def collection_at(path: Path, spec: VectorSpec, threads: int = 2) -> EdgeCollection:
    return EdgeCollection(
        path,
        spec,
        index_threshold_kb=16,
        child_build_min_points=0,
        search_threads=threads,
        part_min_points=PART_MIN,
    )


def segments(path: Path) -> int:
    shard = qe.EdgeShard.load(str(path))
    try:
        return int(shard.info().segments_count)
    finally:
        shard.close()


def pool_threads(path: Path) -> int:
    return int(json.loads((path / "edge_config.json").read_text(encoding="utf-8"))["max_search_threads"])


def test_a_large_dense_shard_is_split_and_answers_as_before(tmp_path: Path) -> None:
    path = tmp_path / "dense"
    collection = collection_at(path, VectorSpec(DENSE, DIM))
    collection.upsert(dense_points(0, 2 * PART_MIN + 100))
    queries = [list(map(float, v)) for v in np.random.default_rng(99).standard_normal((20, DIM))]
    exact = [collection.search(q, 10, exact=True) for q in queries]
    payloads = DocumentPayloads(
        {doc: {TEAM: "hr" if n < 3 else "it"} for n, doc in enumerate(DOCUMENTS)}, {TEAM: "keyword"}
    )
    collection.optimize(payloads)

    parts = read_parts(path)
    assert parts is not None and (parts.parts, parts.points) == (2, 2 * PART_MIN + 100)
    assert collection.count() == 2 * PART_MIN + 100
    assert [collection.search(q, 10, exact=True) for q in queries] == exact  # every vector kept
    found = sum(
        len({p for p, _ in collection.search(q, 10)} & {p for p, _ in e})
        for q, e in zip(queries, exact, strict=True)
    )
    assert found >= 0.9 * 10 * len(queries)  # the parts' graphs find what the exact search finds
    hr = DocumentScope(
        frozenset(DOCUMENTS[:3]), payload_filter=PayloadFilter((FieldTest(TEAM, strings=("hr",)),))
    )
    listed = DocumentScope(frozenset(DOCUMENTS[:3]))
    for query in queries[:5]:  # the payloads and their index came along
        assert collection.search(query, 10, scope=hr, exact=True) == collection.search(
            query, 10, scope=listed, exact=True
        )
    collection.close()
    assert segments(path) >= 3 and pool_threads(path) == 2  # two parts and the appendable segment
    shard = qe.EdgeShard.load(str(path))
    assert {"document_id", "enabled", "summary", "sections", TEAM} <= set(shard.info().payload_schema)
    shard.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dense", "dense.lock"]


def test_later_builds_keep_the_parts_until_the_shard_doubles(tmp_path: Path) -> None:
    path = tmp_path / "dense"
    collection = collection_at(path, VectorSpec(DENSE, DIM))
    collection.upsert(dense_points(0, 2 * PART_MIN))
    collection.optimize()
    first = read_parts(path)
    assert first is not None and first.points == 2 * PART_MIN
    collection.upsert(dense_points(2 * PART_MIN, 300))
    collection.optimize()  # no split; the new points join a part at most (the segments' cap)
    assert read_parts(path) == first
    collection.close()
    assert segments(path) >= 3  # the two parts are still apart, and the appendable segment
    collection = collection_at(path, VectorSpec(DENSE, DIM))
    collection.upsert(dense_points(2 * PART_MIN + 300, 2 * PART_MIN))
    collection.optimize()  # more than doubled since the split: split again
    again = read_parts(path)
    assert (
        again is not None
        and again.points == 4 * PART_MIN + 300
        and again.max_segment_kb > first.max_segment_kb
    )
    assert collection.count() == 4 * PART_MIN + 300
    collection.close()


def test_a_bm25_shard_is_split_and_scores_as_before(tmp_path: Path) -> None:
    path = tmp_path / "bm25"
    spec = VectorSpec("bm25")
    collection = collection_at(path, spec)
    rng = np.random.default_rng(3)
    points = []
    for n in range(2 * PART_MIN + 50):
        terms = sorted({int(t) for t in rng.integers(0, 300, 12)})
        values = SparseValues(terms, [float(v) for v in rng.random(len(terms)) + 0.1])
        points.append(PointData(point_id(n), values, base_payload(DOCUMENTS[n % 10], True)))
    collection.upsert(points)
    queries = [SparseValues([int(a), int(b)], [1.0, 0.5]) for a, b in rng.integers(0, 300, (10, 2))]
    before = [collection.search(q, 10) for q in queries]
    collection.optimize()
    parts = read_parts(path)
    assert parts is not None and parts.parts == 2
    after = [collection.search(q, 10) for q in queries]
    assert [[p for p, _ in hits] for hits in after] == [[p for p, _ in hits] for hits in before]
    collection.close()
    assert segments(path) >= 3


def test_a_build_killed_while_it_splits_leaves_the_shard_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "dense"
    collection = collection_at(path, VectorSpec(DENSE, DIM))
    collection.upsert(dense_points(0, 2 * PART_MIN))
    query = [1.0] * DIM
    expected = collection.search(query, 10, exact=True)
    dying = tmp_path / "dying_build.py"
    dying.write_text(_DYING_BUILD.format(directory=str(Path(edge_build.__file__).parent)), encoding="utf-8")
    monkeypatch.setattr(edge_copy, "BUILD_SCRIPT", str(dying))
    with pytest.raises(StoreError, match="optimize failed in its build process"):
        collection.optimize()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dense", "dense.lock", "dying_build.py"]
    assert collection.search(query, 10) == expected and read_parts(path) is None
    monkeypatch.undo()
    collection.optimize()  # the next build splits it
    assert read_parts(path) is not None and collection.search(query, 10, exact=True) == expected
    collection.close()


#: The build script, killed (``os._exit``) while its split has written two pages of points.
_DYING_BUILD = """
import os, sys
sys.path.insert(0, {directory!r})
import edge_build
pages = edge_build.pages
def dying(shard):
    for number, page in enumerate(pages(shard)):
        if number == 2:
            os._exit(9)
        yield page
edge_build.pages = dying
edge_build.SPLIT_PAGE = 100
edge_build.build(*sys.argv[1:4])
"""


def test_when_a_build_splits(tmp_path: Path) -> None:
    assert parts_due(tmp_path, 999, 2, 500) == 0  # under two parts of 500
    assert parts_due(tmp_path, 1000, 1, 500) == 0  # one thread: nothing read side by side
    assert parts_due(tmp_path, 1000, 2, 500) == 2 and parts_due(tmp_path, 5000, 4, 500) == 4
    (tmp_path / edge_build.PARTS_FILE).write_text('{"parts": 2, "points": 1000, "max_segment_kb": 9}')
    assert parts_due(tmp_path, 1999, 2, 500) == 0 and parts_due(tmp_path, 501, 2, 500) == 0
    assert parts_due(tmp_path, 2000, 2, 500) == 2 and parts_due(tmp_path, 1500, 3, 500) == 3
    (tmp_path / edge_build.PARTS_FILE).write_text("not json")
    assert parts_due(tmp_path, 1000, 2, 500) == 2  # an unreadable record: split again


def test_a_split_bm25_shard_weighs_a_filter_against_a_parts_records() -> None:
    """Each segment weighs what a filter admits of its own records against its bound: under the
    whole shard's, a 10% filter at a million records split in two scanned 50,000 records a part
    (10–12 ms) instead of walking the postings (4 ms)."""
    bm25 = VectorSpec("bm25")
    assert build_full_scan(bm25, None, 1_000_000) == 50_000
    assert build_full_scan(bm25, None, 1_000_000, 2) == 25_000
    assert build_full_scan(VectorSpec(DENSE, 384), None, 1_000_000, 2) == build_full_scan(
        VectorSpec(DENSE, 384), None, 1_000_000
    )
