"""The documents of one dataset: listing, lookup by id, by content or by source folder, counts;
serving, archiving, renaming and deleting them.

Serving and archiving change only rows: search serves a segment only while its document is
enabled. A delete goes through the dataset's index, which removes it from every store.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db import DocumentRow, SegmentRow
from zhiku.core.db.models import DocumentJobRow
from zhiku.core.document_status import DocumentStatus
from zhiku.core.errors import NotFound
from zhiku.knowledge_base.dataset_settings import dataset_row
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex
from zhiku.knowledge_base.records import DocumentInfo
from zhiku.knowledge_base.runtime.jobs import ArchivedDocument


class DatasetDocuments:
    """The documents of one dataset; ``index`` opens its stores, which a delete must reach."""

    def __init__(
        self, sessions: sessionmaker[Session], dataset_id: str, index: Callable[[], DatasetIndex]
    ) -> None:
        self._sessions = sessions
        self.dataset_id = dataset_id
        self._index = index

    def all(self, *, status: str | None = None, name: str | None = None) -> list[DocumentInfo]:
        """The documents, oldest first; only those in ``status`` or named exactly ``name``
        when given (names need not be unique)."""
        query = select(DocumentRow).where(DocumentRow.dataset_id == self.dataset_id)
        if status is not None:
            query = query.where(DocumentRow.status == status)
        if name is not None:
            query = query.where(DocumentRow.name == name)
        with self._sessions() as session:
            rows = session.scalars(query.order_by(DocumentRow.created_at, DocumentRow.id)).all()
            return [DocumentInfo.of(row) for row in rows]

    def get(self, document_id: str) -> DocumentInfo:
        """One document; NotFound, naming the dataset, when it is not one of them."""
        with self._sessions() as session:
            row = session.get(DocumentRow, document_id)
            if row is None or row.dataset_id != self.dataset_id:
                name = dataset_row(session, self.dataset_id).name
                raise NotFound(f"no document {document_id!r} in dataset {name!r}")
            return DocumentInfo.of(row)

    def delete(self, document_id: str) -> None:
        """Delete a document in any status: it stops being served at once, and a run indexing it
        stops at its next checkpoint."""
        self.get(document_id)
        self._index().delete_documents([document_id])

    def duplicate(self, digest: str, origin: str) -> DocumentInfo | None:
        """The document content ``digest`` duplicates: one with that content that is served or
        under way, else a failed one from the same source (ingesting it again retries it)."""
        with self._sessions() as session:
            rows = session.scalars(
                select(DocumentRow)
                .where(DocumentRow.dataset_id == self.dataset_id, DocumentRow.file_hash == digest)
                .order_by(DocumentRow.created_at)
            ).all()
            live = [row for row in rows if row.status != DocumentStatus.ERROR]
            retry = [row for row in rows if row.status == DocumentStatus.ERROR and row.source == origin]
            found = live or retry
            return DocumentInfo.of(found[0]) if found else None

    def under(self, folder: Path) -> dict[str, tuple[str, str | None, str]]:
        """The documents read from files under ``folder`` (a resolved path), by source path:
        their id, content hash and status."""
        prefix = str(folder) + os.sep
        with self._sessions() as session:
            rows = session.execute(
                select(DocumentRow.id, DocumentRow.source, DocumentRow.file_hash, DocumentRow.status).where(
                    DocumentRow.dataset_id == self.dataset_id,
                    DocumentRow.source.startswith(prefix, autoescape=True),
                )
            )
            return {
                source: (document_id, file_hash, status) for document_id, source, file_hash, status in rows
            }

    def stats(self) -> dict[str, Any]:
        """How many documents (in all and by status) and segments the dataset holds."""
        with self._sessions() as session:
            by_status = dict(
                session.execute(
                    select(DocumentRow.status, func.count())
                    .where(DocumentRow.dataset_id == self.dataset_id)
                    .group_by(DocumentRow.status)
                ).all()
            )
            segments = session.scalar(
                select(func.count()).select_from(SegmentRow).where(SegmentRow.dataset_id == self.dataset_id)
            )
        return {
            "documents": sum(by_status.values()),
            "by_status": {status: int(count) for status, count in by_status.items()},
            "segments": int(segments or 0),
        }

    def set_enabled(self, document_ids: Sequence[str], enabled: bool) -> None:
        """Serve (or stop serving) whole documents; archived documents refuse (ArchivedDocument),
        an id outside the dataset is NotFound, both before anything changes."""
        with self._sessions.begin() as session:
            self._check(session, document_ids, writable=True)
            session.execute(
                update(DocumentRow).where(DocumentRow.id.in_(list(document_ids))).values(enabled=enabled)
            )

    def set_archived(self, document_ids: Sequence[str], archived: bool) -> None:
        """Archive (stop serving, make read-only) or unarchive (serve again) documents."""
        with self._sessions.begin() as session:
            self._check(session, document_ids, writable=False)
            for document_id in document_ids:
                job = session.get(DocumentJobRow, document_id)
                if job is None:
                    job = DocumentJobRow(document_id=document_id, dataset_id=self.dataset_id)
                    session.add(job)
                job.archived = archived
            session.execute(
                update(DocumentRow).where(DocumentRow.id.in_(list(document_ids))).values(enabled=not archived)
            )

    def rename(self, document_id: str, name: str) -> None:
        """Rename a document (cut to 1024 characters); an archived one refuses."""
        with self._sessions.begin() as session:
            self._check(session, [document_id], writable=True)
            session.execute(update(DocumentRow).where(DocumentRow.id == document_id).values(name=name[:1024]))

    def _check(self, session: Session, document_ids: Sequence[str], *, writable: bool) -> None:
        """NotFound for an id outside the dataset (before anything changes); ArchivedDocument when
        ``writable`` and one is archived."""
        found = dict(
            session.execute(
                select(DocumentRow.id, DocumentJobRow.archived)
                .outerjoin(DocumentJobRow, DocumentJobRow.document_id == DocumentRow.id)
                .where(DocumentRow.id.in_(list(document_ids)), DocumentRow.dataset_id == self.dataset_id)
            ).all()
        )
        for document_id in document_ids:
            if document_id not in found:
                raise NotFound(f"no document {document_id!r} in this dataset")
            if writable and found[document_id]:
                raise ArchivedDocument(f"document {document_id!r} is archived; unarchive it first")
