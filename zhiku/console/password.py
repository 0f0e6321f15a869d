"""The console password: an alternative to signing in with an API key, for the operator alone.

Set by ``zhiku console-password``; stored as an scrypt hash in ``<home>/console_password``
(mode 0600), never in clear. Signing in with it gives access to every dataset. Its fingerprint
is kept in the session, so changing the password signs every console session out.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from zhiku.core.errors import InvalidInput

PASSWORD_FILE = "console_password"
MIN_CHARS = 8
MAX_CHARS = 1024
#: scrypt cost: about 50 ms and 16 MiB per check on this kind of machine, so guessing is slow.
_N, _R, _P = 2**14, 8, 1


@dataclass(frozen=True)
class PasswordHash:
    salt: bytes
    digest: bytes

    @property
    def fingerprint(self) -> str:
        """Identifies this password in a session without revealing anything about it."""
        return hashlib.sha256(b"console-session:" + self.salt + self.digest).hexdigest()[:32]


def _scrypt(password: str, salt: bytes) -> bytes:
    return hashlib.scrypt(password.encode("utf-8"), salt=salt, n=_N, r=_R, p=_P, dklen=32)


class ConsolePassword:
    """Set and check the console password of one data directory."""

    def __init__(self, home: Path) -> None:
        self.path = home / PASSWORD_FILE

    def set(self, password: str) -> None:
        """Store a new password's hash (written whole, then moved into place, mode 0600)."""
        if not MIN_CHARS <= len(password) <= MAX_CHARS:
            raise InvalidInput(f"password: between {MIN_CHARS} and {MAX_CHARS} characters")
        salt = secrets.token_bytes(16)
        digest = _scrypt(password, salt).hex()
        record = {"scrypt": {"n": _N, "r": _R, "p": _P}, "salt": salt.hex(), "hash": digest}
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial = self.path.with_name(f".{PASSWORD_FILE}.{os.getpid()}")
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(record, handle)
        os.replace(partial, self.path)

    def clear(self) -> bool:
        """Remove the password (sign-in with API keys only); False when none was set."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        return True

    def stored(self) -> PasswordHash | None:
        try:
            record = json.loads(self.path.read_text(encoding="utf-8"))
            return PasswordHash(bytes.fromhex(record["salt"]), bytes.fromhex(record["hash"]))
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def verify(self, password: str) -> PasswordHash | None:
        """The stored hash when ``password`` matches it; None otherwise or when none is set."""
        stored = self.stored()
        if stored is None or not 0 < len(password) <= MAX_CHARS:
            return None
        if hmac.compare_digest(_scrypt(password, stored.salt), stored.digest):
            return stored
        return None
