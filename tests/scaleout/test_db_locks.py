"""Several processes on one PostgreSQL database: the dataset write lock and recovery hold across
them. Each process opens its own data directory (its own owner lock and embedded stores) on the
same database schema, as API servers on several machines sharing one database do."""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterator
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, func, select, update

from tests.conftest import PostgresRun
from zhiku import KnowledgeBase
from zhiku.core.db import DocumentRow
from zhiku.core.db.models import SegmentRow
from zhiku.core.errors import NotFound
from zhiku.knowledge_base.indexing.segments import NewSegment
from zhiku.knowledge_base.runtime.db_locks import try_lock
from zhiku.knowledge_base.runtime.jobs import IndexingQueue
from zhiku.knowledge_base.runtime.uploads import DatabaseUploads

SPAWN = multiprocessing.get_context("spawn")  # a fresh interpreter, as another server would be
ADDS = 15


@pytest.fixture
def pg_url(postgres_run: PostgresRun | None) -> Iterator[str]:
    if postgres_run is None:
        pytest.skip("locks across processes need PostgreSQL: set ZHIKU_TEST_DATABASE_URL")
    yield postgres_run.new_schema()


def _open(home: Path, url: str) -> KnowledgeBase:
    return KnowledgeBase.open(home, database_url=url, embedding_model="use", upload_store="database")


def _run(target: Any, *args: Any, count: int = 2) -> None:
    """Start ``count`` processes on ``target(number, go, ...)``, let them go together once all are
    ready, and fail unless each exits cleanly within the time limit."""
    go = SPAWN.Event()
    ready = SPAWN.Queue()
    children = [SPAWN.Process(target=target, args=(n, go, ready, *args)) for n in range(count)]
    for child in children:
        child.start()
    try:
        for _ in children:
            ready.get(timeout=120)
        go.set()
        for child in children:
            child.join(timeout=180)
        assert [child.exitcode for child in children] == [0] * count
    finally:
        for child in children:
            if child.is_alive():
                child.kill()
                child.join()


def _adder(number: int, go: Event, ready: Any, home: str, url: str, document_id: str) -> None:
    with _open(Path(home) / f"adder{number}", url) as kb:
        editor = kb.dataset("d").segment_editor()
        kb.dataset_index(kb.dataset("d").id)  # stores opened before the race
        ready.put(number)
        go.wait(60)
        for i in range(ADDS):
            editor.add(document_id, [NewSegment(f"process {number} adds segment {i} about oolong tea.")])


def test_two_processes_adding_segments_take_distinct_positions(tmp_path: Path, pg_url: str) -> None:
    with _open(tmp_path / "home", pg_url) as kb:
        ds = kb.create_dataset("d")
        doc = ds.add_text("a.txt", "Longjing is a green tea from Hangzhou.")
        assert doc.status == "completed"
        before = len(ds.segments(doc.id))
    _run(_adder, str(tmp_path), pg_url, doc.id)
    with _open(tmp_path / "home", pg_url) as kb, kb.sessions() as session:
        positions = list(session.scalars(select(SegmentRow.position).where(SegmentRow.document_id == doc.id)))
        counted = session.scalar(select(DocumentRow.segment_count).where(DocumentRow.id == doc.id))
    assert len(positions) == before + 2 * ADDS
    assert sorted(positions) == list(range(before + 2 * ADDS))  # no two at one position, no gap
    assert counted == len(positions)


def _editor(number: int, go: Event, ready: Any, home: str, url: str, document_id: str) -> None:
    """Process 0 edits the document's segments until it is gone; process 1 deletes it meanwhile.
    An edit either lands before the delete or finds the document gone: never a failed write."""
    with _open(Path(home) / f"editor{number}", url) as kb:
        ds = kb.dataset("d")
        editor = ds.segment_editor()
        ids = [s.id for s in ds.segments(document_id)]
        kb.dataset_index(ds.id)
        ready.put(number)
        go.wait(60)
        if number == 1:
            time.sleep(1.0)
            ds.delete_document(document_id)
            return
        deadline = time.monotonic() + 60
        for i in range(10_000):
            if time.monotonic() > deadline:
                raise AssertionError("the document was never deleted")
            try:
                editor.update(document_id, ids[i % len(ids)], content=f"edit {i}: pu-erh tea from Yunnan.")
            except NotFound:
                return


def test_an_edit_racing_a_delete_in_another_process_is_consistent(tmp_path: Path, pg_url: str) -> None:
    text = "\n\n".join(f"Paragraph {i} about white tea from Fujian and its silver needles." for i in range(8))
    with _open(tmp_path / "home", pg_url) as kb:
        ds = kb.create_dataset("d")
        doc = ds.add_text("a.txt", text)
        assert doc.status == "completed"
    _run(_editor, str(tmp_path), pg_url, doc.id)
    with _open(tmp_path / "home", pg_url) as kb, kb.sessions() as session:
        assert session.get(DocumentRow, doc.id) is None
        assert session.scalar(select(func.count()).where(SegmentRow.document_id == doc.id)) == 0


def _recoverer(number: int, go: Event, ready: Any, home: str, url: str, found: Any) -> None:
    ready.put(number)
    go.wait(60)
    with _open(Path(home) / f"server{number}", url) as kb:
        found.put(list(kb.recovered))


def _interrupted(kb: KnowledgeBase, count: int) -> list[str]:
    """``count`` documents queued through the API and caught mid-ingest by a crash."""
    ds = kb.create_dataset("d")
    queue = IndexingQueue(kb.sessions, DatabaseUploads(kb.sessions))
    ids = [
        queue.enqueue(ds.id, f"{i}.txt", f"Tea {i}.".encode(), file_name=f"{i}.txt", batch="b")
        for i in range(count)
    ]
    with kb.sessions.begin() as session:
        session.execute(update(DocumentRow).where(DocumentRow.id.in_(ids)).values(status="parsing"))
    return ids


def test_two_servers_starting_at_once_requeue_each_interrupted_document_once(
    tmp_path: Path, pg_url: str
) -> None:
    with _open(tmp_path / "home", pg_url) as kb:
        ids = _interrupted(kb, 6)
    found = SPAWN.Queue()
    _run(_recoverer, str(tmp_path), pg_url, found)
    recovered = [found.get(timeout=10), found.get(timeout=10)]
    assert sorted(recovered[0] + recovered[1]) == sorted(ids)  # each once, by one of them
    assert [] in recovered


def test_a_server_joining_a_running_one_leaves_its_documents_alone(tmp_path: Path, pg_url: str) -> None:
    """Documents running in another live server's threads look interrupted from the outside:
    requeueing them would index them twice."""
    with _open(tmp_path / "first", pg_url) as first:
        ids = _interrupted(first, 3)  # as if ``first`` were indexing them in its threads
        with _open(tmp_path / "second", pg_url) as second:
            assert second.recovered == []
            with second.sessions() as session:
                statuses = set(session.scalars(select(DocumentRow.status).where(DocumentRow.id.in_(ids))))
            assert statuses == {"parsing"}
    with _open(tmp_path / "third", pg_url) as third:  # alone again: the crash case
        assert sorted(third.recovered) == sorted(ids)


def test_one_process_at_a_time_optimizes_a_dataset(pg_url: str) -> None:
    """Two processes' optimizers: the second one's try for the same dataset fails at once, its
    try for another dataset succeeds, and the lock is free again after the first one's build."""
    first, second = create_engine(pg_url), create_engine(pg_url)  # two sessions, as two processes
    try:
        with try_lock(first, "optimize:d1") as taken:
            assert taken
            with try_lock(second, "optimize:d1") as also:
                assert not also
            with try_lock(second, "optimize:d2") as other:
                assert other
        with try_lock(second, "optimize:d1") as after:
            assert after
    finally:
        first.dispose()
        second.dispose()
