"""The data directory and its files are the owner's alone: directories 0700, files 0600.

They hold documents, API key hashes, the secret key and the database; another account on the
machine has no business reading any of it. Only paths this process owns are tightened (an
operator's shared mount stays as it is).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

DIRECTORY_MODE = 0o700
FILE_MODE = 0o600


def private_directory(path: Path) -> Path:
    """Create ``path`` (and its parents) as 0700, or tighten it to 0700 if it is ours."""
    path.mkdir(mode=DIRECTORY_MODE, parents=True, exist_ok=True)
    _tighten(path, DIRECTORY_MODE)
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty as 0600 if it is missing, or tighten it to 0600 if it is ours."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
    except FileExistsError:
        _tighten(path, FILE_MODE)
    return path


def _tighten(path: Path, mode: int) -> None:
    try:
        info = path.stat()
        if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) & ~mode:
            path.chmod(mode)
    except OSError:
        pass  # a read-only mount, a path we cannot stat: leave it
