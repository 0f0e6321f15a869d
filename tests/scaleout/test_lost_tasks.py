"""A document left ``waiting`` without a task (its server died between the commit and the send,
or the broker lost its data) is sent again by the lease reaper of a running ``zhiku serve``,
without a restart."""

from __future__ import annotations

import time
from pathlib import Path

from sqlalchemy import create_engine, select

from tests.fixtures.embedding_server import SlowEmbeddingServer
from tests.fixtures.scaleout import ServerChild, celery_env, cli, start_worker
from zhiku import KnowledgeBase
from zhiku.core.config import Settings
from zhiku.core.db.models import DocumentRow
from zhiku.knowledge_base.runtime.jobs import IndexingQueue, new_batch
from zhiku.knowledge_base.runtime.uploads import open_uploads


def test_a_waiting_document_whose_task_was_lost_is_sent_again(tmp_path: Path, broker_url: str) -> None:
    home = tmp_path / "home"
    env = celery_env(broker_url, worker_lease_seconds="3")  # the reaper passes every second
    cli(home, "init", env=env)
    with SlowEmbeddingServer(delay_s=0.05, dim=16) as embedder:
        options = {"base_url": embedder.base_url, "model": "slow", "dim": 16}
        with KnowledgeBase.open(home) as kb:
            dataset = kb.create_dataset("lost", embedding_model="openai", embedding_options=options).id
        server = ServerChild(home, env, tmp_path / "serve.log")
        worker = start_worker(home, env, tmp_path / "worker.log", "lost@%h")
        settings = Settings.load(home, task_queue="celery", broker_url=broker_url)
        engine = create_engine(settings.resolved_database_url)
        try:
            # queued as an API process does, but no task is sent: the dispatch was lost
            kb = KnowledgeBase(settings, worker=True)
            try:
                queue = IndexingQueue(kb.sessions, open_uploads(settings, kb.sessions), dispatch=None)
                text, batch = b"a stranded note about white tea", new_batch()
                document_id = queue.enqueue(dataset, "stranded", text, file_name="stranded.txt", batch=batch)
            finally:
                kb.close()
            deadline = time.monotonic() + 120
            while True:
                with engine.connect() as connection:
                    query = select(DocumentRow.status).where(DocumentRow.id == document_id)
                    status = connection.scalar(query)
                if status == "completed":
                    break
                assert time.monotonic() < deadline, f"the stranded document is still {status}"
                time.sleep(0.2)
        finally:
            worker.stop()
            server.stop()
            engine.dispose()
