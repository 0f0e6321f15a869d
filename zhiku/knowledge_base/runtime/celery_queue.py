"""Indexing on Celery workers (setting ``task_queue = "celery"``, a Redis ``broker_url``).

An API process queues a document as before (a ``waiting`` row and its stored upload) and sends
one task naming it; a worker (``zhiku worker``, :mod:`zhiku.knowledge_base.runtime.celery_worker`) claims
it from the database and indexes it. The database stays the source of truth, so a task is only a
hint and running it twice is harmless: the second claim finds the document no longer waiting.

Tasks are acknowledged late (after they ran) and rejected back to the queue when their worker
process is lost, so Celery itself redelivers the message of a killed worker; a worker killed in
the middle of a document also leaves a lease that runs out, and the :class:`LeaseReaper` of any
API process or worker puts that document back to ``waiting`` and sends a new task — within
``worker_lease_seconds``, without waiting for the broker's visibility timeout (one hour).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from zhiku.core.config import Settings
from zhiku.knowledge_base.runtime.auto_optimize import AutoOptimizer
from zhiku.knowledge_base.runtime.jobs import IndexingQueue
from zhiku.knowledge_base.runtime.worker_signals import open_signals

if TYPE_CHECKING:
    from celery import Celery

    from zhiku.knowledge_base.knowledge_base import KnowledgeBase
    from zhiku.knowledge_base.runtime.prepared_versions import PreparedVersionWriter

log = logging.getLogger(__name__)

#: The broker queue the indexing tasks go through, and the task's name.
QUEUE = "zhiku-indexing"
TASK = "zhiku.index_document"
#: Seconds the broker waits for an unacknowledged task before giving it to another worker.
VISIBILITY_TIMEOUT = 3600


def celery_app(settings: Settings) -> Celery:
    """The Celery application of these settings (a broker connection is made on first use)."""
    from celery import Celery

    settings.check_task_queue()
    app = Celery("zhiku", broker=settings.broker_url, set_as_current=False)
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_default_queue=QUEUE,
        task_serializer="json",
        accept_content=["json"],
        task_ignore_result=True,
        broker_connection_retry_on_startup=True,
        broker_transport_options={"visibility_timeout": VISIBILITY_TIMEOUT},
        worker_hijack_root_logger=False,
    )
    return app


class TaskSender:
    """Sends one indexing task per document made ``waiting`` (``IndexingQueue``'s ``dispatch``)."""

    def __init__(self, app: Celery) -> None:
        self._app = app

    def __call__(self, document_id: str) -> None:
        self._app.send_task(TASK, args=[document_id], queue=QUEUE)


class LeaseReaper:
    """A thread putting back documents whose worker's lease ran out, every ``interval`` seconds.

    Given the broker's ``depth``, it also sends a task again for each document still ``waiting``
    at two passes in a row with no task in the queue: its task was lost (a server that died
    between its commit and the send, a broker that lost its data). A delivered task claims its
    document at once, so such a document has none; a task sent twice finds it no longer
    waiting and does nothing."""

    def __init__(self, queue: IndexingQueue, interval: float, depth: Callable[[], int] | None = None) -> None:
        self._queue = queue
        self._interval = interval
        self._depth = depth
        self._idle_waiting: set[str] = set()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="zhiku-lease-reaper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> bool:
        self._stopping.set()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        while not self._stopping.wait(self._interval):
            try:
                reclaimed = self._queue.leases.reclaim_expired()
            except Exception:  # noqa: BLE001 - a database or broker hiccup must not end the reaper
                log.exception("reclaiming expired leases failed")
                continue
            if reclaimed:
                log.warning("queued again %d documents whose worker stopped: %s", len(reclaimed), reclaimed)
            if self._depth is not None:
                try:
                    self._send_stranded(self._depth)
                except Exception:  # noqa: BLE001 - the same: the next pass tries again
                    log.exception("looking for waiting documents without a task failed")

    def _send_stranded(self, depth: Callable[[], int]) -> None:
        if depth():
            self._idle_waiting = set()
            return
        waiting = self._queue.waiting_documents()
        stranded = sorted(waiting & self._idle_waiting)
        self._idle_waiting = waiting - set(stranded)
        if stranded:
            log.warning("sent tasks again for %d waiting documents whose task was lost", len(stranded))
            self._queue.dispatch(stranded)


class CeleryIndexing:
    """What ``zhiku serve`` runs beside Celery workers: the lease reaper, and with embedded
    stores the writer of the versions the workers hand over. Shaped like ``IndexingWorkers``
    for the API (``wake``, ``progress``, ``stop``)."""

    def __init__(self, kb: KnowledgeBase, queue: IndexingQueue) -> None:
        settings = kb.settings
        app = celery_app(settings)
        self._reaper = LeaseReaper(queue, settings.worker_lease_seconds / 3, lambda: queue_depth(app))
        self._signals = open_signals(settings.broker_url, settings.worker_lease_seconds)
        self._writer: PreparedVersionWriter | None = None
        if settings.embedded_stores:
            from zhiku.knowledge_base.runtime.prepared_versions import PreparedVersionWriter

            # woken by the workers' hand-over messages; the poll only catches a lost one
            poll = 0.5 if self._signals is None else 2.0
            self._writer = PreparedVersionWriter(kb, signals=self._signals, poll_seconds=poll)
        #: the workers write stores on a server themselves; this process optimizes them (see
        #: ``auto_optimize``: one process per dataset at a time)
        self.optimizer = AutoOptimizer(kb)
        if self._writer is not None:
            self._writer.on_written(self.optimizer.wake)

    def start(self) -> None:
        self._reaper.start()
        if self._writer is not None:
            self._writer.start()
        self.optimizer.start()

    def wake(self) -> None:
        """Nothing to wake: the task sent for the document reaches a worker."""

    def progress(self, document_id: str) -> tuple[int, int] | None:
        """``(texts embedded, texts in all)`` as the worker running the document last reported."""
        return self._signals.progress(document_id) if self._signals is not None else None

    def stop(self, timeout: float = 10.0) -> bool:
        stopped = self.optimizer.stop(timeout)
        stopped = self._reaper.stop(timeout) and stopped
        if self._writer is not None:
            stopped = self._writer.stop(timeout) and stopped
        if self._signals is not None:
            self._signals.close()
        return stopped


def queue_depth(app: Celery) -> int:
    """Tasks waiting in the broker's indexing queue (not yet taken by a worker). The queue is
    declared as Celery declares it (Redis has no key for an empty queue, so a passive look fails)."""
    with app.connection_for_read() as connection:
        channel: Any = connection.default_channel
        return int(channel.queue_declare(queue=QUEUE, durable=True, auto_delete=False).message_count)


def workers_alive(app: Celery, timeout: float = 1.0) -> list[str]:
    """Names of the workers that answered a ping within ``timeout`` seconds."""
    replies = app.control.ping(timeout=timeout) or []
    return sorted(name for reply in replies for name in reply)
