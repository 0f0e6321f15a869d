"""Every write of a document's status: conditional UPDATEs checked by their row count.

``UPDATE documents SET status = :to WHERE id = :id AND status IN (:allowed)`` is the claim
pattern: of two writers racing (a worker finishing, a user pausing), exactly one changes the
row and the other learns it lost. The allowed sources come from
:data:`zhiku.core.document_status.TRANSITIONS`, so no caller can write a transition the table does
not hold: asking for one is a bug and raises :class:`IllegalTransition` before anything is written.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, exists, select, update
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.sql.elements import BindParameter, ColumnElement

from zhiku.core.db.models import DocumentRow, SegmentRow, utcnow
from zhiku.core.document_status import IN_PROGRESS, UNSERVED, DocumentStatus, sources

S = DocumentStatus

#: The timestamp column each status stamps when a document enters it.
_STAMPS = {
    S.PARSING: "parsing_started_at",
    S.CLEANING: "cleaning_started_at",
    S.SPLITTING: "splitting_started_at",
    S.INDEXING: "indexing_started_at",
    S.ERROR: "error_at",
}


class IllegalTransition(RuntimeError):
    """A caller asked for a status change the transition table does not allow (a bug)."""


def served_condition() -> ColumnElement[bool]:
    """What "served" means, once, for every search path: the segment and its document are
    enabled and the document is not ``error`` (segment rows exist only for a completed version).

    Written as "not one of the unserved statuses" (only ``error``): the database checks a
    document with one index look-up, where "one of the eight served statuses" made it one per
    status (the live check of a search at 100k segments: 0.85 → 0.56 ms)."""
    unserved: list[BindParameter[str]] = [bindparam(f"unserved_{s}", str(s)) for s in sorted(UNSERVED)]
    return SegmentRow.enabled.is_(True) & DocumentRow.enabled.is_(True) & DocumentRow.status.not_in(unserved)


class DocumentStates:
    """Moves documents between statuses; the only writer of ``documents.status``."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def move(
        self,
        document_id: str,
        to: DocumentStatus,
        *,
        only_from: Collection[DocumentStatus] | None = None,
        **values: Any,
    ) -> bool:
        """Move one document to ``to`` (setting ``values`` too) in its own transaction.

        ``only_from`` narrows the allowed sources. False when the document is gone or in another
        status (someone else moved it first).
        """
        with self._sessions.begin() as session:
            return move_in(session, [document_id], to, only_from=only_from, **values) == 1

    def move_many(
        self,
        document_ids: Collection[str],
        to: DocumentStatus,
        *,
        only_from: Collection[DocumentStatus] | None = None,
        **values: Any,
    ) -> int:
        """Move documents to ``to``; how many moved."""
        if not document_ids:
            return 0
        with self._sessions.begin() as session:
            return move_in(session, document_ids, to, only_from=only_from, **values)

    def status(self, document_id: str) -> DocumentStatus | None:
        """The document's status, None when it no longer exists."""
        with self._sessions() as session:
            value = session.scalar(select(DocumentRow.status).where(DocumentRow.id == document_id))
        return None if value is None else DocumentStatus(value)

    def among(self, document_ids: Collection[str], statuses: Collection[DocumentStatus]) -> set[str]:
        """Those of ``document_ids`` whose status is one of ``statuses`` (one query)."""
        if not document_ids:
            return set()
        with self._sessions() as session:
            found = session.scalars(
                select(DocumentRow.id).where(
                    DocumentRow.id.in_(list(document_ids)),
                    DocumentRow.status.in_([str(status) for status in statuses]),
                )
            )
            return set(found)

    def _run_row(self, document_id: str) -> tuple[str, datetime | None] | None:
        """The document's status and when its current run claimed it; None when it is gone."""
        with self._sessions() as session:
            row = session.execute(
                select(DocumentRow.status, DocumentRow.parsing_started_at).where(
                    DocumentRow.id == document_id
                )
            ).first()
        return None if row is None else (row[0], row[1])

    def run_started(self, document_id: str) -> datetime | None:
        """When the run now indexing this document claimed it (its ``parsing_started_at``);
        None when no run holds it (waiting, paused, finished or gone)."""
        found = self._run_row(document_id)
        if found is None or found[0] not in {str(s) for s in IN_PROGRESS}:
            return None
        return found[1]

    def stop_reason(self, document_id: str, run_started: datetime | None = None) -> str | None:
        """Why a run of this document must stop (paused, deleted), or None to go on.

        A run that claimed the document at ``run_started`` also stops when the document is no
        longer its own: paused and resumed before the run looked (``waiting`` again, for a new
        run), or claimed by another run since — else it would index a document that reads
        ``waiting``, or two runs would index one document."""
        found = self._run_row(document_id)
        if found is None:
            return f"document {document_id} was deleted"
        status, started = found
        if status == S.PAUSED:
            return f"document {document_id} was paused"
        if run_started is not None:
            if status == S.WAITING:
                return f"document {document_id} was paused and queued again; a new run indexes it"
            if status in IN_PROGRESS and started != run_started:
                return f"document {document_id} was claimed by another run"
        return None

    def fail(
        self, document_id: str, reason: str, *, failed_chunks: list[dict[str, Any]] | None = None
    ) -> DocumentStatus | None:
        """End a run that failed. A document that still serves a previous version (it has segment
        rows) goes back to that version's status, the reason kept in ``error``; one that does not
        becomes ``error``. Returns the status it ended in (None: it is gone or already moved)."""
        with self._sessions.begin() as session:
            row = session.get(DocumentRow, document_id)
            if row is None:
                return None
            previous = session.scalar(select(exists().where(SegmentRow.document_id == document_id)))
            if previous:
                partial = bool((row.doc_metadata or {}).get("failed_chunks"))
                to = S.COMPLETED_WITH_ERRORS if partial else S.COMPLETED
                message = f"re-indexing failed, the previous version is still served: {reason}"
                moved = move_in(session, [document_id], to, error=message)
            else:
                to = S.ERROR
                extra: dict[str, Any] = {}
                if failed_chunks is not None:
                    extra["doc_metadata"] = {**(row.doc_metadata or {}), "failed_chunks": failed_chunks}
                moved = move_in(session, [document_id], to, error=reason, **extra)
            return to if moved else None


def move_in(
    session: Session,
    document_ids: Collection[str],
    to: DocumentStatus,
    *,
    only_from: Collection[DocumentStatus] | None = None,
    **values: Any,
) -> int:
    """:meth:`DocumentStates.move` inside a transaction the caller holds; how many rows moved."""
    legal = sources(to)
    allowed = legal if only_from is None else frozenset(only_from)
    if not allowed <= legal:
        raise IllegalTransition(f"{sorted(allowed - legal)} → {to} is not a document transition")
    stamp = _STAMPS.get(to)
    if stamp is not None and stamp not in values:
        values[stamp] = utcnow()
    result = session.execute(
        update(DocumentRow)
        .where(DocumentRow.id.in_(list(document_ids)), DocumentRow.status.in_([str(s) for s in allowed]))
        .values(status=str(to), **values)
        .execution_options(synchronize_session=False)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]
