"""Claimed documents: what a claim hands a worker (:class:`Job`), and the leases a Celery
worker's claims hold (:class:`DocumentLeases`).

A Celery worker claims one named document with a lease in the same transaction, and renews it
while it runs; a document whose lease ran out (its worker was killed) is put back to
``waiting`` and dispatched again by :meth:`DocumentLeases.reclaim_expired`. Ending a lease is
conditional on its owner, so of two processes reclaiming the same document only one does, and a
worker that lost its lease can no longer hand its version over.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db.models import DocumentJobRow, DocumentRow, utcnow
from zhiku.core.document_status import IN_PROGRESS, DocumentStatus
from zhiku.knowledge_base.indexing.document_states import move_in

S = DocumentStatus


@dataclass(frozen=True)
class Job:
    """A claimed document: where its upload is and the process rule it was queued with."""

    document_id: str
    dataset_id: str
    #: the stored upload's reference (a path, or ``db:...``; see :mod:`zhiku.knowledge_base.runtime.uploads`)
    upload: str
    process_rule: dict[str, Any] | None


def set_lease(session: Session, document_id: str, owner: str | None, until: datetime | None) -> None:
    """Give a document's job row a lease (``owner`` until ``until``), or none (both None)."""
    session.execute(
        update(DocumentJobRow)
        .where(DocumentJobRow.document_id == document_id)
        .values(lease_owner=owner, lease_until=until)
    )


class DocumentLeases:
    """Claim a named document under a lease, renew and end it, and queue again the documents
    whose lease ran out; ``dispatch`` is the queue's, told of each document made ``waiting``."""

    def __init__(self, sessions: sessionmaker[Session], dispatch: Callable[[Sequence[str]], None]) -> None:
        self._sessions = sessions
        self._dispatch = dispatch

    def claim_document(self, document_id: str, owner: str, lease_seconds: float) -> Job | None:
        """Take this document if it is ``waiting`` (``→ parsing``), holding a lease for ``owner``
        for ``lease_seconds``; None when it is not waiting (paused, deleted, taken, done)."""
        with self._sessions.begin() as session:
            job = session.get(DocumentJobRow, document_id)
            if job is None or not job.upload:
                return None
            if move_in(session, [document_id], S.PARSING, error=None) != 1:
                return None
            set_lease(session, document_id, owner, utcnow() + timedelta(seconds=lease_seconds))
            return Job(document_id, job.dataset_id, job.upload, job.process_rule)

    def renew(self, document_id: str, owner: str, lease_seconds: float) -> bool:
        """Extend ``owner``'s lease on a running document; False when it is no longer theirs."""
        with self._sessions.begin() as session:
            result = session.execute(
                update(DocumentJobRow)
                .where(DocumentJobRow.document_id == document_id, DocumentJobRow.lease_owner == owner)
                .values(lease_until=utcnow() + timedelta(seconds=lease_seconds))
            )
            return int(result.rowcount) == 1  # type: ignore[attr-defined]

    def release(self, session: Session, document_id: str, owner: str) -> bool:
        """End ``owner``'s lease in the caller's transaction; False when it was not theirs any more."""
        result = session.execute(
            update(DocumentJobRow)
            .where(DocumentJobRow.document_id == document_id, DocumentJobRow.lease_owner == owner)
            .values(lease_owner=None, lease_until=None)
        )
        return int(result.rowcount) == 1  # type: ignore[attr-defined]

    def reclaim_expired(self, limit: int = 100) -> list[str]:
        """Queue again (``waiting``, and dispatched) up to ``limit`` running documents whose
        worker's lease ran out; their ids."""
        now = utcnow()
        with self._sessions() as session:
            expired = session.execute(
                select(DocumentJobRow.document_id, DocumentJobRow.lease_owner)
                .join(DocumentRow, DocumentRow.id == DocumentJobRow.document_id)
                .where(
                    DocumentJobRow.lease_owner.is_not(None),
                    DocumentJobRow.lease_until < now,
                    DocumentRow.status.in_([str(s) for s in IN_PROGRESS]),
                )
                .limit(limit)
            ).all()
        reclaimed = []
        for document_id, owner in expired:
            with self._sessions.begin() as session:
                ended = session.execute(
                    update(DocumentJobRow)
                    .where(
                        DocumentJobRow.document_id == document_id,
                        DocumentJobRow.lease_owner == owner,
                        DocumentJobRow.lease_until < now,
                    )
                    .values(lease_owner=None, lease_until=None)
                )
                if int(ended.rowcount) == 1 and move_in(  # type: ignore[attr-defined]
                    session, [document_id], S.WAITING, only_from=IN_PROGRESS
                ):
                    reclaimed.append(document_id)
        self._dispatch(reclaimed)
        return reclaimed
