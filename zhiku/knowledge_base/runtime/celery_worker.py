"""``zhiku worker``: a Celery worker process indexing the documents the API processes queue.

Which stores a worker writes is decided by the settings, never by the operator:

- with stores on a server (``qdrant_url``, or the ``pgvector`` backends), every process may
  write: the worker indexes the document completely, as the in-process threads do;
- with the embedded stores (single-writer shards under the data directory), the worker opens no
  store: it extracts, cleans, splits and embeds (into the embedding cache in the database) and
  hands the version to the process owning the stores (``zhiku serve``), which writes the points
  (:mod:`zhiku.knowledge_base.runtime.prepared_versions`).

A worker holds a lease on the document it runs, renewed every third of ``worker_lease_seconds``
by a heartbeat thread, which also reclaims documents whose worker died (see
:class:`~zhiku.knowledge_base.runtime.celery_queue.LeaseReaper`). A worker never recovers documents the
way ``zhiku serve`` does at start: running documents of other workers are theirs.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import threading
import uuid
from typing import Literal

from zhiku.core.config import Settings
from zhiku.core.errors import ZhikuError
from zhiku.core.memory import release_memory
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec
from zhiku.knowledge_base.knowledge_base import KnowledgeBase
from zhiku.knowledge_base.runtime.celery_queue import QUEUE, TASK, TaskSender, celery_app
from zhiku.knowledge_base.runtime.claims import Job
from zhiku.knowledge_base.runtime.jobs import IndexingQueue
from zhiku.knowledge_base.runtime.prepared_versions import PreparedVersions
from zhiku.knowledge_base.runtime.uploads import open_uploads
from zhiku.knowledge_base.runtime.worker_signals import open_signals

log = logging.getLogger(__name__)

Outcome = Literal["skipped", "handed_over", "indexed", "failed", "lost"]


class WorkerRuntime:
    """One worker process's knowledge base, claims and heartbeat; ``index`` runs one task."""

    def __init__(self, settings: Settings, sender: TaskSender, node: str | None = None) -> None:
        """``node`` is the Celery worker's name (``celery@host``): it leads the lease owner, so
        ``zhiku status`` counts a worker busy with a document (a solo worker answers no ping
        until its task ends) as alive by the leases its heartbeat renews."""
        self.settings = settings
        self.owner = f"{node or socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._kb = KnowledgeBase(settings, worker=True)
        self.queue = IndexingQueue(self._kb.sessions, open_uploads(settings, self._kb.sessions), sender)
        self._prepared = PreparedVersions(self._kb.sessions)
        self._lease = settings.worker_lease_seconds
        self._signals = open_signals(settings.broker_url, self._lease)
        self._running: set[str] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._heartbeat = threading.Thread(target=self._beat, name="zhiku-worker-heartbeat", daemon=True)
        self._heartbeat.start()

    def close(self) -> None:
        self._stopping.set()
        self._heartbeat.join(5)
        if self._signals is not None:
            self._signals.close()
        self._kb.close()

    def index(self, document_id: str) -> Outcome:
        """Claim ``document_id`` and index it (or prepare it for the store owner)."""
        job = self.queue.leases.claim_document(document_id, self.owner, self._lease)
        if job is None:
            return "skipped"  # paused, deleted, done, or another worker has it
        with self._lock:
            self._running.add(document_id)
        outcome: Outcome = "failed"
        try:
            outcome = self._run(job)
        except ZhikuError as exc:
            self.queue.fail(job.document_id, str(exc))
        except Exception as exc:  # noqa: BLE001 - one document's failure must not end the worker
            log.exception("indexing document %s failed", job.document_id)
            self.queue.fail(job.document_id, f"{type(exc).__name__}: {exc}")
        finally:
            with self._lock:
                self._running.discard(document_id)
            if outcome != "handed_over":  # a handed-over version's lease ended with the hand-over
                with self._kb.sessions.begin() as session:
                    self.queue.leases.release(session, document_id, self.owner)
            if self._signals is not None and outcome != "handed_over":  # the writer clears that one
                self._signals.clear_progress([document_id])
            release_memory()  # a large parse's freed pages go back, not kept at its peak
        return outcome

    def _run(self, job: Job) -> Outcome:
        dataset = self._kb.dataset(job.dataset_id)
        pipeline = (
            PipelineSpec.model_validate(job.process_rule).build(
                chat=dataset.chat_model, settings=self.settings
            )
            if job.process_rule
            else None
        )
        try:
            source = self.queue.source(job)
        except FileNotFoundError:
            self.queue.fail(job.document_id, "its stored upload is gone; send the file again")
            return "failed"
        signals = self._signals
        on_embedded = functools.partial(signals.set_progress, job.document_id) if signals else None
        if not self.settings.embedded_stores:
            info = dataset.index_waiting(
                job.document_id, pipeline=pipeline, source=source, on_embedded=on_embedded
            )
            log.info("indexed %s (%s): %s", info.name, info.id, info.status)
            return "indexed"
        version = dataset.prepare_waiting(job.document_id, source, pipeline=pipeline, on_embedded=on_embedded)
        if version is None:
            return "failed"  # the document says why (or it was paused or deleted)
        if not self._prepared.hand_over(self.queue, job.dataset_id, version, self.owner):
            log.warning("lost the lease on %s: another worker indexes it", job.document_id)
            return "lost"
        if signals is not None:
            signals.handed_over()
        log.info("prepared %s (%d segments) for the store owner", job.document_id, len(version.segments))
        return "handed_over"

    def _beat(self) -> None:
        while not self._stopping.wait(self._lease / 3):
            try:
                with self._lock:
                    running = list(self._running)
                for document_id in running:
                    if not self.queue.leases.renew(document_id, self.owner, self._lease):
                        log.warning("lease on %s lost", document_id)
                self.queue.leases.reclaim_expired()
            except Exception:  # noqa: BLE001 - a database hiccup must not end the heartbeat
                log.exception("worker heartbeat failed")


def run_worker(settings: Settings, *, concurrency: int = 1, name: str | None = None) -> None:
    """Run a Celery worker until it is stopped (SIGTERM: warm shutdown, the running task ends)."""
    from celery.utils.nodenames import default_nodename, host_format

    app = celery_app(settings)
    runtime = WorkerRuntime(settings, TaskSender(app), host_format(default_nodename(name)))

    @app.task(name=TASK, acks_late=True, reject_on_worker_lost=True)  # type: ignore[untyped-decorator]
    def index_document(document_id: str) -> str:
        return runtime.index(document_id)

    argv = [
        "worker",
        f"--queues={QUEUE}",
        f"--concurrency={concurrency}",
        f"--pool={'solo' if concurrency == 1 else 'threads'}",
        "--loglevel=INFO",
        "--without-gossip",
        "--without-mingle",
    ]
    if name:
        argv.append(f"--hostname={name}")
    try:
        app.worker_main(argv)
    finally:
        runtime.close()
