"""The key that signs console session cookies, kept in ``<home>/console_secret`` (mode 0600), so
sessions survive a restart of ``zhiku serve``; deleting the file signs every session out."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

SECRET_FILE = "console_secret"


def console_secret_key(home: Path) -> bytes:
    """The stored key, made (64 random bytes) on first use; a racing process's key wins whole."""
    path = home / SECRET_FILE
    if not path.exists():
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        temp = home / f".{SECRET_FILE}.{os.getpid()}"
        descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="ascii") as handle:
            handle.write(secrets.token_hex(64))
        try:
            os.link(temp, path)
        except FileExistsError:
            pass
        finally:
            temp.unlink()
    return path.read_text(encoding="ascii").strip().encode("ascii")
