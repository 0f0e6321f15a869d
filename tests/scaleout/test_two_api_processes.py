"""Two ``zhiku serve`` processes and two ``zhiku worker`` processes on one PostgreSQL database
and one Qdrant server: threads ingest, search and add segments through both API processes at
once; afterwards no segment is lost or duplicated and every row has its points.

Runs only with ``ZHIKU_TEST_QDRANT_URL`` (a Qdrant server), ``ZHIKU_TEST_DATABASE_URL``
(PostgreSQL, see ``tests/conftest.py``) and ``ZHIKU_TEST_REDIS_URL``: the embedded stores admit
one process, so several API processes need the stores on a server.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, func, select

from tests.fixtures.embedding_server import SlowEmbeddingServer
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


def _text(marker: str) -> str:
    return "\n\n".join(f"{marker}p{p}: tea from slope {p} is rolled and roasted." for p in range(PARAGRAPHS))


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


def test_two_api_processes_and_two_workers_lose_and_duplicate_nothing(  # noqa: C901 - one scenario, its workers nested in it
    tmp_path: Path, broker_url: str
) -> None:
    if not (QDRANT_URL and os.environ.get("ZHIKU_TEST_DATABASE_URL")):
        pytest.skip(
            "needs a Qdrant server (ZHIKU_TEST_QDRANT_URL) and PostgreSQL (ZHIKU_TEST_DATABASE_URL): "
            "the embedded stores admit one process, so two API processes need shared stores"
        )
    env = celery_env(broker_url, qdrant_url=QDRANT_URL, upload_store="database", worker_lease_seconds="5")
    homes = [tmp_path / "api1", tmp_path / "api2"]
    for home in homes:
        cli(home, "init", env=env)
    key = cli(homes[0], "apikey", "create", "--name", "two-apis", env=env).strip()
    overrides = {"qdrant_url": QDRANT_URL, "task_queue": "celery", "broker_url": broker_url}
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
            total = 2 * DOCUMENTS_PER_INGESTER
            deadline = time.monotonic() + 240
            while True:
                with engine.connect() as connection:
                    completed = connection.scalar(
                        select(func.count()).where(DocumentRow.status == "completed")
                    )
                if completed == total:
                    break
                assert time.monotonic() < deadline, f"{completed} of {total} documents completed"
                time.sleep(0.2)
        finally:
            for client in clients:
                client.close()
            for child in workers:
                child.stop()
            for server in servers:
                server.stop()

    rows = segments_checked_unique(engine, dataset)
    text = "\n".join(content for *_, content in rows)
    for number in range(2):
        for n in range(DOCUMENTS_PER_INGESTER):
            for p in range(PARAGRAPHS):
                assert text.count(f"i{number}d{n}p{p}:") == 1, (number, n, p)
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
