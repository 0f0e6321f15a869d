"""``zhiku status`` counts a Celery worker busy with a long document as alive.

A solo worker answers no ping while its task runs; its heartbeat thread keeps renewing the lease
on the document it runs, and a lease not yet run out says the worker is alive. The broker is
not needed: its two answers (queue depth, ping replies) are given here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from zhiku import KnowledgeBase
from zhiku.core.db.models import DocumentJobRow
from zhiku.knowledge_base.runtime import celery_queue
from zhiku.knowledge_base.runtime.celery_queue import TaskSender, celery_app
from zhiku.knowledge_base.runtime.celery_worker import WorkerRuntime
from zhiku.knowledge_base.runtime.jobs import IndexingQueue, new_batch
from zhiku.knowledge_base.runtime.queue_status import queue_status
from zhiku.knowledge_base.runtime.uploads import open_uploads

BROKER = "redis://127.0.0.1:9/0"  # never connected to: the broker's answers are patched


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[KnowledgeBase]:
    monkeypatch.setattr(celery_queue, "queue_depth", lambda app: 0)
    monkeypatch.setattr(celery_queue, "workers_alive", lambda app, timeout=1.0: ["idle@host"])
    with KnowledgeBase.open(tmp_path / "home", task_queue="celery", broker_url=BROKER) as opened:
        yield opened


def _running_document(kb: KnowledgeBase, owner: str, lease_seconds: float) -> str:
    jobs = IndexingQueue(kb.sessions, open_uploads(kb.settings, kb.sessions))
    dataset = kb.create_dataset("tea", embedding_model="synthetic")
    document_id = jobs.enqueue(dataset.id, "notes", b"oolong", file_name="notes.txt", batch=new_batch())
    assert jobs.leases.claim_document(document_id, owner, lease_seconds) is not None
    return document_id


def test_a_worker_busy_with_a_document_is_alive(kb: KnowledgeBase) -> None:
    import zhiku.benchmarking  # noqa: F401 - registers the "synthetic" embedding model

    _running_document(kb, "busy@host:4242:0badcafe", 60)
    report = queue_status(kb)
    # the busy worker did not answer the ping; its live lease counts it
    assert report.workers_alive == ["busy@host", "idle@host"]
    assert report.running == {"busy@host:4242:0badcafe": 1}


def test_a_lease_run_out_does_not_count(kb: KnowledgeBase) -> None:
    import zhiku.benchmarking  # noqa: F401

    document_id = _running_document(kb, "gone@host:4242:0badcafe", 60)
    with kb.sessions.begin() as session:
        job = session.get(DocumentJobRow, document_id)
        assert job is not None and job.lease_until is not None
        job.lease_until = job.lease_until.replace(year=2000)
    assert queue_status(kb).workers_alive == ["idle@host"]


def test_a_worker_leases_under_its_celery_name(tmp_path: Path) -> None:
    from zhiku.core.config import Settings

    settings = Settings.load(tmp_path / "home", task_queue="celery", broker_url=BROKER)
    with KnowledgeBase(settings):
        pass  # created and migrated, as ``zhiku init`` leaves it
    runtime = WorkerRuntime(settings, TaskSender(celery_app(settings)), "solo@host")
    try:
        assert runtime.owner.startswith("solo@host:")
    finally:
        runtime.close()


def test_status_names_the_datasets_whose_index_build_is_pending(tmp_path: Path) -> None:
    """Points written since a dataset's last optimize are the background optimize's work to do."""
    import zhiku.benchmarking  # noqa: F401

    with KnowledgeBase.open(tmp_path / "home") as kb:
        tea = kb.create_dataset("tea", embedding_model="synthetic")
        kb.create_dataset("empty", embedding_model="synthetic")
        tea.add_text("notes.txt", "Oolong is rolled.\n\nGreen tea is steamed or pan-fired.")
        pending = queue_status(kb).unoptimized
        assert list(pending) == ["tea"] and pending["tea"] > 0
        tea.optimize()
        assert queue_status(kb).unoptimized == {}
