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

import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: no advisory locks, every process recovers
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = "zhiku.lock"


class OwnerLock:
    """An exclusive, non-blocking lock on ``home/zhiku.lock``; ``held`` says whether we got it."""

    def __init__(self, home: Path, *, take: bool = True) -> None:
        self._fd: int | None = None
        self.held: bool
        if not take:  # a process that must never own the stores (a Celery worker)
            self.held = False
            return
        if fcntl is None:
            self.held = True
            return
        fd = os.open(home / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            self.held = False
            return
        self._fd = fd
        self.held = True

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None
