"""Per-key and per-address limits: requests per minute (Flask-Limiter), documents queued.

Every operation belongs to one route class — ``read`` (GET), ``search`` (retrieval, chat),
``ingest`` (a document created or replaced) or ``write`` (every other change) — and each class
has its own requests-per-minute limit per API key (settings ``rate_limit_<class>``, 0: none, the
default). A request past its limit is answered 429 ``rate_limited`` with ``Retry-After``. The
counter is keyed by a hash of the bearer key as sent, or by the client address without one: the
connection's, or what a trusted proxy forwarded (setting ``trusted_proxies``, see
:class:`ClientAddress`). A counter per key cannot slow guessing (each guess is a new key; a key's
random part is beyond guessing anyway); the console's sign-in, where a password may be guessed,
counts its failures per client address instead (:meth:`RateLimits.address_key`).

Every API request also counts against its client address, whatever key it carries (setting
``rate_limit_per_address``, 1,200 a minute by default; 0: none): one address holds the threads
of ``zhiku serve`` only so long, with one key or many. The address is the one
:class:`ClientAddress` finds; requests from the loopback (the CLI, the console opened on this
machine, a reverse proxy on this machine not listed in ``trusted_proxies``) are not counted.

A key may also have at most ``queue_max_per_key`` documents waiting or being indexed at once
(429 ``queue_full``), so one caller cannot bury the indexing workers under its uploads.
"""

from __future__ import annotations

import hashlib
import ipaddress
import threading
from collections.abc import Callable, Sequence
from typing import Literal

from flask import Flask, request
from flask.typing import ResponseReturnValue
from flask_limiter import Limiter

from zhiku.api.errors import ADDRESS_SCOPE, ApiError
from zhiku.api.limit_storage import SCHEME
from zhiku.core.config import Settings
from zhiku.core.document_status import IN_PROGRESS, DocumentStatus
from zhiku.knowledge_base.indexing.document_states import DocumentStates

RouteClass = Literal["read", "write", "search", "ingest"]
View = Callable[..., ResponseReturnValue]

#: ``/retrieval`` is Dify's External Knowledge API: a search like the others, though public in
#: the route table (it checks its key itself, to answer with Dify's errors).
_SEARCH_PATHS = (
    "/retrieve",
    "/retrieval",
    "/hit-testing",
    "/kb-search",
    "/chat-messages",
    "/chat/completions",
)
_INGEST_PATHS = ("/create-by-", "/create_by_", "/update-by-", "/update_by_", "/retry")


def route_class(method: str, path: str) -> RouteClass:
    """The class of an operation, from its method and OpenAPI path."""
    if any(path.endswith(tail) for tail in _SEARCH_PATHS):
        return "search"
    if method == "GET":
        return "read"
    if any(part in path for part in _INGEST_PATHS):
        return "ingest"
    return "write"


class ClientAddress:
    """The address of the client of this request: the connection's own, unless it comes from a
    trusted proxy (setting ``trusted_proxies``); then the nearest ``X-Forwarded-For`` hop that
    is not a trusted proxy itself. Entries before it were written by the client and are ignored:
    the client may forge them, the proxies append what they saw."""

    def __init__(self, trusted_proxies: Sequence[str] = ()) -> None:
        self._trusted = [ipaddress.ip_network(item, strict=False) for item in trusted_proxies]

    def _is_trusted(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in network for network in self._trusted)

    def __call__(self) -> str:
        remote = request.remote_addr or ""
        if not self._trusted or not self._is_trusted(remote):
            return remote
        hops = [hop.strip() for line in request.headers.getlist("X-Forwarded-For") for hop in line.split(",")]
        for hop in reversed(hops):
            if not self._is_trusted(hop):
                return hop[:64]
        return remote


def bearer_digest() -> str | None:
    """A hash of the bearer key as sent, or None without one."""
    _, _, token = request.headers.get("Authorization", "").partition(" ")
    token = token.strip()
    if not token:
        return None
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()[:32]


class RateLimits:
    """The app's Flask-Limiter (in-memory counters: one server process, see
    :mod:`zhiku.api.limit_storage`) and the limit of each route class from the settings."""

    def __init__(self, app: Flask, settings: Settings) -> None:
        self.per_minute: dict[RouteClass, int] = {
            "read": settings.rate_limit_read,
            "write": settings.rate_limit_write,
            "search": settings.rate_limit_search,
            "ingest": settings.rate_limit_ingest,
        }
        self.per_address = settings.rate_limit_per_address
        self.client_address = ClientAddress(settings.trusted_proxies)
        self.limiter = Limiter(
            self.caller_key,
            app=app,
            storage_uri=f"{SCHEME}://",
            headers_enabled=True,
            strategy="moving-window",
        )

    def caller_key(self) -> str:
        """Who an API rate limit counts: the bearer key as sent (hashed), else the client address."""
        digest = bearer_digest()
        return f"key:{digest}" if digest is not None else f"addr:{self.client_address()}"

    def address_key(self) -> str:
        """Who a limit on guessing counts (console sign-in): the client address only. Never a
        header the client chooses freely: each new value would be a fresh counter."""
        return f"addr:{self.client_address()}"

    def from_loopback(self) -> bool:
        """Whether the client is on this machine (not counted by the per-address limit)."""
        try:
            return ipaddress.ip_address(self.client_address()).is_loopback
        except ValueError:
            return False

    def applies_to(self, method: str, path: str, public: bool) -> bool:
        """Whether an operation is counted per key: every one that needs a key, and a public one
        that searches (a public read, the OpenAPI document, is not)."""
        return not public or route_class(method, path) == "search"

    def apply(self, view: View, method: str, path: str, public: bool = False) -> View:
        """``view`` counted against its route class's limit per key (see :meth:`applies_to`) and
        against the limit per address (each unchanged when it is 0)."""
        kind = route_class(method, path)
        limit = self.per_minute[kind]
        if limit and self.applies_to(method, path, public):
            view = self.limiter.shared_limit(f"{limit}/minute", scope=kind)(view)
        if self.per_address:
            view = self.limiter.shared_limit(
                f"{self.per_address}/minute",
                scope=ADDRESS_SCOPE,
                key_func=self.address_key,
                exempt_when=self.from_loopback,
                error_message=f"{self.per_address} per minute, setting rate_limit_per_address",
            )(view)
        return view


class QueueQuota:
    """Documents each key has waiting or being indexed, at most ``limit`` (0: no limit).

    Counted in this process: the ids a key queued are kept until they are no longer waiting or
    in progress, so the memory a key holds is bounded by the limit itself.
    """

    def __init__(self, states: DocumentStates, limit: int) -> None:
        self._states = states
        self.limit = limit
        self._queued: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def admit(self, key: str, count: int = 1) -> None:
        """429 ``queue_full`` when ``key`` already has ``limit`` documents queued."""
        if not self.limit:
            return
        with self._lock:
            queued = self._queued.get(key, set())
            active = self._states.among(queued, (DocumentStatus.WAITING, *IN_PROGRESS)) if queued else set()
            if active:
                self._queued[key] = active
            else:
                self._queued.pop(key, None)
            if len(active) + count > self.limit:
                raise ApiError(
                    429,
                    "queue_full",
                    f"this API key has {len(active)} documents waiting or being indexed (the limit is "
                    f"{self.limit}); send more when some are done",
                    headers={"Retry-After": "60"},
                )

    def record(self, key: str, document_ids: list[str]) -> None:
        if not self.limit:
            return
        with self._lock:
            self._queued.setdefault(key, set()).update(document_ids)
