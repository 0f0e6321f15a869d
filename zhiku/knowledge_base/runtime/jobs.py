"""The indexing queue: documents waiting for the indexing workers, kept in the database.

The state lives in ``documents.status`` and a ``document_jobs`` row, so it survives a restart
and is shared by every thread and process on the same database:

- a queued document is ``waiting`` and has a job row whose ``upload`` is its stored file;
- a worker claims it with one conditional UPDATE (``waiting`` → ``parsing``): of two workers,
  only the one whose UPDATE changed the row runs it. On SQLite the writes are serialised; on
  PostgreSQL the second UPDATE waits for the first one's row lock, then re-checks ``status``
  and changes nothing. The lock lasts one statement, so ``SKIP LOCKED`` would gain nothing;
- ``pause`` moves a document that is ``waiting`` or in any stage to ``paused`` the same way; a
  running worker sees it at its next checkpoint (an in-process one is told at once, another
  process looks within about a second, embedding included) and stops, its finished embedding
  batches cached; ``resume`` puts it back to ``waiting``. A run that claimed the document never
  takes it back from ``waiting``: paused and resumed, it belongs to the next claim, so it never
  reads ``waiting`` while an old run indexes it;
- a running document whose worker stops with the server is queued again (``waiting``) at once;
- a document caught in a stage by a crash goes back to ``waiting`` when the knowledge base is
  opened again, if its upload is still stored (see ``KnowledgeBase._recover_interrupted``);
- a Celery worker claims one named document with a lease in the same transaction, and renews
  it while it runs; a document whose lease ran out (its worker was killed) is put back to
  ``waiting`` and dispatched again (``IndexingQueue.leases``, see
  :mod:`zhiku.knowledge_base.runtime.claims`).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db.models import DocumentJobRow, DocumentRow, new_id, utcnow
from zhiku.core.document_status import IN_PROGRESS, RESTARTABLE, DocumentStatus
from zhiku.core.errors import InvalidInput, NotFound, ZhikuError
from zhiku.knowledge_base.indexing.document_states import DocumentStates, move_in
from zhiku.knowledge_base.indexing.ingestion import Source
from zhiku.knowledge_base.runtime.claims import DocumentLeases, Job, set_lease
from zhiku.knowledge_base.runtime.uploads import UploadStore, reference_name

S = DocumentStatus

#: States ``retry`` accepts: failed, or served with some chunks failed (the whole file is redone).
RETRYABLE = (S.ERROR, S.COMPLETED_WITH_ERRORS)
#: States a document may be queued again from, with new content or not (not waiting nor running).
_REQUEUEABLE = RESTARTABLE | {S.PAUSED}
#: How many waiting documents one claim looks at (others may be taken by other workers meanwhile).
_CLAIM_WINDOW = 16


class DocumentIndexing(ZhikuError):
    """The document is being indexed now; it cannot be changed or deleted until that ends."""

    code = "document_indexing"


class InvalidState(ZhikuError):
    """The document's status does not allow this (resume a document that is not paused, ...)."""

    code = "invalid_state"


class ArchivedDocument(ZhikuError):
    """An archived document is read-only until it is unarchived."""

    code = "archived_document_immutable"


@dataclass(frozen=True)
class JobState:
    """What the API shows of a document's job: its batch, pause time and archive flag."""

    batch: str | None
    paused_at: datetime | None
    archived: bool
    queued: bool


def _check_requeueable(document_id: str, status: str) -> None:
    """409 ``document_indexing`` for a document already queued or being indexed."""
    if status == S.WAITING:
        raise DocumentIndexing(
            f"document {document_id!r} is waiting to be indexed; pause it first or wait until it is done"
        )
    if status not in _REQUEUEABLE:
        raise DocumentIndexing(f"document {document_id!r} is being indexed; wait or pause it first")


def new_batch() -> str:
    """A batch id in Dify's form: UTC time to the second, then six random digits."""
    return datetime.now(UTC).strftime("%Y%m%d%H%M%S") + f"{secrets.randbelow(10**6):06d}"


class IndexingQueue:
    """Queue, claim, pause, resume and retry documents for the indexing workers.

    ``dispatch(document_id)`` is called after each commit that makes a document ``waiting``
    (the Celery queue sends it a task; the in-process threads poll and need none).
    """

    def __init__(
        self,
        sessions: sessionmaker[Session],
        uploads: UploadStore,
        dispatch: Callable[[str], None] | None = None,
    ) -> None:
        self._sessions = sessions
        self._states = DocumentStates(sessions)
        self.uploads = uploads
        self._dispatch = dispatch
        #: the Celery workers' claims: by document, under a lease
        self.leases = DocumentLeases(sessions, self.dispatch)
        #: told the id of each document paused or deleted, and which, after the commit: the
        #: in-process workers stop its run at once, not at their next look at the database
        self._stop_listeners: list[Callable[[str, str], None]] = []

    def on_stop(self, listener: Callable[[str, str], None]) -> None:
        """Call ``listener(document_id, "paused" | "deleted")`` after each pause or delete is
        committed."""
        self._stop_listeners.append(listener)

    def deleted(self, document_id: str) -> None:
        """A document was deleted (committed): a run indexing it here stops at once."""
        for listener in self._stop_listeners:
            listener(document_id, "deleted")

    def source(self, job: Job) -> Source:
        """What the ingest reads for a claimed document: its stored upload."""
        return Source(reference_name(job.upload), self.uploads.content(job.upload), job.upload)

    def dispatch(self, document_ids: Sequence[str]) -> None:
        if self._dispatch is not None:
            for document_id in document_ids:
                self._dispatch(document_id)

    # -- queueing ----------------------------------------------------------------------------

    def enqueue(
        self,
        dataset_id: str,
        name: str,
        data: bytes,
        *,
        file_name: str,
        batch: str,
        process_rule: dict[str, Any] | None = None,
    ) -> str:
        """Store ``data`` and add a ``waiting`` document for it; returns the document id."""
        document_id = new_id()
        path = self.uploads.store(document_id, file_name, data)
        try:
            with self._sessions.begin() as session:
                session.add(
                    DocumentRow(
                        id=document_id,
                        dataset_id=dataset_id,
                        name=name[:1024],
                        source=str(path),
                        size=len(data),
                        file_hash=hashlib.sha256(data).hexdigest(),
                        status=str(S.WAITING),
                    )
                )
                session.flush()
                session.add(
                    DocumentJobRow(
                        document_id=document_id,
                        dataset_id=dataset_id,
                        batch=batch,
                        upload=str(path),
                        process_rule=process_rule,
                    )
                )
        except BaseException:
            self.uploads.remove(document_id)
            raise
        self.dispatch([document_id])
        return document_id

    def requeue(
        self,
        dataset_id: str,
        document_id: str,
        *,
        batch: str,
        name: str | None = None,
        data: bytes | None = None,
        file_name: str | None = None,
        process_rule: dict[str, Any] | None = None,
    ) -> None:
        """Index an existing document again: new content (``data``), or its stored upload again
        with a new process rule. Its segments stay served until the new version replaces them.

        The status is checked before anything is written, and new content is staged beside the
        queued upload: it replaces that upload only in the transaction that queues the document,
        so a refused update (the document is waiting or being indexed) changes nothing."""
        stored_name, previous_upload = self._requeueable(dataset_id, document_id)
        staged = None
        if data is not None:
            staged = self.uploads.stage(document_id, file_name or name or stored_name, data)
        elif not (previous_upload and self.uploads.exists(previous_upload)):
            raise InvalidInput(
                f"document {document_id!r} has no stored upload to index again; send its content"
            )
        values: dict[str, Any] = {"error": None}
        if name:
            values["name"] = name[:1024]
        if data is not None:
            values.update(size=len(data), file_hash=hashlib.sha256(data).hexdigest())
        try:
            with self._sessions.begin() as session:
                # a paused document may be queued again with new content too; the move comes
                # first, so a document changed since the check above is refused unwritten
                path = staged.reference if staged is not None else previous_upload
                values["source"] = str(path)
                if move_in(session, [document_id], S.WAITING, only_from=_REQUEUEABLE, **values) != 1:
                    _check_requeueable(document_id, self._document(session, dataset_id, document_id).status)
                    raise DocumentIndexing(f"document {document_id!r} changed status; try again")
                if staged is not None:
                    staged.write(session)
                job = session.get(DocumentJobRow, document_id)
                if job is None:
                    job = DocumentJobRow(document_id=document_id, dataset_id=dataset_id)
                    session.add(job)
                job.batch, job.upload, job.paused_at = batch, str(path), None
                if process_rule is not None:
                    job.process_rule = process_rule
        except BaseException:
            if staged is not None:
                staged.discard()
            raise
        if staged is not None:
            staged.keep()
        self.dispatch([document_id])

    def _requeueable(self, dataset_id: str, document_id: str) -> tuple[str, str | None]:
        """The document's name and stored upload, once its status lets it be indexed again and it
        is not archived (else the error saying why)."""
        with self._sessions() as session:
            row = self._document(session, dataset_id, document_id)
            _check_requeueable(document_id, row.status)
            job = session.get(DocumentJobRow, document_id)
            if job is not None and job.archived:
                raise ArchivedDocument(f"document {document_id!r} is archived; unarchive it first")
            return row.name, (job.upload if job is not None else None)

    def retry(self, dataset_id: str, document_ids: Sequence[str], batch: str) -> None:
        """Queue failed documents again from their stored uploads (all of them, or none of them)."""
        with self._sessions() as session:
            for document_id in document_ids:
                row = self._document(session, dataset_id, document_id)
                if row.status not in RETRYABLE:
                    raise InvalidState(
                        f"document {document_id!r} is {row.status}; only failed documents are retried"
                    )
                job = session.get(DocumentJobRow, document_id)
                if job is None or not job.upload or not self.uploads.exists(job.upload):
                    raise InvalidState(
                        f"document {document_id!r} has no stored upload; send its content again"
                    )
        for document_id in document_ids:
            self.requeue(dataset_id, document_id, batch=batch)

    # -- the workers' side -------------------------------------------------------------------

    def claim(self, exclude: Collection[str] = ()) -> Job | None:
        """Take the oldest waiting queued document (``waiting`` → ``parsing``), or None. The
        in-process threads' claim: it holds no lease (recovery at the next start covers a crash)."""
        with self._sessions() as session:
            candidates = session.execute(
                select(
                    DocumentRow.id, DocumentRow.dataset_id, DocumentJobRow.upload, DocumentJobRow.process_rule
                )
                .join(DocumentJobRow, DocumentJobRow.document_id == DocumentRow.id)
                .where(DocumentRow.status == str(S.WAITING), DocumentJobRow.upload.is_not(None))
                .order_by(DocumentRow.created_at)
                .limit(_CLAIM_WINDOW)
            ).all()
        for document_id, dataset_id, upload, process_rule in candidates:
            if document_id in exclude:
                continue
            with self._sessions.begin() as session:
                if move_in(session, [document_id], S.PARSING, error=None) == 1:
                    set_lease(session, document_id, None, None)
                    return Job(document_id, dataset_id, upload, process_rule)
        return None

    def waiting_documents(self, limit: int = 1000) -> set[str]:
        """Ids of queued documents waiting for a worker (up to ``limit``, oldest first)."""
        with self._sessions() as session:
            return set(
                session.scalars(
                    select(DocumentRow.id)
                    .join(DocumentJobRow, DocumentJobRow.document_id == DocumentRow.id)
                    .where(DocumentRow.status == str(S.WAITING), DocumentJobRow.upload.is_not(None))
                    .order_by(DocumentRow.created_at)
                    .limit(limit)
                )
            )

    def interrupted(self, document_id: str) -> bool:
        """Queue again (``waiting``) a document whose run was stopped with its worker (the server
        is stopping): the next worker, here after a restart or in another process, runs it.
        False when it is no longer running (finished, paused, deleted)."""
        return self._states.move(document_id, S.WAITING, only_from=IN_PROGRESS)

    def fail(self, document_id: str, reason: str) -> None:
        """End a claimed document's run as failed (a failure outside the ingest's own handling)."""
        self._states.fail(document_id, reason)

    # -- pause and resume --------------------------------------------------------------------

    def pause(self, dataset_id: str, document_id: str) -> None:
        """Stop a waiting or running document at its next checkpoint (``paused``)."""
        with self._sessions.begin() as session:
            row = self._document(session, dataset_id, document_id)
            if move_in(session, [document_id], S.PAUSED) != 1:
                raise InvalidState(
                    f"document {document_id!r} is {row.status}; "
                    "only waiting or running documents can be paused"
                )
            self._job(session, row).paused_at = utcnow()
        for listener in self._stop_listeners:
            listener(document_id, "paused")

    def resume(self, dataset_id: str, document_id: str) -> None:
        """Queue a paused document again; it is indexed from the start."""
        with self._sessions.begin() as session:
            row = self._document(session, dataset_id, document_id)
            if move_in(session, [document_id], S.WAITING, only_from={S.PAUSED}) != 1:
                raise InvalidState(f"document {document_id!r} is {row.status}, not paused")
            self._job(session, row).paused_at = None
        self.dispatch([document_id])

    # -- reading -----------------------------------------------------------------------------

    def states(self, document_ids: Sequence[str]) -> dict[str, JobState]:
        """Job state of the documents that have one."""
        if not document_ids:
            return {}
        with self._sessions() as session:
            rows = session.scalars(
                select(DocumentJobRow).where(DocumentJobRow.document_id.in_(list(document_ids)))
            ).all()
        return {
            row.document_id: JobState(row.batch, row.paused_at, row.archived, row.upload is not None)
            for row in rows
        }

    def process_rule(self, document_id: str) -> dict[str, Any] | None:
        """The process rule the document was queued with; None when it follows its dataset's."""
        with self._sessions() as session:
            job = session.get(DocumentJobRow, document_id)
            return dict(job.process_rule) if job is not None and job.process_rule else None

    def batch_documents(self, dataset_id: str, batch: str) -> list[str]:
        """Ids of the documents queued in ``batch``, oldest first; NotFound for an unknown batch."""
        with self._sessions() as session:
            ids = list(
                session.scalars(
                    select(DocumentJobRow.document_id)
                    .join(DocumentRow, DocumentRow.id == DocumentJobRow.document_id)
                    .where(DocumentJobRow.dataset_id == dataset_id, DocumentJobRow.batch == batch)
                    .order_by(DocumentRow.created_at)
                )
            )
        if not ids:
            raise NotFound(f"no batch {batch!r} in this dataset")
        return ids

    def sweep_uploads(self) -> int:
        """Remove stored uploads whose document no longer exists (deleted, or never committed).

        Run it before requests are served: an upload being queued has its file before its row.
        """
        with self._sessions() as session:
            known = set(session.scalars(select(DocumentRow.id)))
        return self.uploads.sweep(known)

    @staticmethod
    def _document(session: Session, dataset_id: str, document_id: str) -> DocumentRow:
        row = session.get(DocumentRow, document_id)
        if row is None or row.dataset_id != dataset_id:
            raise NotFound(f"no document {document_id!r} in this dataset")
        return row

    @staticmethod
    def _job(session: Session, row: DocumentRow) -> DocumentJobRow:
        job = session.get(DocumentJobRow, row.id)
        if job is None:
            job = DocumentJobRow(document_id=row.id, dataset_id=row.dataset_id)
            session.add(job)
        return job
