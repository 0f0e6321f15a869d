"""Who is signed in to the console: the session holds an API key's id (never the key) or the
console password's fingerprint, checked again on every page, so a revoked key or a changed
password ends its sessions at once."""

from __future__ import annotations

import hmac
import secrets

from flask import session

from zhiku.api.auth import Principal
from zhiku.api.context import context
from zhiku.api.keys import ApiKey
from zhiku.console.password import ConsolePassword, PasswordHash

#: The principal of a password sign-in: every dataset, and its own conversations.
PASSWORD_PRINCIPAL_ID = "console"


def password_store() -> ConsolePassword:
    return ConsolePassword(context().settings.home)


def signed_in() -> Principal | None:
    """The session's principal, or None when nobody is signed in (or the sign-in lapsed)."""
    key_id = session.get("key_id")
    if isinstance(key_id, str):
        key = context().keys.active(key_id)
        if key is None:
            return None
        return Principal(key.id, frozenset(key.datasets) if key.datasets is not None else None)
    fingerprint = session.get("password")
    if isinstance(fingerprint, str):
        stored = password_store().stored()
        if stored is not None and hmac.compare_digest(stored.fingerprint, fingerprint):
            return Principal(PASSWORD_PRINCIPAL_ID, None)
    return None


def _fresh_session() -> None:
    """A new session for a new sign-in: nothing (a CSRF token included) carries over."""
    session.clear()
    session.permanent = True
    session["sid"] = secrets.token_urlsafe(16)


def sign_in_with_key(key: ApiKey) -> None:
    _fresh_session()
    session["key_id"] = key.id


def sign_in_with_password(stored: PasswordHash) -> None:
    _fresh_session()
    session["password"] = stored.fingerprint

