"""The background optimize: a dataset's indexes are built again once its indexing settles.

Documents written through the API, the console or Celery workers go into stores whose indexes
only ``optimize`` builds: the embedded vector store scans exactly until then, pgvector has no
HNSW graph, BM25 records keep the average document length of the time they were written and,
on qdrant-edge, deleted points still count in the IDF. So ``zhiku serve`` runs an
:class:`AutoOptimizer` thread beside its indexing (threads, or the writer of versions Celery
workers hand over; with stores on a server, Celery workers write them and any API process may
optimize). A dataset is optimized when

- it has settled: no document of it waiting or being indexed, and no point written for
  ``optimize_quiet_seconds`` — a burst of uploads is optimized once, after it;
- enough changed (:class:`OptimizePolicy`): points written or deleted since the last optimize
  (``dataset_changes``, kept in the database so a restart does not forget them) reach
  ``max(optimize_min_changes, optimize_change_fraction × its points)``. Below a thousand points
  an exact scan takes about a millisecond; past it, a tenth of the dataset scanned exactly
  costs about what the graph search does, and BM25's average length moves by a few percent at
  most. Each optimize rebuilds from all points, so its cost per changed point stays bounded at
  about ten times a point's share of one build.

One optimize at a time per process, one per dataset across processes (a PostgreSQL advisory
lock; on SQLite one process serves the database). Searches go on meanwhile; the dataset's writes
wait for it, and a delete in this process or the server stopping stops it (the embedded build's
child process is killed; see ``DatasetIndex.optimize``). A failed optimize is tried again after
:data:`RETRY_SECONDS`.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from sqlalchemy import ColumnElement, Engine, Exists, exists, func, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from zhiku.core.cancellation import CancelToken
from zhiku.core.config import Settings
from zhiku.core.db.models import ChildChunkRow, DatasetChangesRow, DatasetRow, DocumentRow, SegmentRow, utcnow
from zhiku.core.document_status import IN_PROGRESS, DocumentStatus
from zhiku.core.errors import Cancelled, StoreBusy
from zhiku.knowledge_base.runtime.db_locks import try_lock

if TYPE_CHECKING:
    from zhiku.knowledge_base.knowledge_base import KnowledgeBase

log = logging.getLogger(__name__)

#: Seconds before a dataset whose optimize failed (or whose stores this process may not open)
#: is tried again.
RETRY_SECONDS = 600.0
#: Why a running optimize was stopped by :meth:`AutoOptimizer.stop`.
STOPPING = "the server is stopping"
_UNSETTLED = [str(status) for status in (*IN_PROGRESS, DocumentStatus.WAITING)]


@dataclass(frozen=True)
class OptimizePolicy:
    """When a dataset is due (the settings ``optimize_*``)."""

    min_changes: int
    fraction: float
    quiet_seconds: float

    @classmethod
    def from_settings(cls, settings: Settings) -> OptimizePolicy:
        return cls(
            settings.optimize_min_changes, settings.optimize_change_fraction, settings.optimize_quiet_seconds
        )

    @property
    def enabled(self) -> bool:
        return self.min_changes > 0

    def bound(self, points: int) -> float:
        """Changes a dataset of ``points`` store points needs before it is optimized."""
        return max(float(self.min_changes), self.fraction * points)

    def candidates(self, session: Session) -> list[str]:
        """Settled datasets with enough changes for the smallest dataset, oldest change first
        (the cheap first look; :meth:`due` decides)."""
        return list(
            session.scalars(
                select(DatasetChangesRow.dataset_id)
                .where(*self._settled())
                .order_by(DatasetChangesRow.changed_at)
            )
        )

    def due(self, session: Session, dataset_id: str) -> bool:
        """Whether the dataset has settled and changed enough for its size."""
        if not self.enabled:
            return False
        changed = session.scalar(
            select(DatasetChangesRow.points_changed).where(
                DatasetChangesRow.dataset_id == dataset_id, *self._settled()
            )
        )
        return changed is not None and changed >= self.bound(store_points(session, dataset_id))

    def _settled(self) -> list[ColumnElement[bool]]:
        """A ``dataset_changes`` row with enough changes for the smallest dataset, none within the
        quiet period, no document of its dataset waiting or being indexed, and its dataset not
        being deleted (its rows go step by step, this one last)."""
        return [
            DatasetChangesRow.points_changed >= self.min_changes,
            DatasetChangesRow.changed_at <= utcnow() - timedelta(seconds=self.quiet_seconds),
            ~_pending_documents(DatasetChangesRow.dataset_id),
            ~exists().where(DatasetRow.id == DatasetChangesRow.dataset_id, DatasetRow.deleting.is_(True)),
        ]


def _pending_documents(dataset: InstrumentedAttribute[str]) -> Exists:
    """A document of the outer query's ``dataset`` is waiting or being indexed."""
    return exists().where(DocumentRow.dataset_id == dataset, DocumentRow.status.in_(_UNSETTLED))


def store_points(session: Session, dataset_id: str) -> int:
    """About how many points the dataset's stores hold: its segments and child chunks (a parent
    segment is counted although its children are its points: the bound is a proportion)."""
    segments = session.scalar(select(func.count()).where(SegmentRow.dataset_id == dataset_id)) or 0
    children = session.scalar(select(func.count()).where(ChildChunkRow.dataset_id == dataset_id)) or 0
    return int(segments) + int(children)


class AutoOptimizer:
    """A thread optimizing due datasets every ``poll_seconds`` (sooner when woken) until :meth:`stop`."""

    def __init__(self, kb: KnowledgeBase, *, poll_seconds: float = 5.0) -> None:
        self._kb = kb
        self._policy = OptimizePolicy.from_settings(kb.settings)
        engine = kb.sessions.kw.get("bind")
        assert isinstance(engine, Engine)
        self._engine = engine
        self._poll_seconds = poll_seconds
        self._stopping = threading.Event()
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._running: CancelToken | None = None
        #: dataset id → when (monotonic) it may be tried again after a failure
        self._retry_at: dict[str, float] = {}
        self._thread = threading.Thread(target=self._run, name="zhiku-optimizer", daemon=True)

    def start(self) -> None:
        if self._policy.enabled:
            self._thread.start()

    def wake(self) -> None:
        """Look for due datasets now (a document was just written)."""
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop looking, and stop the optimize running (its build is killed); True if the thread
        ended within ``timeout`` seconds."""
        self._stopping.set()
        with self._lock:
            if self._running is not None:
                self._running.cancel(STOPPING)
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        return not self._thread.is_alive()

    def run_once(self) -> list[str]:
        """Optimize every dataset due now, one after another; returns their ids. First, have the
        metadata values other processes changed written into the store points (see
        ``metadata_points``: the background thread of this process does it)."""
        self._kb.sync_metadata_points()
        with self._kb.sessions() as session:
            candidates = self._policy.candidates(session)
        done = []
        for dataset_id in candidates:
            if self._stopping.is_set():
                break
            if self._retry_at.get(dataset_id, 0.0) > time.monotonic():
                continue
            # a large dataset past the smallest bound but not its own: no lock, no opened stores
            if not self._due(dataset_id):
                continue
            if self._optimize(dataset_id):
                done.append(dataset_id)
        return done

    def _optimize(self, dataset_id: str) -> bool:
        with try_lock(self._engine, f"optimize:{dataset_id}") as taken:
            if not taken:
                return False  # another process optimizes it now
            token = CancelToken()
            with self._lock:
                if self._stopping.is_set():
                    return False
                self._running = token
            started = time.monotonic()
            try:
                # looked at again under the write lock: optimized meanwhile, or a document came
                if not self._kb.dataset_index(dataset_id).optimize(token, when=lambda: self._due(dataset_id)):
                    return False
            except Cancelled as exc:
                log.info("optimize of dataset %s stopped (%s); tried again later", dataset_id, exc)
                return False
            except StoreBusy:
                log.info("dataset %s: its stores are another process's to optimize", dataset_id)
                self._retry_at[dataset_id] = time.monotonic() + RETRY_SECONDS
                return False
            except Exception:  # noqa: BLE001 - one dataset's failure must not end the optimizer
                log.exception("optimizing dataset %s failed; tried again later", dataset_id)
                self._retry_at[dataset_id] = time.monotonic() + RETRY_SECONDS
                return False
            finally:
                with self._lock:
                    self._running = None
        log.info("optimized dataset %s in %.1f s", dataset_id, time.monotonic() - started)
        self._retry_at.pop(dataset_id, None)
        return True

    def _due(self, dataset_id: str) -> bool:
        with self._kb.sessions() as session:
            return self._policy.due(session, dataset_id)

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self.run_once()
            except Exception:  # noqa: BLE001 - a database hiccup must not end the optimizer
                log.exception("looking for datasets to optimize failed")
            self._wake.wait(self._poll_seconds)
            self._wake.clear()
