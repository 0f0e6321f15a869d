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

Writing a payload takes a point out of its segment's graph until the next index build (Qdrant
writes it again in the unindexed segment, which searches compare exactly): so a change of a few
points is written at once and counted towards the next build, and a larger one
(:data:`WRITTEN_NOW_MAX_POINTS`, an upgrade's backfill) is written by that build into the copy it
builds on (``DatasetIndex.optimize``, ``edge_build``), its points keeping their graph.

A change is applied in the background by :class:`MetadataPointSync` of the process that made it
(the HTTP answer does not wait for an optimize holding the write lock), and by the background
optimizer of ``zhiku serve`` for marks another process left (one that could not open the stores,
or was stopped before it applied them).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, Connection, and_, delete, func, or_, select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db.inserts import insert_replacing
from zhiku.core.db.models import ChildChunkRow, DatasetRow, DocumentRow, PendingMetadataPointsRow, SegmentRow
from zhiku.core.errors import StoreBusy
from zhiku.core.metadata import MetadataField
from zhiku.core.payload_filter import PayloadKind, metadata_key, payload_kind, payload_value
from zhiku.datasource.points.collection import DocumentPayloads
from zhiku.knowledge_base.dataset_thread import DatasetThread

if TYPE_CHECKING:
    from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex

log = logging.getLogger(__name__)

#: Documents applied per hold of the write lock: other writes of the dataset get through between.
DOCUMENTS_PER_STEP = 200
#: A change of more points than this waits for the next index build (see :func:`apply_pending`):
#: each point written now leaves its graph, and searches compare it exactly until the next build
#: (5,000 points: about a millisecond more per search).
WRITTEN_NOW_MAX_POINTS = 5_000
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
    """The payload of each of these documents' values (documents without a row: none), read
    :data:`DOCUMENTS_PER_STEP` at a time (a statement binds a bounded number of values)."""
    ids = sorted(set(document_ids))
    fields = dataset_fields(session, dataset_id) if ids else []
    payloads: dict[str, dict[str, Any]] = {}
    for start in range(0, len(ids) if fields else 0, DOCUMENTS_PER_STEP):
        step = ids[start : start + DOCUMENTS_PER_STEP]
        rows = session.execute(
            select(DocumentRow.id, DocumentRow.metadata_values).where(DocumentRow.id.in_(step))
        )
        payloads.update({document_id: payload_values(fields, stored or {}) for document_id, stored in rows})
    return payloads


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


@dataclass(frozen=True)
class PendingPayloads:
    """The marks read (document id → token) and the payloads of their documents' values."""

    marks: dict[str, str]
    payloads: DocumentPayloads


def read_pending(session: Session, dataset_id: str, limit: int | None = None) -> PendingPayloads | None:
    """The dataset's marks (at most ``limit``) and their documents' payloads; None if none."""
    query = select(_PENDING.document_id, _PENDING.token).where(_PENDING.dataset_id == dataset_id)
    marks = dict(session.execute(query.limit(limit) if limit is not None else query).tuples().all())
    if not marks:
        return None
    # read after the marks: at least as new as the change that set each token
    keys = payload_keys(dataset_fields(session, dataset_id))
    return PendingPayloads(marks, DocumentPayloads(metadata_payloads(session, dataset_id, marks), keys))


def clear_marks(sessions: sessionmaker[Session], marks: Mapping[str, str]) -> None:
    """Clear the marks written, each unless a later change gave it a new token meanwhile."""
    documents = list(marks.items())
    for start in range(0, len(documents), DOCUMENTS_PER_STEP):
        step = documents[start : start + DOCUMENTS_PER_STEP]
        with sessions.begin() as session:
            session.execute(
                delete(PendingMetadataPointsRow).where(
                    or_(*(and_(_PENDING.document_id == d, _PENDING.token == t) for d, t in step))
                )
            )


def apply_pending(index: DatasetIndex, *, stopping: threading.Event | None = None) -> int:
    """Write the marked documents' values into their points and clear the marks, a step of
    :data:`DOCUMENTS_PER_STEP` documents per hold of the write lock; returns how many documents.
    A failure leaves the marks of its step (filters keep to the list of documents meanwhile).

    When the marked documents have more than :data:`WRITTEN_NOW_MAX_POINTS` points, nothing is
    written now: the next index build writes them into its copy (see ``edge_build``), and the
    dataset's change count is raised to them so that the background optimizer builds it."""
    if not (index.vector.keeps_metadata or index.fulltext.keeps_metadata):
        with index.sessions() as session:  # nothing to write: the marks only hold filters back
            pending = read_pending(session, index.dataset_id)
        if pending is not None:
            clear_marks(index.sessions, pending.marks)
        return 0
    with index.sessions() as session:
        points = marked_points(session, index.dataset_id)
    if points > WRITTEN_NOW_MAX_POINTS:
        short = points - index.changes.pending()
        index.changes.add(short)
        return 0
    applied = 0
    while stopping is None or not stopping.is_set():
        with index.write_lock():
            with index.sessions() as session:
                pending = read_pending(session, index.dataset_id, DOCUMENTS_PER_STEP)
                if pending is None:
                    return applied
            for store in (index.vector, index.fulltext):
                store.set_metadata(pending.payloads)
                store.flush()
            clear_marks(index.sessions, pending.marks)
            with index.sessions() as session:
                index.changes.add(_points_of(session, list(pending.marks)))
            applied += len(pending.marks)
    return applied


def all_payloads(sessions: sessionmaker[Session], dataset_id: str) -> DocumentPayloads:
    """Every document's values as payload: what a move between backends writes into the copy it
    builds (it may have been resumed after values changed)."""
    with sessions() as session:
        keys = payload_keys(dataset_fields(session, dataset_id))
        documents = session.scalars(select(DocumentRow.id).where(DocumentRow.dataset_id == dataset_id))
        return DocumentPayloads(metadata_payloads(session, dataset_id, documents), keys)


def marked_points(session: Session, dataset_id: str) -> int:
    """About how many points the dataset's marked documents have."""
    marked = select(_PENDING.document_id).where(_PENDING.dataset_id == dataset_id).scalar_subquery()
    return _points_where(session, SegmentRow.document_id.in_(marked))


def _points_of(session: Session, document_ids: Sequence[str]) -> int:
    return _points_where(session, SegmentRow.document_id.in_(document_ids)) if document_ids else 0


def _points_where(session: Session, of_documents: ColumnElement[bool]) -> int:
    """About how many points the segments ``of_documents`` have (they and their child chunks)."""
    segments = session.scalar(select(func.count()).select_from(SegmentRow).where(of_documents)) or 0
    children = session.scalar(
        select(func.count())
        .select_from(ChildChunkRow)
        .join(SegmentRow, SegmentRow.id == ChildChunkRow.segment_id)
        .where(of_documents)
    )
    return int(segments) + int(children or 0)


class MetadataPointSync(DatasetThread):
    """A thread applying the marked documents of the datasets it is told of (see the module).

    ``index(dataset_id)`` opens a dataset's stores, or raises where this process may not (the
    marks then wait for the process that may). One thread at a time; :meth:`stop` ends it after
    the current step.
    """

    def __init__(self, index: Callable[[str], DatasetIndex]) -> None:
        super().__init__("zhiku-metadata-points")
        self._index = index

    def apply(self, dataset_ids: Sequence[str]) -> None:
        """Apply these datasets' marks in the background."""
        with self._lock:
            self._queue(dataset_ids)

    def _work(self, dataset_id: str) -> None:
        try:
            apply_pending(self._index(dataset_id), stopping=self._stopping)
        except StoreBusy:
            log.debug("dataset %s: its stores are another process's; its marks wait", dataset_id)
        except Exception as exc:  # noqa: BLE001 - the marks stay; the next change or open tries again
            log.warning("could not write the metadata of dataset %s into its points: %s", dataset_id, exc)
