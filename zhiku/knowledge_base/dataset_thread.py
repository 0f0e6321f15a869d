"""A background thread working through datasets one at a time: the deletions a delete leaves to
finish, the metadata values a change leaves to write into the points."""

from __future__ import annotations

import threading
from collections.abc import Iterable


class DatasetThread:
    """Runs :meth:`_work` for each dataset :meth:`_queue` is given, one at a time and in order, on
    one daemon thread started when there is work. A dataset queued again while its work runs is
    worked again after. :meth:`stop` ends the thread after the current work, which looks at
    ``_stopping`` between its steps."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._lock = threading.Lock()
        self._pending: list[str] = []
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()

    def _work(self, dataset_id: str) -> None:
        raise NotImplementedError

    def _queue(self, dataset_ids: Iterable[str]) -> None:
        """Queue these datasets and start the thread if it is not running; the caller holds
        ``_lock``."""
        if self._stopping.is_set():
            return
        self._pending.extend(d for d in dataset_ids if d not in self._pending)
        if self._pending and (self._thread is None or not self._thread.is_alive()):
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stopping.is_set():
            with self._lock:
                if not self._pending:
                    self._thread = None
                    return
                dataset_id = self._pending.pop(0)  # taken off first: queued again, worked again
            self._work(dataset_id)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the queued datasets are done (True) or ``timeout`` has passed."""
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def stop(self) -> None:
        """Stop after the current work; what is left waits for the next open."""
        self._stopping.set()
        self.wait()
