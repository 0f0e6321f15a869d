"""The rate limits' in-memory counters without a thread started per request.

The ``limits`` package's memory storage forgets expired counts on a timer thread that lives
10 ms: every counted request that finds it gone starts a new one, and waits on the request's
path for it to be scheduled (slowest on a busy machine). Here one thread, started
with the storage, forgets expired counts every :data:`SWEEP_SECONDS`: between two sweeps a key
keeps at most its limit of live entries plus those expired since (a moving window refuses a hit
past its limit, and reads only the live entries), as with the base class's timer.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from limits.storage import MemoryStorage

#: Seconds between two sweeps of expired counts.
SWEEP_SECONDS = 1.0
#: The ``storage_uri`` scheme of :class:`SweptMemoryStorage` (``zhiku-memory://``).
SCHEME = "zhiku-memory"


class SweptMemoryStorage(MemoryStorage):
    """``memory://`` with expired counts swept by one long-lived thread (which ends when the
    storage is no longer used)."""

    STORAGE_SCHEME = [SCHEME]

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options: Any) -> None:
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)
        self.sweeper = threading.Thread(
            target=_sweep_while_used, args=(weakref.ref(self),), name="zhiku-limit-sweep", daemon=True
        )
        self.sweeper.start()

    def _MemoryStorage__schedule_expiry(self) -> None:
        """The base class starts its timer thread here, on every hit; the sweeper does its work."""

    def sweep(self) -> None:
        """Forget the counts whose time is up, and the keys left with none (the base class keeps
        an empty list per key: one per client address ever seen, without bound)."""
        self._MemoryStorage__expire_events()  # type: ignore[attr-defined]
        for key in list(self.events):
            with self.locks[key]:
                if not self.events.get(key):
                    self.events.pop(key, None)
            self.locks.pop(key, None)


def _sweep_while_used(storage_ref: weakref.ref[SweptMemoryStorage]) -> None:
    stop = threading.Event()  # only waited on: a sleep that holds no reference to the storage
    while not stop.wait(SWEEP_SECONDS):
        storage = storage_ref()
        if storage is None:
            return
        storage.sweep()
        del storage
