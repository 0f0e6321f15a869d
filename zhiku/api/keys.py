"""API keys: shown once at creation, stored as a sha256 hash with a short prefix to recognise them.

A key is ``zk-`` followed by 43 random URL-safe characters (256 bits). A key may be scoped to
datasets: it then sees only those and cannot create datasets.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import or_, select, update
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.config import Settings
from zhiku.core.db import make_engine, make_session_factory
from zhiku.core.db.models import ApiKeyRow, DatasetRow, utcnow
from zhiku.core.errors import InvalidInput, NotFound

log = logging.getLogger(__name__)

KEY_PREFIX = "zk-"
_SHOWN_PREFIX = 10
#: Seconds a verified key is trusted without reading the database again: a key revoked by
#: another process (``zhiku apikey revoke``) stops working within this time; one revoked through
#: the same :class:`ApiKeys` stops at once.
VERIFY_CACHE_SECONDS = 1.0
#: Verified keys remembered at most (the oldest are forgotten first).
_VERIFY_CACHE_SIZE = 1024
#: A key's ``last_used_at`` is written when older than this: one write a minute per key in use,
#: not one per request.
USE_RECORDED_EVERY = timedelta(minutes=1)


@dataclass(frozen=True)
class ApiKey:
    """A stored key without its secret. ``datasets`` is None for a key valid for every dataset."""

    id: str
    name: str
    prefix: str
    datasets: tuple[str, ...] | None
    created_at: datetime
    revoked_at: datetime | None
    #: when a request last used it (to :data:`USE_RECORDED_EVERY`); None: never
    last_used_at: datetime | None = None

    @classmethod
    def of(cls, row: ApiKeyRow) -> ApiKey:
        scope = tuple(row.datasets) if row.datasets is not None else None
        return cls(row.id, row.name, row.prefix, scope, row.created_at, row.revoked_at, row.last_used_at)


def _aware(moment: datetime) -> datetime:
    """A stored time in UTC (SQLite gives it back without its zone)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class ApiKeys:
    """Create, verify, list and revoke keys in the metadata database."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        *,
        cache_seconds: float = VERIFY_CACHE_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sessions = sessions
        self._cache_seconds = cache_seconds
        self._clock = clock
        # key hash -> (key, when verified): only valid keys, so a new key works at once
        self._verified: dict[str, tuple[ApiKey, float]] = {}
        self._lock = threading.Lock()

    def create(self, *, name: str = "", datasets: Sequence[str] | None = None) -> tuple[ApiKey, str]:
        """A new key and its secret; the secret is not stored and cannot be shown again."""
        secret = KEY_PREFIX + secrets.token_urlsafe(32)
        row = ApiKeyRow(
            name=name,
            prefix=secret[:_SHOWN_PREFIX],
            key_hash=_digest(secret),
            datasets=list(dict.fromkeys(datasets)) if datasets is not None else None,
        )
        with self._sessions.begin() as session:
            session.add(row)
        return ApiKey.of(row), secret

    def verify(self, secret: str) -> ApiKey | None:
        """The key with this secret, unless unknown or revoked. A valid key is remembered for
        ``cache_seconds`` (by its hash, never the secret), sparing every API call a query."""
        digest = _digest(secret)
        now = self._clock()
        with self._lock:
            cached = self._verified.get(digest)
        if cached is not None and now - cached[1] < self._cache_seconds:
            return cached[0]
        with self._sessions() as session:
            row = session.scalar(select(ApiKeyRow).where(ApiKeyRow.key_hash == digest))
            key = None if row is None or row.revoked_at is not None else ApiKey.of(row)
        if key is not None:
            self._record_use(key)
        with self._lock:
            if key is None:
                self._verified.pop(digest, None)
            elif self._cache_seconds > 0:
                if len(self._verified) >= _VERIFY_CACHE_SIZE:
                    self._verified.pop(next(iter(self._verified)))
                self._verified[digest] = (key, now)
        return key

    def _record_use(self, key: ApiKey) -> None:
        now = utcnow()
        last = key.last_used_at
        if last is not None and now - _aware(last) < USE_RECORDED_EVERY:
            return
        try:
            with self._sessions.begin() as session:
                session.execute(update(ApiKeyRow).where(ApiKeyRow.id == key.id).values(last_used_at=now))
        except OperationalError as exc:  # a busy database: the request goes on, the next one records it
            log.debug("key %s: last use not recorded (%s)", key.id, exc)

    def active(self, key_id: str) -> ApiKey | None:
        """The key with this id, unless unknown or revoked (a console session checks it on each page)."""
        with self._sessions() as session:
            row = session.get(ApiKeyRow, key_id)
            if row is None or row.revoked_at is not None:
                return None
            return ApiKey.of(row)

    def stored(self) -> list[ApiKey]:
        with self._sessions() as session:
            return [
                ApiKey.of(row) for row in session.scalars(select(ApiKeyRow).order_by(ApiKeyRow.created_at))
            ]

    def dataset_ids(self, names_or_ids: Sequence[str]) -> list[str]:
        """The ids of datasets given by name or id, for a key's scope; NotFound for an unknown one."""
        ids = []
        with self._sessions() as session:
            for wanted in names_or_ids:
                found = session.scalar(
                    select(DatasetRow.id).where(
                        or_(DatasetRow.id == wanted, DatasetRow.name == wanted),
                        DatasetRow.deleting.is_(False),
                    )
                )
                if found is None:
                    raise NotFound(f"no dataset {wanted!r}")
                ids.append(found)
        return ids

    def revoke(self, id_or_prefix: str) -> ApiKey:
        """Revoke a key by id or by its shown prefix (which must match one key only)."""
        with self._sessions.begin() as session:
            row = session.get(ApiKeyRow, id_or_prefix)
            if row is None:
                matches = session.scalars(
                    select(ApiKeyRow).where(ApiKeyRow.prefix.startswith(id_or_prefix, autoescape=True))
                ).all()
                if len(matches) > 1:
                    raise InvalidInput(f"{id_or_prefix!r} matches {len(matches)} keys; give the key id")
                row = matches[0] if matches else None
            if row is None:
                raise NotFound(f"no API key {id_or_prefix!r}")
            if row.revoked_at is None:
                row.revoked_at = utcnow()
            revoked = ApiKey.of(row)
        with self._lock:
            self._verified = {d: entry for d, entry in self._verified.items() if entry[0].id != revoked.id}
        return revoked


@contextmanager
def key_store(home: str | Path | None = None) -> Iterator[ApiKeys]:
    """The keys of a data directory, opened on its database alone: managing keys works while a
    server holds the directory's stores, and never touches documents being indexed."""
    settings = Settings.load(home)
    settings.home.mkdir(parents=True, exist_ok=True)
    engine = make_engine(settings.resolved_database_url)
    try:
        yield ApiKeys(make_session_factory(engine))
    finally:
        engine.dispose()
