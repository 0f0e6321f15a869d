"""Two ``zhiku serve`` processes and two ``zhiku worker`` processes on shared stores: threads
ingest, search and add segments through both API processes at once; then one API process and
one worker are killed (SIGKILL) while documents are indexing. Afterwards no segment is lost or
duplicated and every row has its points.

Two deployments: PostgreSQL with pgvector for everything (metadata, keyword postings, locks,
vectors, BM25; the test run's pgvector server, ``tests/fixtures/pgvector.py``), and PostgreSQL
(``ZHIKU_TEST_DATABASE_URL``) beside a Qdrant server (``ZHIKU_TEST_QDRANT_URL``, skipped
without one). Both need ``ZHIKU_TEST_REDIS_URL`` (``make test-scaleout`` starts a Redis).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from sqlalchemy import Engine, create_engine, select

from tests.fixtures.embedding_server import SlowEmbeddingServer
from tests.fixtures.pgvector import all_on_pgvector, new_schema
from tests.fixtures.scaleout import Child, ServerChild, celery_env, cli, segments_checked_unique, start_worker
from zhiku import KnowledgeBase
from zhiku.core.config import Settings
from zhiku.core.db.models import DocumentRow

pytestmark = pytest.mark.reliability

QDRANT_URL = os.environ.get("ZHIKU_TEST_QDRANT_URL")
DIM = 32
DOCUMENTS_PER_INGESTER = 10
PARAGRAPHS = 5
ADDS_PER_EDITOR = 15
SEARCHES_PER_SEARCHER = 30
#: documents sent just before one API process and one worker are killed
KILLED_BATCH = 6


def _text(marker: str) -> str:
    return "\n\n".join(f"{marker}p{p}: tea from slope {p} is rolled and roasted." for p in range(PARAGRAPHS))


def _wait_completed(engine: Engine, total: int) -> None:
    """Until ``total`` documents are completed (failing at once on one that ended in error)."""
    deadline = time.monotonic() + 240
    while True:
        with engine.connect() as connection:
            statuses = connection.execute(select(DocumentRow.status, DocumentRow.error)).all()
        assert not [error for status, error in statuses if status == "error"], statuses
        completed = sum(status == "completed" for status, _ in statuses)
        if completed == total:
            return
        assert time.monotonic() < deadline, f"{completed} of {total} documents completed: {statuses}"
        time.sleep(0.2)


def _run_all(work: list[Callable[[], None]], timeout: float) -> None:
    errors: list[BaseException] = []

    def guarded(job: Callable[[], None]) -> None:
        try:
            job()
        except BaseException as exc:  # noqa: BLE001 - reported below, with the others
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(job,), daemon=True) for job in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
        assert not thread.is_alive(), "a thread did not finish in time"
    assert not errors, errors


@pytest.fixture(params=["pgvector", "qdrant"])
def shared_stores(request: pytest.FixtureRequest) -> dict[str, str]:
    """Settings putting metadata and stores where every process reaches them: PostgreSQL with
    pgvector for all of it, or PostgreSQL beside a Qdrant server."""
    if request.param == "pgvector":
        return all_on_pgvector(new_schema(request.getfixturevalue("pgvector_server")))
    if not (QDRANT_URL and os.environ.get("ZHIKU_TEST_DATABASE_URL")):
        pytest.skip(
            "needs a Qdrant server (ZHIKU_TEST_QDRANT_URL) and PostgreSQL (ZHIKU_TEST_DATABASE_URL): "
            "the embedded stores admit one process, so two API processes need shared stores"
        )
    return {"qdrant_url": QDRANT_URL}


def test_two_api_processes_and_two_workers_lose_and_duplicate_nothing(  # noqa: C901 - one scenario, its workers nested in it
    tmp_path: Path, broker_url: str, shared_stores: dict[str, str]
) -> None:
    env = celery_env(broker_url, upload_store="database", worker_lease_seconds="5", **shared_stores)
    homes = [tmp_path / "api1", tmp_path / "api2"]
    for home in homes:
        cli(home, "init", env=env)
    key = cli(homes[0], "apikey", "create", "--name", "two-apis", env=env).strip()
    overrides = {**shared_stores, "task_queue": "celery", "broker_url": broker_url}
    with SlowEmbeddingServer(delay_s=0.05, dim=DIM) as embedder:
        options = {"base_url": embedder.base_url, "model": "slow", "dim": DIM, "batch_size": 4}
        with KnowledgeBase.open(homes[0], **overrides) as kb:
            dataset = kb.create_dataset("shared", embedding_model="openai", embedding_options=options).id
        servers = [ServerChild(home, env, tmp_path / f"{home.name}.log") for home in homes]
        workers = [start_worker(homes[n], env, tmp_path / f"worker{n}.log", f"two{n}@%h") for n in range(2)]
        clients = [server.client(key) for server in servers]
        added: list[str] = []
        lock = threading.Lock()

        def ingester(number: int) -> Callable[[], None]:
            def run() -> None:
                for n in range(DOCUMENTS_PER_INGESTER):
                    client = clients[(number + n) % 2]  # spread over both API processes
                    response = client.post(
                        f"/datasets/{dataset}/document/create-by-text",
                        json={
                            "name": f"i{number}d{n}",
                            "text": _text(f"i{number}d{n}"),
                            "process_rule": {"max_tokens": 24, "chunk_overlap": 0},
                        },
                    )
                    assert response.status_code == 200, response.text

            return run

        def searcher(number: int) -> Callable[[], None]:
            def run() -> None:
                for n in range(SEARCHES_PER_SEARCHER):
                    response = clients[(number + n) % 2].post(
                        f"/datasets/{dataset}/retrieve", json={"query": f"tea slope {n % PARAGRAPHS}"}
                    )
                    assert response.status_code == 200, response.text

            return run

        def editor(number: int) -> Callable[[], None]:
            def run() -> None:
                done = 0
                deadline = time.monotonic() + 240
                while done < ADDS_PER_EDITOR:
                    assert time.monotonic() < deadline, f"editor {number} added {done} segments"
                    client = clients[(number + done) % 2]
                    listed = client.get(f"/datasets/{dataset}/documents?limit=100").json()["data"]
                    failed = [d["error"] for d in listed if d["indexing_status"] == "error"]
                    assert not failed, failed
                    ready = [d["id"] for d in listed if d["indexing_status"] == "completed"]
                    if not ready:
                        time.sleep(0.2)
                        continue
                    marker = f"e{number}s{done}"
                    response = client.post(
                        f"/datasets/{dataset}/documents/{ready[done % len(ready)]}/segments",
                        json={"segments": [{"content": f"{marker}: an added note on roasting."}]},
                    )
                    if response.status_code == 200:
                        with lock:
                            added.append(marker)
                        done += 1
                    else:  # re-queued meanwhile (another process's edit): any other answer is wrong
                        assert response.json()["code"] == "document_indexing", response.text

            return run

        settings = Settings.load(homes[0], **overrides)
        engine = create_engine(settings.resolved_database_url)
        try:
            _run_all([ingester(0), ingester(1), searcher(0), searcher(1), editor(0), editor(1)], timeout=300)
            _wait_completed(engine, 2 * DOCUMENTS_PER_INGESTER)
            # kill -9 one API process and one worker while documents it accepted are indexing: the
            # other processes finish them (a dead worker's lease runs out and its document is
            # queued again), and the surviving API process keeps serving
            for n in range(KILLED_BATCH):
                response = clients[0].post(
                    f"/datasets/{dataset}/document/create-by-text",
                    json={"name": f"k{n}", "text": _text(f"k{n}"), "process_rule": {"max_tokens": 24}},
                )
                assert response.status_code == 200, response.text
            workers[0].kill()
            servers[0].kill()
            _wait_completed(engine, 2 * DOCUMENTS_PER_INGESTER + KILLED_BATCH)
            found = clients[1].post(f"/datasets/{dataset}/retrieve", json={"query": "k0p1 tea slope 1"})
            assert found.status_code == 200, found.text
        finally:
            for client in clients:
                client.close()
            for child in [*workers, *servers]:
                child.stop()

    rows = segments_checked_unique(engine, dataset)
    text = "\n".join(content for *_, content in rows)
    markers = [f"i{number}d{n}" for number in range(2) for n in range(DOCUMENTS_PER_INGESTER)]
    for marker in [*markers, *(f"k{n}" for n in range(KILLED_BATCH))]:
        for p in range(PARAGRAPHS):
            assert text.count(f"{marker}p{p}:") == 1, (marker, p)
    assert len(added) == 2 * ADDS_PER_EDITOR
    for marker in added:
        assert text.count(f"{marker}:") == 1, marker
    with KnowledgeBase.open(homes[0], **overrides) as kb:
        index = kb.dataset_index(dataset)
        row_ids = {row[0] for row in rows}
        assert row_ids <= index.vector.ids()
        assert row_ids <= index.fulltext.ids()


def test_without_shared_stores_a_second_api_process_is_refused(tmp_path: Path, broker_url: str) -> None:
    """The embedded stores admit one process: a second ``zhiku serve`` on the same data directory
    stops at once, saying why, instead of serving beside the owner."""
    home = tmp_path / "home"
    env = celery_env(broker_url)
    cli(home, "init", env=env)
    first = ServerChild(home, env, tmp_path / "first.log")
    try:
        with httpx.Client(base_url=first.url, timeout=30) as client:
            assert client.get("/datasets").status_code == 401  # serving, and asking for a key
        second = Child(home, ["serve", "--host", "127.0.0.1", "--port", "0"], env, tmp_path / "second.log")
        assert second.process.wait(timeout=120) != 0
        second.stop()
        assert "already served by another zhiku process" in second.log.read_text()
    finally:
        first.stop()
