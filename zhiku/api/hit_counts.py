"""Segment hit counts, batched and written off the request path.

A retrieve call used to commit an ``UPDATE segments SET hit_count = hit_count + 1`` before it
answered: a write transaction (and, on SQLite, the database's one write lock) per search. Here a
call only adds its segment ids to an in-memory tally; a background thread writes the tally every
``interval`` seconds, one ``UPDATE`` per distinct increment.

What can be lost: the tally lives in memory, so a process that dies without closing (SIGKILL,
power loss) loses the counts of at most the last ``interval`` seconds, and never more than
``max_pending`` distinct segments' counts (a call that would grow the tally past that writes it
itself first). A clean shutdown (:meth:`HitCounter.close`, called by the app's context close)
writes everything. Counts are statistics: a failed write is logged and kept for the next flush
(within the same bound), never raised into a search.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db import SegmentRow

log = logging.getLogger(__name__)

#: Seconds between background writes: the most a crash can lose.
FLUSH_INTERVAL = 1.0
#: Distinct segments held before a caller writes the tally itself: the most a crash can lose.
MAX_PENDING = 10_000

Writer = Callable[[Mapping[str, int]], None]


def segment_hit_writer(sessions: sessionmaker[Session]) -> Writer:
    """Adds each count to its segment's ``hit_count`` in one transaction (a deleted segment's
    count is dropped: the ``UPDATE`` matches nothing)."""

    def write(counts: Mapping[str, int]) -> None:
        by_increment: dict[int, list[str]] = {}
        for segment_id, count in counts.items():
            by_increment.setdefault(count, []).append(segment_id)
        with sessions.begin() as session:
            for increment, ids in sorted(by_increment.items()):
                for start in range(0, len(ids), 500):  # under SQLite's bound-parameter limit
                    session.execute(
                        update(SegmentRow)
                        .where(SegmentRow.id.in_(sorted(ids[start : start + 500])))
                        .values(hit_count=SegmentRow.hit_count + increment)
                    )

    return write


class HitCounter:
    """``add(ids)`` counts one hit per id; a daemon thread writes the tally every ``interval``
    seconds; ``flush()`` writes it now; ``close()`` stops the thread after a last write."""

    def __init__(
        self, write: Writer, *, interval: float = FLUSH_INTERVAL, max_pending: int = MAX_PENDING
    ) -> None:
        self._write = write
        self._interval = interval
        self._max_pending = max_pending
        self._pending: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._writing = threading.Lock()  # one write at a time, so no count is written twice
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> HitCounter:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="zhiku-hit-counts", daemon=True)
            self._thread.start()
        return self

    def add(self, segment_ids: Iterable[str]) -> None:
        """One hit for each id (a repeated id counts once per call, as a search answers it once)."""
        ids = set(segment_ids)
        if not ids:
            return
        with self._lock:
            full = len(self._pending) + len(ids) > self._max_pending
        if full:
            self.flush()
        with self._lock:
            self._pending.update(ids)

    def pending(self, segment_ids: Sequence[str]) -> dict[str, int]:
        """Counts added but not yet written, for these ids (absent: none pending)."""
        with self._lock:
            return {i: self._pending[i] for i in segment_ids if i in self._pending}

    def flush(self) -> None:
        """Write the tally now (readers of ``hit_count`` call it to see every count so far)."""
        with self._writing:
            with self._lock:
                counts, self._pending = self._pending, Counter()
            if not counts:
                return
            try:
                self._write(counts)
            except Exception:
                log.warning(
                    "writing %d segments' hit counts failed; kept for the next flush",
                    len(counts),
                    exc_info=True,
                )
                with self._lock:
                    room = self._max_pending - len(self._pending)
                    for segment_id, count in list(counts.items())[: max(room, 0)]:
                        self._pending[segment_id] += count

    def close(self, timeout: float = 10.0) -> None:
        """Stop the background thread and write what is pending."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self.flush()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            self.flush()
