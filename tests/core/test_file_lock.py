"""The advisory file lock that keeps a second process off a data directory or a shard."""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path

import pytest

from zhiku.core import file_lock
from zhiku.core.errors import StoreError
from zhiku.core.file_lock import FileLock
from zhiku.datasource.points.collection import VectorSpec
from zhiku.datasource.points.edge import EdgeCollection

TRY_LOCK = "import sys; from zhiku.core.file_lock import FileLock; print(FileLock(sys.argv[1]).acquire())"

pytestmark = pytest.mark.skipif(file_lock.fcntl is None, reason="advisory locks are POSIX's")


def lock_taken_by_another_process(path: Path) -> bool:
    done = subprocess.run(
        [sys.executable, "-c", TRY_LOCK, str(path)], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.strip() == "True"


def test_a_held_lock_refuses_another_process_until_released(tmp_path: Path) -> None:
    lock = FileLock(tmp_path / "x.lock")
    assert lock.acquire() and lock.acquire()  # taking it again in the same holder is a no-op
    assert not lock_taken_by_another_process(tmp_path / "x.lock")
    assert not FileLock(tmp_path / "x.lock").acquire()  # a second holder in this process too
    lock.release()
    assert lock_taken_by_another_process(tmp_path / "x.lock")


def test_a_file_system_without_locks_is_an_error_not_another_holder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_locks(fd: int, operation: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(file_lock.fcntl, "flock", no_locks)
    with pytest.raises(OSError, match="No locks available"):
        FileLock(tmp_path / "x.lock").acquire()
    with pytest.raises(StoreError, match="cannot lock .*needs file locks"):
        EdgeCollection(tmp_path / "dense", VectorSpec("dense", 4))
