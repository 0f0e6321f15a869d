"""What ``zhiku status`` shows: the operator's first look at the indexing queue and workers, and
at the datasets whose stores changed since their indexes were last built (what the background
optimize has still to do)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from zhiku.core.db.models import (
    DatasetChangesRow,
    DatasetRow,
    DocumentJobRow,
    DocumentRow,
    PreparedVersionRow,
    utcnow,
)
from zhiku.core.document_status import IN_PROGRESS
from zhiku.knowledge_base.knowledge_base import KnowledgeBase


@dataclass(frozen=True)
class QueueStatus:
    task_queue: str
    #: documents per status, over every dataset
    documents: dict[str, int]
    #: tasks waiting in the broker (Celery), None with the in-process threads or no broker answer
    queue_depth: int | None = None
    #: Celery workers that answered a ping or whose heartbeat holds a live lease on a running
    #: document (a solo worker busy with one answers no ping); None with the in-process threads
    workers_alive: list[str] | None = None
    #: running documents per worker holding a lease on them
    running: dict[str, int] = field(default_factory=dict)
    #: versions workers prepared that the store owner has not written yet
    prepared_waiting: int = 0
    #: why the broker could not be asked, when it could not
    broker_error: str | None = None
    #: per dataset name, the store points written or deleted since its indexes were last built
    #: (datasets with none left out): the background optimize's work still to do
    unoptimized: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "task_queue": self.task_queue,
            "queue_depth": self.queue_depth,
            "workers_alive": self.workers_alive,
            "running": self.running,
            "prepared_waiting": self.prepared_waiting,
            "documents": self.documents,
            "broker_error": self.broker_error,
            "unoptimized": self.unoptimized,
        }


def queue_status(kb: KnowledgeBase, *, ping_timeout: float = 1.0) -> QueueStatus:
    """Read the database, and the broker when the queue is Celery's (one ping of ``ping_timeout`` s)."""
    with kb.sessions() as session:
        documents = {
            str(status): int(count)
            for status, count in session.execute(
                select(DocumentRow.status, func.count())
                .group_by(DocumentRow.status)
                .order_by(DocumentRow.status)
            )
        }
        running = {
            str(owner): int(count)
            for owner, count in session.execute(
                select(DocumentJobRow.lease_owner, func.count())
                .join(DocumentRow, DocumentRow.id == DocumentJobRow.document_id)
                .where(
                    DocumentJobRow.lease_owner.is_not(None),
                    DocumentRow.status.in_([str(s) for s in IN_PROGRESS]),
                )
                .group_by(DocumentJobRow.lease_owner)
            )
        }
        prepared = int(session.scalar(select(func.count()).select_from(PreparedVersionRow)) or 0)
        unoptimized = {
            str(name): int(points)
            for name, points in session.execute(
                select(DatasetRow.name, DatasetChangesRow.points_changed)
                .join(DatasetRow, DatasetRow.id == DatasetChangesRow.dataset_id)
                .where(DatasetChangesRow.points_changed > 0, DatasetRow.deleting.is_(False))
                .order_by(DatasetRow.name)
            )
        }
        # a lease is renewed by its worker's heartbeat thread, busy or not: one not yet run out
        # says its worker is alive even when the worker is too busy to answer a ping
        leasing = set(
            session.scalars(
                select(DocumentJobRow.lease_owner)
                .join(DocumentRow, DocumentRow.id == DocumentJobRow.document_id)
                .where(
                    DocumentJobRow.lease_owner.is_not(None),
                    DocumentJobRow.lease_until > utcnow(),
                    DocumentRow.status.in_([str(s) for s in IN_PROGRESS]),
                )
                .distinct()
            )
        )
    settings = kb.settings
    if settings.task_queue != "celery":
        return QueueStatus(
            "threads", documents, running=running, prepared_waiting=prepared, unoptimized=unoptimized
        )
    from zhiku.knowledge_base.runtime.celery_queue import celery_app, queue_depth, workers_alive

    app = celery_app(settings)
    try:
        depth = queue_depth(app)
        alive = sorted(set(workers_alive(app, ping_timeout)) | {owner_node(o) for o in leasing if o})
    except Exception as exc:  # noqa: BLE001 - an unreachable broker is part of the answer
        return QueueStatus(
            "celery",
            documents,
            running=running,
            prepared_waiting=prepared,
            broker_error=str(exc),
            unoptimized=unoptimized,
        )
    return QueueStatus("celery", documents, depth, alive, running, prepared, unoptimized=unoptimized)


def owner_node(owner: str) -> str:
    """The worker's name in a lease owner ``<node>:<pid>:<random>`` (see ``WorkerRuntime``)."""
    return owner.rsplit(":", 2)[0]
