"""Versions embedded by Celery workers, written into the embedded stores by the process owning them.

The embedded stores (qdrant-edge shards under the data directory) admit one process. So with
``task_queue = "celery"`` on those stores (``Settings.embedded_stores``), a worker does the
costly part of a document — extract, clean, split, embed into the shared embedding cache — and
hands the version over as a ``prepared_versions`` row, in the transaction that ends its lease (a
worker that lost its lease hands nothing over). The owner (``zhiku serve``) runs a
:class:`PreparedVersionWriter` thread that writes those versions through the usual write path;
their vectors come from the cache, so the owner embeds nothing. A version written twice (the
owner crashed between its commit and the removal of the row) is refused the second time: the
document is no longer ``indexing``.

The writer sleeps until a worker announces a hand-over on the broker's Redis
(:mod:`zhiku.knowledge_base.runtime.worker_signals`), and polls the table every ``poll_seconds`` besides
(the only wake-up without a Redis broker); versions that arrived meanwhile go in one write.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlalchemy import delete, select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db.models import PreparedVersionRow
from zhiku.core.documents import ChildChunk, Segment
from zhiku.knowledge_base.indexing.dataset_index import DocumentVersion
from zhiku.knowledge_base.runtime.jobs import IndexingQueue

if TYPE_CHECKING:
    from zhiku.knowledge_base.knowledge_base import KnowledgeBase
    from zhiku.knowledge_base.runtime.worker_signals import WorkerSignals

log = logging.getLogger(__name__)

#: Documents the writer takes at once (their segments are written in one store write).
WRITE_BATCH_DOCUMENTS = 32


def _payload(version: DocumentVersion) -> dict[str, Any]:
    return {
        "segments": [dataclasses.asdict(segment) for segment in version.segments],
        "failed_chunks": list(version.failed_chunks),
        "file_hash": version.file_hash,
    }


def _version(document_id: str, payload: dict[str, Any]) -> DocumentVersion:
    return DocumentVersion(
        document_id,
        [_segment(segment) for segment in payload["segments"]],
        payload.get("failed_chunks") or [],
        payload.get("file_hash"),
    )


def _segment(stored: dict[str, Any]) -> Segment:
    """A segment from its JSON form, its child chunks and summary rebuilt as ChildChunks."""
    summary = stored.get("summary")
    return Segment(
        **{
            **stored,
            "children": [ChildChunk(**child) for child in stored.get("children") or []],
            "summary": ChildChunk(**summary) if summary else None,
        }
    )


class PreparedVersions:
    """The ``prepared_versions`` table: hand a version over, take the waiting ones, drop written ones."""

    def __init__(self, sessions: sessionmaker[Session]) -> None:
        self._sessions = sessions

    def hand_over(
        self, queue: IndexingQueue, dataset_id: str, version: DocumentVersion, owner: str
    ) -> bool:
        """Store ``version`` for the owner and end ``owner``'s lease, in one transaction; False
        (nothing stored) when the lease was lost — another worker runs the document now."""
        with self._sessions.begin() as session:
            if not queue.leases.release(session, version.document_id, owner):
                return False
            row = session.get(PreparedVersionRow, version.document_id)
            if row is None:
                session.add(
                    PreparedVersionRow(
                        document_id=version.document_id, dataset_id=dataset_id, payload=_payload(version)
                    )
                )
            else:
                row.dataset_id, row.payload = dataset_id, _payload(version)
        return True

    def waiting(self, limit: int = WRITE_BATCH_DOCUMENTS) -> dict[str, list[DocumentVersion]]:
        """Up to ``limit`` handed-over versions, oldest first, by dataset."""
        with self._sessions() as session:
            rows = session.scalars(
                select(PreparedVersionRow).order_by(PreparedVersionRow.created_at).limit(limit)
            ).all()
        by_dataset: dict[str, list[DocumentVersion]] = defaultdict(list)
        for row in rows:
            by_dataset[row.dataset_id].append(_version(row.document_id, row.payload))
        return dict(by_dataset)

    def documents(self) -> set[str]:
        """Ids of the documents whose version waits for the owner."""
        with self._sessions() as session:
            return set(session.scalars(select(PreparedVersionRow.document_id)))

    def remove(self, document_ids: list[str]) -> None:
        with self._sessions.begin() as session:
            session.execute(delete(PreparedVersionRow).where(PreparedVersionRow.document_id.in_(document_ids)))


class PreparedVersionWriter:
    """A thread of the store owner writing handed-over versions until :meth:`stop`."""

    def __init__(
        self, kb: KnowledgeBase, *, signals: WorkerSignals | None = None, poll_seconds: float = 0.5
    ) -> None:
        self._kb = kb
        self._versions = PreparedVersions(kb.sessions)
        self._signals = signals
        self._listener = signals.listener() if signals is not None else None
        self._poll_seconds = poll_seconds
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="zhiku-version-writer", daemon=True)
        self._written: list[Callable[[], None]] = []

    def on_written(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` after each batch of versions is written (the optimizer looks)."""
        self._written.append(listener)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> bool:
        self._stopping.set()
        self._thread.join(timeout)
        stopped = not self._thread.is_alive()
        if stopped and self._listener is not None:
            self._listener.close()
        return stopped

    def write_waiting(self) -> int:
        """Write one batch of handed-over versions; how many documents it took."""
        taken = 0
        for dataset_id, versions in self._versions.waiting().items():
            ids = [version.document_id for version in versions]
            taken += len(ids)
            try:
                self._kb.dataset_index(dataset_id).write_documents(versions)
            except Exception as exc:  # noqa: BLE001 - a failed write fails its documents, not the writer
                log.exception("writing %d prepared documents failed", len(ids))
                for document_id in ids:
                    self._kb.states.fail(document_id, f"indexing failed: {type(exc).__name__}: {exc}")
            self._versions.remove(ids)
            if self._signals is not None:
                self._signals.clear_progress(ids)
        if taken:
            for listener in self._written:
                listener()
        return taken

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                taken = self.write_waiting()
            except Exception:  # noqa: BLE001 - a database hiccup must not end the writer
                log.exception("reading prepared versions failed")
                taken = 0
            if taken:
                continue
            if self._listener is not None:
                self._listener.wait(self._poll_seconds, self._stopping)
            else:
                self._stopping.wait(self._poll_seconds)
