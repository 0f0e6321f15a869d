"""Documents a Celery worker indexed (on the embedded stores: handed over to ``zhiku serve``,
which writes them) get their dataset optimized by the server once the queue drained."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select

from tests.fixtures.embedding_server import SlowEmbeddingServer
from tests.fixtures.scaleout import ServerChild, celery_env, cli, start_worker
from zhiku import KnowledgeBase
from zhiku.core.config import Settings
from zhiku.core.db.models import DatasetChangesRow, DocumentRow

pytestmark = pytest.mark.reliability

DOCUMENTS = 8
DIM = 32


def test_documents_a_worker_indexed_are_optimized_by_the_store_owner(tmp_path: Path, broker_url: str) -> None:
    home = tmp_path / "home"
    env = celery_env(broker_url, optimize_min_changes="5", optimize_quiet_seconds="0")
    cli(home, "init", env=env)
    key = cli(home, "apikey", "create", "--name", "scaleout", env=env).strip()
    with SlowEmbeddingServer(delay_s=0.01, dim=DIM) as embedder:
        options = {"base_url": embedder.base_url, "model": "slow", "dim": DIM, "batch_size": 8}
        with KnowledgeBase.open(home) as kb:
            dataset = kb.create_dataset("handed", embedding_model="openai", embedding_options=options).id
        engine = create_engine(Settings.load(home).resolved_database_url)
        server = ServerChild(home, env, tmp_path / "serve.log")
        worker = None
        try:
            with server.client(key) as client:  # all queued before a worker starts: one burst
                for number in range(DOCUMENTS):
                    created = client.post(
                        f"/datasets/{dataset}/document/create-by-text",
                        json={"name": f"doc{number}", "text": f"leaf batch {number} was rolled and dried."},
                    )
                    assert created.status_code == 200, created.text
            worker = start_worker(home, env, tmp_path / "worker.log", "solo@%h")
            deadline = time.monotonic() + 180
            while True:
                with engine.connect() as connection:
                    statuses = list(connection.scalars(select(DocumentRow.status)))
                    changes = connection.execute(
                        select(DatasetChangesRow.points_changed, DatasetChangesRow.optimized_at).where(
                            DatasetChangesRow.dataset_id == dataset
                        )
                    ).first()
                if changes is not None and changes.optimized_at is not None:
                    break
                assert time.monotonic() < deadline, (statuses, changes)
                time.sleep(0.2)
            assert statuses == ["completed"] * DOCUMENTS
            assert changes.points_changed == 0
        finally:
            if worker is not None:
                worker.stop()
            server.stop()
            engine.dispose()
