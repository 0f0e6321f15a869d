"""Hit counts batched off the request path: they land after a flush, on a clean shutdown, and
within the stated bound when a caller outruns the flusher."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path

from flask import Flask

from tests.api.conftest import Api, context_of, make_app
from zhiku import KnowledgeBase
from zhiku.api.hit_counts import HitCounter


class Recorder:
    """A writer that keeps what it was given (and can fail once)."""

    def __init__(self, fail: int = 0) -> None:
        self.writes: list[dict[str, int]] = []
        self.fail = fail

    def __call__(self, counts: Mapping[str, int]) -> None:
        if self.fail:
            self.fail -= 1
            raise RuntimeError("database is locked")
        self.writes.append(dict(counts))


def test_counts_wait_for_a_flush_and_are_merged() -> None:
    writer = Recorder()
    counter = HitCounter(writer, interval=3600)  # not started: nothing is written until flushed
    counter.add(["a", "b"])
    counter.add(["a", "a"])  # a repeated id counts once per call
    assert writer.writes == [] and counter.pending(["a", "b", "c"]) == {"a": 2, "b": 1}
    counter.flush()
    assert writer.writes == [{"a": 2, "b": 1}] and counter.pending(["a", "b"]) == {}
    counter.flush()  # nothing pending, nothing written
    assert len(writer.writes) == 1


def test_a_full_tally_is_written_by_the_caller() -> None:
    writer = Recorder()
    counter = HitCounter(writer, interval=3600, max_pending=3)
    counter.add(["a", "b", "c"])
    counter.add(["d"])
    assert writer.writes == [{"a": 1, "b": 1, "c": 1}] and counter.pending(["d"]) == {"d": 1}


def test_a_failed_write_is_kept_for_the_next_flush() -> None:
    writer = Recorder(fail=1)
    counter = HitCounter(writer, interval=3600)
    counter.add(["a"])
    counter.flush()
    counter.add(["a"])
    counter.flush()
    assert writer.writes == [{"a": 2}]


def test_the_background_thread_writes_and_close_writes_the_rest() -> None:
    wrote = threading.Event()
    writes: list[dict[str, int]] = []

    def write(counts: Mapping[str, int]) -> None:
        writes.append(dict(counts))
        wrote.set()

    counter = HitCounter(write, interval=0.01).start()
    counter.add(["a"])
    assert wrote.wait(30)
    counter.close()
    counter.add(["b"])  # after close: still counted, written by an explicit flush
    counter.flush()
    assert writes == [{"a": 1}, {"b": 1}]


def _stored_hit_counts(kb: KnowledgeBase) -> list[int]:
    """The hit counts in the database (not those pending)."""
    (dataset,) = kb.datasets()
    return [s.hit_count for s in dataset.segment_editor().page(None, offset=0, limit=100)[0]]


def test_retrieve_counts_land_after_a_flush_and_on_shutdown(home: Path) -> None:
    app: Flask = make_app(home)
    try:
        api = Api(app.test_client(), context_of(app).keys.create(name="test")[1])
        tea = api.create_dataset()
        api.indexed_text(tea, "tea", "Longjing is a green tea from Hangzhou, brewed at 80 degrees.")
        for _ in range(2):
            records = api.post(f"/v1/datasets/{tea}/retrieve", json={"query": "Longjing"}).json["records"]
            assert len(records) == 1
        # the answer shows every hit counted so far, this one included
        assert records[0]["segment"]["hit_count"] == 2
        context_of(app).hits.flush()
        assert _stored_hit_counts(context_of(app).kb) == [2]
        api.post(f"/v1/datasets/{tea}/retrieve", json={"query": "Longjing"})
    finally:
        context_of(app).close()  # a clean shutdown writes the third count
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        assert _stored_hit_counts(kb) == [3]
