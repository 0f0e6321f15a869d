"""Celery workers indexing through the API: three worker processes, one SIGKILLed mid-document
five times (seeded); every document ends completed and fully served, with no duplicate segment.
Then pause, resume and delete across processes, the progress a worker reports, uploads kept in
the database, ``zhiku status``.

The embedding model is a slow OpenAI-compatible server on 127.0.0.1 (a fixed delay per batch),
so a document takes long enough to be caught mid-run, and the run stays short."""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, func, select

from tests.fixtures.embedding_server import SlowEmbeddingServer
from tests.fixtures.scaleout import Child, ServerChild, celery_env, cli, segments_checked_unique, start_worker
from zhiku import KnowledgeBase
from zhiku.core.config import Settings
from zhiku.core.db.models import DocumentJobRow, DocumentRow
from zhiku.core.document_status import IN_PROGRESS

pytestmark = pytest.mark.reliability

DOCUMENTS = 60
PARAGRAPHS = 6
KILLS = 5
SEED = 13
DIM = 32


def _text(number: int) -> str:
    return "\n\n".join(
        f"marker{number}x{p}: leaf batch {number} from garden {p} was rolled, dried and sorted by hand."
        for p in range(PARAGRAPHS)
    )


@pytest.fixture
def embedder() -> Iterator[SlowEmbeddingServer]:
    with SlowEmbeddingServer(delay_s=0.2, dim=DIM) as server:
        yield server


def _dataset(home: Path, server: SlowEmbeddingServer, name: str) -> str:
    """A dataset embedding through the slow server (made here: the API offers option-free models)."""
    options = {"base_url": server.base_url, "model": "slow", "dim": DIM, "batch_size": 2}
    with KnowledgeBase.open(home) as kb:
        return kb.create_dataset(name, embedding_model="openai", embedding_options=options).id


def _engine(home: Path) -> Engine:
    return create_engine(Settings.load(home).resolved_database_url)


def _leased_by(engine: Engine, pid: int) -> list[str]:
    with engine.connect() as connection:
        return list(
            connection.scalars(
                select(DocumentJobRow.document_id)
                .join(DocumentRow, DocumentRow.id == DocumentJobRow.document_id)
                .where(
                    DocumentJobRow.lease_owner.like(f"%:{pid}:%"),
                    DocumentRow.status.in_([str(s) for s in IN_PROGRESS]),
                )
            )
        )


def _statuses(engine: Engine, dataset_id: str) -> Counter[str]:
    with engine.connect() as connection:
        return Counter(
            dict(
                connection.execute(
                    select(DocumentRow.status, func.count())
                    .where(DocumentRow.dataset_id == dataset_id)
                    .group_by(DocumentRow.status)
                ).all()
            )
        )


def _wait_done(engine: Engine, dataset_id: str, total: int, timeout: float) -> Counter[str]:
    deadline = time.monotonic() + timeout
    while True:
        counts = _statuses(engine, dataset_id)
        if counts["completed"] + counts["error"] == total:
            return counts
        assert time.monotonic() < deadline, f"documents still running: {counts}"
        time.sleep(0.2)


def test_workers_killed_mid_document_lose_nothing(
    tmp_path: Path, broker_url: str, embedder: SlowEmbeddingServer
) -> None:
    home = tmp_path / "home"
    env = celery_env(broker_url, worker_lease_seconds="3")
    cli(home, "init", env=env)
    key = cli(home, "apikey", "create", "--name", "scaleout", env=env).strip()
    dataset = _dataset(home, embedder, "killed")
    engine = _engine(home)
    server = ServerChild(home, env, tmp_path / "serve.log")
    spawned = 0

    def worker() -> Child:
        nonlocal spawned
        spawned += 1
        return start_worker(home, env, tmp_path / f"worker{spawned}.log", f"w{spawned}@%h")

    workers = [worker() for _ in range(3)]
    rng = random.Random(SEED)
    try:
        with server.client(key) as client:
            ids = []
            for number in range(DOCUMENTS):
                created = client.post(
                    f"/datasets/{dataset}/document/create-by-text",
                    json={
                        "name": f"doc{number}",
                        "text": _text(number),
                        "process_rule": {"max_tokens": 24, "chunk_overlap": 0},
                    },
                )
                assert created.status_code == 200, created.text
                ids.append(created.json()["document"]["id"])
            killed_mid_document = 0
            for _ in range(KILLS):
                victim = rng.randrange(len(workers))
                deadline = time.monotonic() + 60
                while not _leased_by(engine, workers[victim].pid):
                    assert time.monotonic() < deadline, "the worker never ran a document"
                    time.sleep(0.02)
                time.sleep(rng.uniform(0.0, 0.1))
                killed_mid_document += bool(_leased_by(engine, workers[victim].pid))
                workers[victim].kill()
                workers[victim] = worker()
            assert killed_mid_document >= KILLS - 1  # the last instants of a document may end first

            counts = _wait_done(engine, dataset, DOCUMENTS, timeout=240)
            assert counts == Counter({"completed": DOCUMENTS}), counts
            listed = client.get(f"/datasets/{dataset}/documents?limit=100").json()["data"]
            assert {d["id"] for d in listed} == set(ids)
            assert all(d["indexing_status"] == "completed" and d["error"] is None for d in listed)
    finally:
        for child in workers:
            child.stop()
        server.stop()

    rows = segments_checked_unique(engine, dataset)
    names = {document_id: number for number, document_id in enumerate(ids)}
    by_document: dict[str, list[str]] = {}
    for _, document_id, _, content in rows:
        by_document.setdefault(document_id, []).append(content)
    for document_id, number in names.items():
        text = " ".join(by_document.get(document_id, []))
        for p in range(PARAGRAPHS):
            assert text.count(f"marker{number}x{p}:") == 1, (number, p, by_document.get(document_id))
    with KnowledgeBase.open(home) as kb:  # the store owner again: every row has its points
        index = kb.dataset_index(dataset)
        row_ids = {row[0] for row in rows}
        assert row_ids <= index.vector.ids()
        assert row_ids <= index.fulltext.ids()
        hits = kb.dataset(dataset).search("marker7x3", search_method="full_text_search", top_k=1)
        assert hits and hits[0].document_id == ids[7]


def test_pause_resume_delete_and_status_across_processes(
    tmp_path: Path, broker_url: str, embedder: SlowEmbeddingServer
) -> None:
    home = tmp_path / "home"
    env = celery_env(broker_url, upload_store="database")
    cli(home, "init", env=env)
    key = cli(home, "apikey", "create", "--name", "scaleout", env=env).strip()
    dataset = _dataset(home, embedder, "controls")
    engine = _engine(home)
    server = ServerChild(home, env, tmp_path / "serve.log")
    worker = start_worker(home, env, tmp_path / "worker.log", "solo@%h")
    long_text = "\n\n".join(f"slow paragraph {n} about oolong tea and its rolling." for n in range(60))
    try:
        with server.client(key) as client:
            batches: dict[str, str] = {}

            def add(name: str, text: str) -> str:
                created = client.post(
                    f"/datasets/{dataset}/document/create-by-text",
                    json={"name": name, "text": text, "process_rule": {"max_tokens": 16, "chunk_overlap": 0}},
                )
                assert created.status_code == 200, created.text
                document_id = str(created.json()["document"]["id"])
                batches[document_id] = created.json()["batch"]
                return document_id

            def progress_of(document_id: str) -> tuple[int, int]:
                url = f"/datasets/{dataset}/documents/{batches[document_id]}/indexing-status"
                (record,) = client.get(url).json()["data"]
                return record["completed_segments"], record["total_segments"]

            def status_of(document_id: str) -> str:
                document = client.get(f"/datasets/{dataset}/documents/{document_id}").json()
                return str(document["indexing_status"])

            running = add("long", long_text)
            queued = add("queued", "a document deleted before any worker reaches it")
            deadline = time.monotonic() + 60
            while not _leased_by(engine, worker.pid):
                assert time.monotonic() < deadline
                time.sleep(0.02)
            # the worker reports its embedding progress, as the in-process threads do
            deadline = time.monotonic() + 60
            while not 0 < (progress := progress_of(running))[0] < progress[1]:
                assert time.monotonic() < deadline, progress
                time.sleep(0.05)
            document_url = f"/datasets/{dataset}/documents/{running}"
            assert client.patch(f"{document_url}/processing/pause").status_code == 200
            assert client.delete(f"/datasets/{dataset}/documents/{queued}").status_code == 200
            time.sleep(2)  # the worker stops at its next checkpoint
            assert status_of(running) == "paused"
            assert _leased_by(engine, worker.pid) == []
            deadline = time.monotonic() + 60  # the worker ends the embedding batch it is in, then
            while progress_of(running) != (0, 0):  # drops the stopped run's progress
                assert time.monotonic() < deadline, progress_of(running)
                time.sleep(0.1)

            # a generous ping: on a loaded machine a worker answers in more than a second; the
            # deleted document's task leaves the queue once the worker has taken it (a no-op)
            deadline = time.monotonic() + 60
            while True:
                report = json.loads(cli(home, "status", "--json", "--ping-timeout", "5", env=env))
                if report["queue_depth"] == 0 or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            assert report["task_queue"] == "celery"
            assert len(report["workers_alive"]) == 1 and report["queue_depth"] == 0
            assert report["documents"] == {"paused": 1}

            assert client.patch(f"{document_url}/processing/resume").status_code == 200
            deadline = time.monotonic() + 120
            while status_of(running) != "completed":
                assert time.monotonic() < deadline, status_of(running)
                time.sleep(0.2)
            segments = client.get(f"/datasets/{dataset}/documents/{running}/segments?limit=100").json()
            assert segments["total"] > 10
            assert progress_of(running) == (segments["total"], segments["total"])
            assert client.get(f"/datasets/{dataset}/documents/{queued}").status_code == 404
            text = cli(home, "status", env=env)
            assert "workers alive: 1" in text and "documents: completed 1" in text
    finally:
        worker.stop()
        server.stop()
        engine.dispose()
