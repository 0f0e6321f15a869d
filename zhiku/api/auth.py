"""Who is calling: the API key of ``Authorization: Bearer <key>`` and the datasets it may use.

A key outside its scope is answered as if the dataset did not exist (404), so a key learns
nothing about datasets it cannot use; only creating datasets is refused outright (403).
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from flask import g, request

from zhiku.api.errors import ApiError
from zhiku.api.keys import ApiKeys


@dataclass(frozen=True)
class Principal:
    """The caller. ``datasets`` is None when every dataset is allowed."""

    key_id: str | None
    datasets: frozenset[str] | None

    def can_use(self, dataset_id: str) -> bool:
        return self.datasets is None or dataset_id in self.datasets


#: The caller of an app made with ``auth=False`` (a trusted process embedding the API).
TRUSTED = Principal(key_id=None, datasets=None)


#: The principal of a command run beside the server with its local token (see ``server_file``).
LOCAL = Principal(key_id="local", datasets=None)


def authenticate(keys: ApiKeys, local_token: str | None = None) -> Principal:
    """The principal of the request's bearer key; 401 when it is missing, unknown or revoked."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    token = token.strip()
    challenge = {"WWW-Authenticate": 'Bearer realm="zhiku"'}
    if scheme.lower() != "bearer" or not token:
        raise ApiError(401, "unauthorized", "send an API key: Authorization: Bearer <key>", headers=challenge)
    if local_token is not None and hmac.compare_digest(token.encode(), local_token.encode()):
        return LOCAL
    key = keys.verify(token)
    if key is None:
        raise ApiError(401, "unauthorized", "invalid or revoked API key", headers=challenge)
    return Principal(key.id, frozenset(key.datasets) if key.datasets is not None else None)


def principal() -> Principal:
    """The principal of the current request (set by the route wrapper)."""
    return g.zhiku_principal  # type: ignore[no-any-return]


def require_unscoped(action: str) -> None:
    """403 for a dataset-scoped key asking for something beyond its datasets."""
    if principal().datasets is not None:
        raise ApiError(403, "forbidden", f"this API key is limited to some datasets and cannot {action}")
