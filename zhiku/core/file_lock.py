"""An exclusive, non-blocking advisory lock on a file: how a process tells that a directory is
another running process's. The kernel drops the lock when its holder exits, however it exits, so
a crash never leaves a directory locked."""

from __future__ import annotations

import os
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: no advisory locks, every process gets the lock
    fcntl = None  # type: ignore[assignment]


class FileLock:
    """An exclusive ``flock`` on ``path`` (created if missing), taken by :meth:`acquire`.

    A second lock on the same file fails while the first is held, in another process or in
    this one (each lock opens the file anew).
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take the lock if no one holds it; whether it is held now. OSError when the file
        cannot be opened or locked at all (a file system without locks), which is not the same
        as another holder."""
        if self._fd is not None:
            return True
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return False
            except OSError:
                os.close(fd)
                raise
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None
