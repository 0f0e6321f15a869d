"""A dataset's deletion in steps that each hold the database briefly, finished after a stop.

A dataset's rows (documents, segments, keyword postings, child chunks, metadata values) went in
one transaction by the foreign keys' cascades: at a million segments some 25 million rows, over
twenty minutes on SQLite, and no other write of the knowledge base got through meanwhile (at a
hundred thousand segments 38 s, past the 30 s a waiting writer waits). So a deletion

1. marks the row ``deleting`` and frees its name, in one short transaction: from then on no
   lookup finds the dataset, and a new dataset may take the name;
2. drops the dataset's stores;
3. deletes its segments :data:`SEGMENTS_PER_STEP` at a time (each with its postings and child
   chunks), then its documents :data:`DOCUMENTS_PER_STEP` at a time, each step a transaction of
   its own, and last the row itself.

A process stopped anywhere in between leaves a row marked ``deleting``: the owner of the stores
finishes it in the background when it opens the knowledge base (:class:`DatasetPurger`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from sqlalchemy import delete, exists, select, update
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db import DatasetRow, DocumentRow
from zhiku.core.db.models import SegmentRow
from zhiku.knowledge_base.dataset_thread import DatasetThread

log = logging.getLogger(__name__)

#: Segments deleted per transaction, with their keyword postings and child chunks: about 0.7 s
#: on SQLite with ~25 postings a segment, at a hundred thousand segments as at a million; another
#: writer waits no longer than one step.
SEGMENTS_PER_STEP = 1_000
#: Documents deleted per transaction once their segments are gone (with their metadata values).
DOCUMENTS_PER_STEP = 1_000


def tombstone_name(dataset_id: str) -> str:
    """The name a dataset holds while it is deleted: one nobody can give a dataset (names are
    stripped of surrounding spaces), unique as the id is."""
    return f" deleting {dataset_id}"


def mark_deleting(sessions: sessionmaker[Session], dataset_id: str) -> bool:
    """Mark the dataset as being deleted and free its name; False if it is gone or already
    marked (another deletion has it)."""
    with sessions.begin() as session:
        marked = session.execute(
            update(DatasetRow)
            .where(DatasetRow.id == dataset_id, DatasetRow.deleting.is_(False))
            .values(deleting=True, name=tombstone_name(dataset_id))
            .execution_options(synchronize_session=False)
        )
        return bool(getattr(marked, "rowcount", 0))


def unfinished_deletions(sessions: sessionmaker[Session]) -> list[str]:
    """The datasets marked ``deleting`` whose rows are still there."""
    with sessions() as session:
        return list(session.scalars(select(DatasetRow.id).where(DatasetRow.deleting.is_(True))))


def purge_rows(
    sessions: sessionmaker[Session], dataset_id: str, *, stopping: threading.Event | None = None
) -> bool:
    """Delete a marked dataset's rows step by step (see the module docstring); True once the
    dataset's row is gone, False if ``stopping`` was set first (a later call goes on)."""
    for table, per_step in ((SegmentRow, SEGMENTS_PER_STEP), (DocumentRow, DOCUMENTS_PER_STEP)):
        while _rows_left(sessions, table, dataset_id):
            if stopping is not None and stopping.is_set():
                return False
            _delete_step(sessions, table, dataset_id, per_step)
    with sessions.begin() as session:
        session.execute(delete(DatasetRow).where(DatasetRow.id == dataset_id, DatasetRow.deleting.is_(True)))
    return True


def _rows_left(sessions: sessionmaker[Session], table: Any, dataset_id: str) -> bool:
    with sessions() as session:
        return bool(session.scalar(select(exists().where(table.dataset_id == dataset_id))))


def _delete_step(sessions: sessionmaker[Session], table: Any, dataset_id: str, limit: int) -> None:
    """Delete up to ``limit`` of the dataset's rows of ``table``, with what cascades from them.
    Another process deleting the same rows at once only makes this step delete fewer."""
    chosen = select(table.id).where(table.dataset_id == dataset_id).limit(limit)
    with sessions.begin() as session:
        session.execute(
            delete(table)
            .where(table.id.in_(chosen.scalar_subquery()))
            .execution_options(synchronize_session=False)
        )


class DatasetPurger(DatasetThread):
    """A thread that finishes deletions: drops each dataset's stores with ``drop_stores`` (which
    raises if this process cannot, leaving the deletion to a later open), then purges its rows.

    One thread at a time, started by :meth:`finish`; :meth:`stop` ends it after the current step.
    """

    def __init__(self, sessions: sessionmaker[Session], drop_stores: Callable[[str], None]) -> None:
        super().__init__("zhiku-dataset-purge")
        self._sessions = sessions
        self._drop_stores = drop_stores
        self._dropped: set[str] = set()  # pending deletions whose stores are already gone

    def finish(self, dataset_ids: list[str], *, stores_dropped: bool = False) -> None:
        """Finish these deletions in the background (their stores first, unless dropped)."""
        with self._lock:
            if stores_dropped:
                self._dropped.update(dataset_ids)
            self._queue(dataset_ids)

    def _work(self, dataset_id: str) -> None:
        with self._lock:
            dropped = dataset_id in self._dropped
        try:
            if not dropped:
                self._drop_stores(dataset_id)
            purge_rows(self._sessions, dataset_id, stopping=self._stopping)
        except Exception:  # noqa: BLE001 - the next open tries again; the thread goes on
            log.exception("could not finish deleting dataset %s; the next open tries again", dataset_id)
        else:
            with self._lock:
                self._dropped.discard(dataset_id)
