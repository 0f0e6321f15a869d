"""Documents' metadata values in their store points' payload, kept in step with the rows.

On the Qdrant backends each point carries its document's values (one payload key per field, see
:mod:`zhiku.core.payload_filter`), so a metadata filter becomes a test of one payload index
instead of a list of documents the engine gathers point by point on every search. The rows stay
the truth; the payload follows them:

- a point written (ingest, an edit, a move between backends) takes its document's values as the
  rows have them then, under the dataset's write lock;
- a change of values marks its documents in ``pending_metadata_points`` in the change's own
  transaction; :func:`apply_pending` then writes the values into their points, under the write
  lock, and clears each mark unless a later change renewed it meanwhile;
- while a dataset has a mark, its filters use the list of documents (:func:`has_pending`): a
  filter never reads a payload that may be behind the rows.

A change is applied in the background by :class:`MetadataPointSync` of the process that made it
(the HTTP answer does not wait for an optimize holding the write lock), and by the background
optimizer of ``zhiku serve`` for marks another process left (one that could not open the stores,
or was stopped before it applied them). Writing a payload moves a point out of its segment's
graph until the next optimize (Qdrant copies it on write), so the points changed are counted
towards it.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, and_, delete, func, or_, select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db.inserts import insert_replacing
from zhiku.core.db.models import ChildChunkRow, DatasetRow, DocumentRow, PendingMetadataPointsRow, SegmentRow
from zhiku.core.errors import StoreBusy
from zhiku.core.metadata import MetadataField
from zhiku.core.payload_filter import PayloadKind, metadata_key, payload_kind, payload_value
from zhiku.datasource.points.base import SegmentStore

if TYPE_CHECKING:
    from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex

log = logging.getLogger(__name__)

#: Documents applied per hold of the write lock: other writes of the dataset get through between.
DOCUMENTS_PER_STEP = 200
_PENDING = PendingMetadataPointsRow.__table__.c


def payload_keys(fields: Iterable[MetadataField]) -> dict[str, PayloadKind]:
    """Every payload key of these fields, with the index it needs."""
    return {metadata_key(f.id): payload_kind(f.type) for f in fields}


def payload_values(fields: Iterable[MetadataField], stored: Mapping[str, Any]) -> dict[str, str | float]:
    """A document's stored values (by field id) as payload (by key); values of no field left out."""
    out: dict[str, str | float] = {}
    for field in fields:
        value = payload_value(stored.get(field.id))
        if value is not None:
            out[metadata_key(field.id)] = value
    return out


def dataset_fields(session: Session, dataset_id: str) -> list[MetadataField]:
    stored = session.scalar(select(DatasetRow.metadata_fields).where(DatasetRow.id == dataset_id))
    return [MetadataField.model_validate(f) for f in stored or []]


def metadata_payloads(
    session: Session, dataset_id: str, document_ids: Iterable[str]
) -> dict[str, dict[str, Any]]:
    """The payload of each of these documents' values (documents without a row: none)."""
    ids = sorted(set(document_ids))
    if not ids:
        return {}
    fields = dataset_fields(session, dataset_id)
    if not fields:
        return {}
    rows = session.execute(
        select(DocumentRow.id, DocumentRow.metadata_values).where(DocumentRow.id.in_(ids))
    )
    return {document_id: payload_values(fields, stored or {}) for document_id, stored in rows}


def mark_changed(session: Session, dataset_id: str, document_ids: Iterable[str]) -> None:
    """Mark these documents' points as behind their values, in the caller's transaction (a mark
    already there gets a new token: an apply running now no longer clears it)."""
    rows = [
        {"document_id": document_id, "dataset_id": dataset_id, "token": str(uuid.uuid4())}
        for document_id in sorted(set(document_ids))
    ]
    if rows:
        session.execute(insert_replacing(session, PendingMetadataPointsRow.__table__, ["token"]), rows)


def has_pending(connection: Connection, dataset_id: str) -> bool:
    """Whether some document of the dataset has values its points do not hold yet."""
    found = select(_PENDING.document_id).where(_PENDING.dataset_id == dataset_id).limit(1)
    return connection.execute(found).first() is not None


def datasets_with_pending(sessions: sessionmaker[Session]) -> list[str]:
    with sessions() as session:
        return list(session.scalars(select(PendingMetadataPointsRow.dataset_id).distinct()))


def apply_pending(index: DatasetIndex, *, stopping: threading.Event | None = None) -> int:
    """Write the marked documents' values into their points and clear the marks, a step of
    :data:`DOCUMENTS_PER_STEP` documents per hold of the write lock; returns how many documents.
    A failure leaves the marks of its step (filters keep to the list of documents meanwhile)."""
    applied = 0
    while stopping is None or not stopping.is_set():
        with index.write_lock():
            with index.sessions() as session:
                marks = dict(
                    session.execute(
                        select(_PENDING.document_id, _PENDING.token)
                        .where(_PENDING.dataset_id == index.dataset_id)
                        .limit(DOCUMENTS_PER_STEP)
                    ).all()
                )
                if not marks:
                    return applied
                # read after the marks: at least as new as the change that set each token
                keys = payload_keys(dataset_fields(session, index.dataset_id))
                values = metadata_payloads(session, index.dataset_id, marks)
                points = _points_of(session, list(values))
            for store in (index.vector, index.fulltext):
                store.set_metadata(values, keys)
                store.flush()
            with index.sessions.begin() as session:
                session.execute(
                    delete(PendingMetadataPointsRow).where(
                        or_(*(and_(_PENDING.document_id == d, _PENDING.token == t) for d, t in marks.items()))
                    )
                )
            index.changes.add(points)
            applied += len(marks)
    return applied


def write_all(
    sessions: sessionmaker[Session], dataset_id: str, stores: Sequence[SegmentStore[Any, Any]]
) -> None:
    """Every document's values into these stores' points: the end of a move between backends
    (under the write lock), whose copy may have been resumed after values changed."""
    with sessions() as session:
        keys = payload_keys(dataset_fields(session, dataset_id))
        documents = session.scalars(select(DocumentRow.id).where(DocumentRow.dataset_id == dataset_id))
        values = metadata_payloads(session, dataset_id, documents)
    for store in stores:
        store.set_metadata(values, keys)


def _points_of(session: Session, document_ids: Sequence[str]) -> int:
    """About how many points these documents have (their segments and child chunks)."""
    if not document_ids:
        return 0
    segments = session.scalar(select(func.count()).where(SegmentRow.document_id.in_(document_ids))) or 0
    children = session.scalar(
        select(func.count())
        .select_from(ChildChunkRow)
        .join(SegmentRow, SegmentRow.id == ChildChunkRow.segment_id)
        .where(SegmentRow.document_id.in_(document_ids))
    )
    return int(segments) + int(children or 0)


class MetadataPointSync:
    """A thread applying the marked documents of the datasets it is told of (see the module).

    ``index(dataset_id)`` opens a dataset's stores, or raises where this process may not (the
    marks then wait for the process that may). One thread at a time; :meth:`stop` ends it after
    the current step.
    """

    def __init__(self, index: Callable[[str], DatasetIndex]) -> None:
        self._index = index
        self._lock = threading.Lock()
        self._pending: list[str] = []
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    def apply(self, dataset_ids: Sequence[str]) -> None:
        """Apply these datasets' marks in the background."""
        with self._lock:
            if self._stopping.is_set():
                return
            self._pending.extend(d for d in dataset_ids if d not in self._pending)
            if self._pending and (self._thread is None or not self._thread.is_alive()):
                self._thread = threading.Thread(target=self._run, name="zhiku-metadata-points", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while not self._stopping.is_set():
            with self._lock:
                if not self._pending:
                    self._thread = None
                    return
                # taken off first: told again while it runs, it runs again after
                dataset_id = self._pending.pop(0)
            try:
                apply_pending(self._index(dataset_id), stopping=self._stopping)
            except StoreBusy:
                log.debug("dataset %s: its stores are another process's; its marks wait", dataset_id)
            except Exception as exc:  # noqa: BLE001 - the marks stay; the next change or open tries again
                log.warning("could not write the metadata of dataset %s into its points: %s", dataset_id, exc)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the datasets told of are applied (True) or ``timeout`` has passed."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def stop(self) -> None:
        """Stop after the current step; what is left stays marked."""
        self._stopping.set()
        self.wait()
