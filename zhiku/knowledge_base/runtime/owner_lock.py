"""Which process may clean up after a crash: the one holding the data directory's owner lock.

Opening a knowledge base marks documents caught mid-ingest as interrupted. That is right after a
crash and wrong while another process — a running ``zhiku serve`` — is indexing them: a
``zhiku dataset list`` beside it would fail the server's work. So only the process that gets an
exclusive ``flock`` on ``<home>/zhiku.lock`` recovers; the lock is released by the kernel when
its holder exits, however it exits, so a crashed owner never blocks recovery. Several machines
sharing one PostgreSQL database do not share the lock file: there the owner also needs to be the
only server connected to the database (``db_locks.ServerPresence``).
"""

from __future__ import annotations

from pathlib import Path

from zhiku.core.file_lock import FileLock

LOCK_FILE = "zhiku.lock"


class OwnerLock:
    """An exclusive, non-blocking lock on ``home/zhiku.lock``; ``held`` says whether we got it."""

    def __init__(self, home: Path, *, take: bool = True) -> None:
        self._lock = FileLock(home / LOCK_FILE)
        self.held = False
        if take:  # a process that must never own the stores (a Celery worker) does not try
            try:
                self.held = self._lock.acquire()
            except OSError:  # no lock to be had here: this process does not recover either
                self.held = False

    def release(self) -> None:
        self._lock.release()
