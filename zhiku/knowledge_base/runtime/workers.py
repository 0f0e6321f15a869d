"""The indexing worker pool: threads that claim queued documents and index them.

Threads, not processes: the embedded stores admit one process, and the
embedding models release the GIL while they compute. Each thread claims a document from the
database (:meth:`IndexingQueue.claim`), runs extract → clean → split → index through the facade,
and goes back for the next; it sleeps until woken by a new upload or a short poll interval.

Each run is cancellable from here: a pause stops the paused document's run at its next
checkpoint, and :meth:`IndexingWorkers.stop` (the server stopping) cancels every run, so the
threads end within about a second and their documents are queued again for the next start.

Beside them runs the background optimize (:mod:`zhiku.knowledge_base.runtime.auto_optimize`),
woken each time a document is done: a dataset whose indexing settled gets its indexes built.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from zhiku.core.cancellation import CancelToken, cancellable
from zhiku.core.errors import Cancelled, ZhikuError
from zhiku.core.memory import release_memory
from zhiku.extractors.parse_process import stop_children
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec
from zhiku.knowledge_base.runtime.auto_optimize import AutoOptimizer
from zhiku.knowledge_base.runtime.claims import Job
from zhiku.knowledge_base.runtime.jobs import IndexingQueue

if TYPE_CHECKING:
    from zhiku.knowledge_base.knowledge_base import KnowledgeBase

log = logging.getLogger(__name__)

#: Why a run was cancelled by :meth:`IndexingWorkers.stop`.
STOPPING = "the indexing workers are stopping; the document is queued again"


class IndexingWorkers:
    """``count`` threads indexing queued documents until :meth:`stop`."""

    def __init__(
        self, kb: KnowledgeBase, queue: IndexingQueue, count: int, *, poll_seconds: float = 2.0
    ) -> None:
        self._kb = kb
        self._queue = queue
        self._count = count
        self._poll_seconds = poll_seconds
        self._threads: list[threading.Thread] = []
        self._stopping = threading.Event()
        self._wake = threading.Condition()
        self._lock = threading.Lock()
        self._running: set[str] = set()
        #: the cancel token of each running document's run
        self._tokens: dict[str, CancelToken] = {}
        self._progress: dict[str, tuple[int, int]] = {}
        self.optimizer = AutoOptimizer(kb)
        queue.on_stop(self.cancel)

    def start(self) -> None:
        for number in range(self._count):
            thread = threading.Thread(target=self._run, name=f"zhiku-indexer-{number}", daemon=True)
            thread.start()
            self._threads.append(thread)
        self.optimizer.start()

    def wake(self) -> None:
        """Tell the idle threads that a document was queued."""
        with self._wake:
            self._wake.notify_all()

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop claiming and cancel the running documents' runs (they stop at their next
        checkpoint and are queued again); wait up to ``timeout`` seconds in all for the threads.
        True if all ended. A document still running when the process exits anyway (a step
        without checkpoints) is queued again at the next start."""
        self._stopping.set()
        with self._lock:
            tokens = list(self._tokens.values())
        for token in tokens:
            token.cancel(STOPPING)
        self.wake()
        deadline = time.monotonic() + timeout
        optimizer_stopped = self.optimizer.stop(timeout)  # its build is killed at once
        # a thread parsing stops as soon as its child is gone; an idle one's child goes too
        stop_children(thread.ident for thread in self._threads)
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return optimizer_stopped and not any(thread.is_alive() for thread in self._threads)

    def cancel(self, document_id: str, reason: str = "paused") -> None:
        """Stop this document's run, if one runs here, at its next checkpoint."""
        with self._lock:
            token = self._tokens.get(document_id)
        if token is not None:
            token.cancel(f"document {document_id} was {reason}")

    def progress(self, document_id: str) -> tuple[int, int] | None:
        """``(segments embedded, segments in all)`` of a document being written, else None."""
        with self._lock:
            return self._progress.get(document_id)

    def _run(self) -> None:
        while not self._stopping.is_set():
            job = self._claim()
            if job is None:
                with self._wake:
                    self._wake.wait(self._poll_seconds)
                continue
            try:
                self._index(job)
            finally:
                with self._lock:
                    self._running.discard(job.document_id)
                    self._tokens.pop(job.document_id, None)
                    self._progress.pop(job.document_id, None)
                release_memory()  # a large parse's freed pages go back, not kept at its peak
                self.optimizer.wake()

    def _claim(self) -> Job | None:
        with self._lock:
            try:
                job = self._queue.claim(exclude=self._running)
            except Exception:  # noqa: BLE001 - a database hiccup must not end the worker
                log.exception("claiming a queued document failed")
                return None
            if job is not None:
                self._running.add(job.document_id)
                token = CancelToken()
                if self._stopping.is_set():  # claimed while stop() was cancelling the others
                    token.cancel(STOPPING)
                self._tokens[job.document_id] = token
            return job

    def _index(self, job: Job) -> None:
        def on_embedded(done: int, total: int) -> None:
            with self._lock:
                self._progress[job.document_id] = (done, total)

        with self._lock:
            token = self._tokens[job.document_id]
        try:
            with cancellable(token):
                self._run_job(job, on_embedded)
        finally:
            if token.reason == STOPPING and self._queue.interrupted(job.document_id):
                log.info("indexing of %s stopped with the workers; queued again", job.document_id)

    def _run_job(self, job: Job, on_embedded: Callable[[int, int], None]) -> None:
        try:
            dataset = self._kb.dataset(job.dataset_id)
            pipeline = (
                PipelineSpec.model_validate(job.process_rule).build(
                    chat=dataset.chat_model, settings=self._kb.settings
                )
                if job.process_rule
                else None
            )
            info = dataset.index_waiting(
                job.document_id, pipeline=pipeline, on_embedded=on_embedded, source=self._queue.source(job)
            )
            log.info("indexed %s (%s): %s", info.name, info.id, info.status)
        except Cancelled:
            pass  # paused, deleted, or the workers are stopping (``_index`` queues it again)
        except ZhikuError as exc:
            self._queue.fail(job.document_id, str(exc))
        except Exception as exc:  # noqa: BLE001 - one document's failure must not end the worker
            log.exception("indexing document %s failed", job.document_id)
            self._queue.fail(job.document_id, f"{type(exc).__name__}: {exc}")
