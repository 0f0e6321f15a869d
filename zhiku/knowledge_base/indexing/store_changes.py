"""How many of a dataset's store points changed since its indexes were last built.

Every write and delete of points adds to the dataset's ``dataset_changes`` row; an optimize
takes back what it saw when it began (writes wait for it, so that is all of them). The
background optimizer (:mod:`zhiku.knowledge_base.runtime.auto_optimize`) reads the rows to find
the datasets that are due. The count is a short transaction of its own after the store write,
not part of the rows' commit: a crash between the two loses a count, never a document.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db.inserts import insert_missing
from zhiku.core.db.models import DatasetChangesRow, utcnow

log = logging.getLogger(__name__)

_CHANGED = DatasetChangesRow.points_changed


class StoreChanges:
    """The change count of one dataset's stores."""

    def __init__(self, sessions: sessionmaker[Session], dataset_id: str) -> None:
        self._sessions = sessions
        self._dataset_id = dataset_id

    def add(self, points: int) -> None:
        """Count ``points`` written or deleted now. Best effort: the write it counts is done (a
        dataset deleted meanwhile has no row to count in)."""
        if points <= 0:
            return
        try:
            with self._sessions.begin() as session:
                self._update(session, points_changed=_CHANGED + points, changed_at=utcnow())
        except Exception:  # noqa: BLE001 - a lost count delays an optimize, nothing more
            log.warning("could not count %d changed points of %s", points, self._dataset_id, exc_info=True)

    def pending(self) -> int:
        """Points changed since the last optimize began."""
        with self._sessions() as session:
            row = session.get(DatasetChangesRow, self._dataset_id)
            return row.points_changed if row is not None else 0

    def optimized(self, seen: int) -> None:
        """An optimize that began with ``seen`` points changed has ended: take them back."""
        with self._sessions.begin() as session:
            self._update(session, points_changed=_CHANGED - seen, optimized_at=utcnow())

    def _update(self, session: Session, **values: Any) -> None:
        """Set ``values`` on the dataset's row, made first if it has none."""
        session.execute(insert_missing(session, DatasetChangesRow).values(dataset_id=self._dataset_id))
        session.execute(
            update(DatasetChangesRow).where(DatasetChangesRow.dataset_id == self._dataset_id).values(**values)
        )
