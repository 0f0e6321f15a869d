"""The indexing worker pool: threads that claim queued documents and index them.

Threads, not processes: the embedded stores admit one process, and the
embedding models release the GIL while they compute. Each thread claims a document from the
database (:meth:`IndexingQueue.claim`), runs extract → clean → split → index through the facade,
and goes back for the next; it sleeps until woken by a new upload or a short poll interval.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from zhiku.core.errors import ZhikuError
from zhiku.knowledge_base.jobs import IndexingQueue, Job
from zhiku.knowledge_base.pipeline import PipelineSpec

if TYPE_CHECKING:
    from zhiku.knowledge_base.knowledge_base import KnowledgeBase

log = logging.getLogger(__name__)


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
        self._progress: dict[str, tuple[int, int]] = {}

    def start(self) -> None:
        for number in range(self._count):
            thread = threading.Thread(target=self._run, name=f"zhiku-indexer-{number}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def wake(self) -> None:
        """Tell the idle threads that a document was queued."""
        with self._wake:
            self._wake.notify_all()

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop claiming; wait up to ``timeout`` seconds for running documents. True if all ended.

        A document still running when the process exits is queued again at the next start.
        """
        self._stopping.set()
        self.wake()
        for thread in self._threads:
            thread.join(timeout)
        return not any(thread.is_alive() for thread in self._threads)

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
                    self._progress.pop(job.document_id, None)

    def _claim(self) -> Job | None:
        with self._lock:
            try:
                job = self._queue.claim(exclude=self._running)
            except Exception:  # noqa: BLE001 - a database hiccup must not end the worker
                log.exception("claiming a queued document failed")
                return None
            if job is not None:
                self._running.add(job.document_id)
            return job

    def _index(self, job: Job) -> None:
        def on_embedded(done: int, total: int) -> None:
            with self._lock:
                self._progress[job.document_id] = (done, total)

        try:
            dataset = self._kb.dataset(job.dataset_id)
            pipeline = (
                PipelineSpec.model_validate(job.process_rule).build(
                    chat=dataset.chat_model, tokenizers=self._kb.settings.tokenizers
                )
                if job.process_rule
                else None
            )
            info = dataset.index_waiting(
                job.document_id, pipeline=pipeline, on_embedded=on_embedded, source=self._queue.source(job)
            )
            log.info("indexed %s (%s): %s", info.name, info.id, info.status)
        except ZhikuError as exc:
            self._queue.fail(job.document_id, str(exc))
        except Exception as exc:  # noqa: BLE001 - one document's failure must not end the worker
            log.exception("indexing document %s failed", job.document_id)
            self._queue.fail(job.document_id, f"{type(exc).__name__}: {exc}")
