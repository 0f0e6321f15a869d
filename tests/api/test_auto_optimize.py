"""Documents added through the API get their dataset's indexes built in the background: once,
after a burst, when the queue drained; after a restart too; not for a small change."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from zhiku.core.db.models import DatasetChangesRow
from zhiku.datasource.fulltext.sparse import OPTIMIZE_TOLERANCE
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex
from zhiku.knowledge_base.runtime.workers import IndexingWorkers

from .conftest import Api, context_of, make_app

TEXT = "明前龙井在清明前采摘，滋味鲜爽。\n\n碧螺春产自苏州太湖，香气浓郁。\n\n普洱茶越陈越香，适合存放。"
#: every dataset of these tests is optimized past 5 changed points, at once once settled
DUE_AT_FIVE = {"optimize_min_changes": 5, "optimize_quiet_seconds": 0}


def changes(app: Flask, dataset_id: str) -> DatasetChangesRow | None:
    with context_of(app).kb.sessions() as session:
        return session.get(DatasetChangesRow, dataset_id)


def wait_optimized(app: Flask, dataset_id: str, timeout: float = 120.0) -> DatasetChangesRow:
    deadline = time.monotonic() + timeout
    while True:
        row = changes(app, dataset_id)
        if row is not None and row.optimized_at is not None:
            return row
        assert time.monotonic() < deadline, "the dataset was not optimized"
        time.sleep(0.1)


def api_of(app: Flask) -> Api:
    _, secret = context_of(app).keys.create(name="test")
    return Api(app.test_client(), secret)


def queue_burst(home: Path, documents: int) -> tuple[str, list[str]]:
    """Queue ``documents`` documents through the API of a server that does not index them yet
    (as a burst that arrives faster than it is indexed); returns the dataset and the batches."""
    app = make_app(home, workers=False)
    try:
        api = api_of(app)
        dataset_id = api.create_dataset()
        batches = [api.add_text(dataset_id, f"tea-{n}.txt", f"第{n}篇。{TEXT}")[1] for n in range(documents)]
    finally:
        context_of(app).close()
    return dataset_id, batches


def test_a_burst_of_uploads_is_optimized_once_after_its_queue_drains(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset_id, batches = queue_burst(home, 6)
    optimized: list[str] = []
    original = DatasetIndex.optimize

    def counted(self: DatasetIndex, *args: Any, **kwargs: Any) -> bool:
        done = original(self, *args, **kwargs)
        if done:
            optimized.append(self.dataset_id)
        return done

    monkeypatch.setattr(DatasetIndex, "optimize", counted)
    app = make_app(home, **DUE_AT_FIVE)
    try:
        api = api_of(app)
        for batch in batches:
            assert [d["indexing_status"] for d in api.wait(dataset_id, batch)] == ["completed"]
        row = wait_optimized(app, dataset_id)
        assert row.points_changed == 0
        assert optimized == [dataset_id]  # once, for the whole burst
        index = context_of(app).kb.dataset_index(dataset_id)
        # every BM25 record carries the current average length: nothing left to reweight
        assert index.fulltext.reweight(tolerance=OPTIMIZE_TOLERANCE) == 0
        hits = api.post(f"/v1/datasets/{dataset_id}/retrieve", json={"query": "碧螺春"})
        assert hits.status_code == 200 and hits.json["records"], hits.json
    finally:
        context_of(app).close()


def test_changes_written_before_a_restart_are_optimized_after_it(home: Path) -> None:
    app = make_app(home, optimize_min_changes=0)  # never optimizes
    try:
        api = api_of(app)
        dataset_id = api.create_dataset()
        for n in range(6):
            api.indexed_text(dataset_id, f"tea-{n}.txt", f"第{n}篇。{TEXT}")
        row = changes(app, dataset_id)
        assert row is not None and row.points_changed >= 5 and row.optimized_at is None
    finally:
        context_of(app).close()
    app = make_app(home, **DUE_AT_FIVE)
    try:
        assert wait_optimized(app, dataset_id).points_changed == 0
    finally:
        context_of(app).close()


def test_a_small_change_does_not_trigger_one(home: Path) -> None:
    app = make_app(home, optimize_quiet_seconds=0)  # the default bound: a thousand points
    try:
        api = api_of(app)
        dataset_id = api.create_dataset()
        document_id = api.indexed_text(dataset_id, "tea.txt", TEXT)
        written = changes(app, dataset_id)
        assert written is not None and written.points_changed > 0
        response = api.delete(f"/v1/datasets/{dataset_id}/documents/{document_id}")
        assert response.json == {"result": "success"}
        workers = context_of(app).workers
        assert isinstance(workers, IndexingWorkers)
        assert workers.optimizer.run_once() == []
        row = changes(app, dataset_id)
        assert row is not None and row.optimized_at is None
        assert row.points_changed == 2 * written.points_changed  # the deleted points count too
    finally:
        context_of(app).close()
