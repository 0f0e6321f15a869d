"""The queries whose SQL or locking differs between databases, on the run's backend (SQLite, or
PostgreSQL under ``ZHIKU_TEST_DATABASE_URL``): keyword scoring, embedding-cache inserts that may
collide, job claims from competing workers, time zones and NUL characters.

Each writer thread has an engine of its own, as separate processes would.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db import DatasetRow, DocumentRow, SegmentRow, make_engine, make_session_factory
from zhiku.core.db.models import EmbeddingCacheRow
from zhiku.datasource.keyword import KeywordStore
from zhiku.datasource.keyword.store import bm25_idf
from zhiku.knowledge_base.indexing.embedding_cache import DatabaseEmbeddingCache
from zhiku.knowledge_base.runtime.claims import Job
from zhiku.knowledge_base.runtime.jobs import IndexingQueue
from zhiku.knowledge_base.runtime.uploads import Uploads
from zhiku.text.tokenizer import Tokenizer

WRITERS = 4


@pytest.fixture
def engines(database_url: str) -> Iterator[Callable[[], Engine]]:
    """Makes engines on the test's database; all are disposed at the end."""
    made: list[Engine] = []

    def make() -> Engine:
        made.append(make_engine(database_url))
        return made[-1]

    yield make
    for engine in made:
        engine.dispose()


def _run_together(work: Callable[[int], None], count: int = WRITERS) -> None:
    """Run ``work(0..count-1)`` in threads released at once; re-raise the first failure."""
    start = threading.Barrier(count)
    errors: list[BaseException] = []

    def run(number: int) -> None:
        start.wait()
        try:
            work(number)
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(number,)) for number in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    if errors:
        raise errors[0]


def _dataset_with_document(sessions: sessionmaker[Session]) -> None:
    with sessions.begin() as session:
        session.add(DatasetRow(id="d1", name="d1", embedding_model="x", embedding_dim=1))
        session.flush()
        session.add(DocumentRow(id="doc", dataset_id="d1", name="doc"))


def test_keyword_scores_are_weight_times_dataset_idf_summed(engines: Callable[[], Engine]) -> None:
    sessions = make_session_factory(engines())
    _dataset_with_document(sessions)
    postings = {
        "s1": [("乌龙茶", 0.5), ("安溪", 0.25)],
        "s2": [("乌龙茶", 0.125)],
        "s3": [("绿茶", 1.0)],
    }
    store = KeywordStore(sessions, "d1", Tokenizer())
    with sessions.begin() as session:
        for position, segment in enumerate(postings):
            session.add(
                SegmentRow(
                    id=segment, dataset_id="d1", document_id="doc", position=position, content="", hash=""
                )
            )
        session.flush()
        store.add(session, postings.items())
    hits = store.search("安溪 乌龙茶", limit=5)
    assert [segment for segment, _ in hits] == ["s1", "s2"]
    # the rarity is the dataset's own: 乌龙茶 in 2 of its 3 segments, 安溪 in 1
    assert hits[0][1] == pytest.approx(0.5 * bm25_idf(3, 2) + 0.25 * bm25_idf(3, 1))
    assert hits[1][1] == pytest.approx(0.125 * bm25_idf(3, 2))


def test_concurrent_cache_writers_of_the_same_vectors_do_not_collide(engines: Callable[[], Engine]) -> None:
    caches = [DatabaseEmbeddingCache(make_session_factory(engines())) for _ in range(WRITERS)]
    vectors = {f"{number:064x}": np.full(4, number, dtype=np.float32) for number in range(300)}

    def write(number: int) -> None:
        keys = list(vectors)
        random.Random(number).shuffle(keys)
        for start in range(0, len(keys), 60):
            caches[number].put_many("m", {key: vectors[key] for key in keys[start : start + 90]})

    _run_together(write)
    found = caches[0].get_many("m", list(vectors))
    assert set(found) == set(vectors)
    assert all(np.array_equal(found[key], vector) for key, vector in vectors.items())
    with make_session_factory(engines())() as session:
        assert session.scalar(select(func.count()).select_from(EmbeddingCacheRow)) == len(vectors)


def test_competing_workers_claim_each_queued_document_once(
    engines: Callable[[], Engine], tmp_path: Path
) -> None:
    sessions = make_session_factory(engines())
    _dataset_with_document(sessions)
    uploads = Uploads(tmp_path / "uploads")
    queued = {
        IndexingQueue(sessions, uploads).enqueue("d1", f"{n}.txt", b"text", file_name=f"{n}.txt", batch="b")
        for n in range(40)
    }
    queues = [IndexingQueue(make_session_factory(engines()), uploads) for _ in range(WRITERS)]
    claimed: list[list[Job]] = [[] for _ in range(WRITERS)]

    def claim_all(number: int) -> None:
        while (job := queues[number].claim()) is not None:
            claimed[number].append(job)

    _run_together(claim_all)
    ids = [job.document_id for jobs in claimed for job in jobs]
    assert sorted(ids) == sorted(queued)
    with sessions() as session:
        statuses = set(session.scalars(select(DocumentRow.status).where(DocumentRow.id.in_(ids))))
    assert statuses == {"parsing"}


def test_times_come_back_as_the_same_instant(engines: Callable[[], Engine]) -> None:
    sessions = make_session_factory(engines())
    when = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)
    with sessions.begin() as session:
        session.add(DatasetRow(id="d1", name="d1", embedding_model="x", embedding_dim=1, created_at=when))
    with sessions() as session:
        stored = session.get_one(DatasetRow, "d1").created_at
    # SQLite keeps no zone (the value is UTC); PostgreSQL returns an aware time
    assert (stored if stored.tzinfo else stored.replace(tzinfo=UTC)) == when


def test_strings_with_nul_characters_are_stored_and_found(engines: Callable[[], Engine]) -> None:
    # PostgreSQL text cannot hold NUL: zhiku drops it there, on the way in and in lookups alike
    sessions = make_session_factory(engines())
    with sessions.begin() as session:
        session.add(DatasetRow(id="d\x001", name="tea\x00 garden", embedding_model="x", embedding_dim=1))
    with sessions() as session:
        found = session.scalars(select(DatasetRow).where(DatasetRow.name == "tea\x00 garden")).one()
        assert session.get(DatasetRow, "d\x001") is found
    assert found.name.replace("\x00", "") == "tea garden"
