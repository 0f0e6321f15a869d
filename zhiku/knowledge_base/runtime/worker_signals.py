"""What Celery workers tell the API processes through the broker's Redis, beside the database.

Two short-lived facts that the database need not carry:

- the embedding progress of a document a worker runs (``done/total`` texts, as the in-process
  threads report it), under a key that expires ``ttl`` seconds after its last update, so a
  killed worker's progress disappears by itself;
- "a version was handed over" (a pub/sub message), which wakes the store owner's writer at once
  instead of at its next poll. A lost message costs one poll interval, never a document: the
  writer still reads the ``prepared_versions`` table.

Only a Redis broker (``redis://``, ``rediss://``, ``unix://``) carries them; with another broker
:func:`open_signals` gives None and the API shows no progress for worker-run documents.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redis import Redis
    from redis.client import PubSub

log = logging.getLogger(__name__)

PROGRESS_KEY = "zhiku:progress:"
PREPARED_CHANNEL = "zhiku:prepared"
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


class WorkerSignals:
    """Progress keys and the hand-over channel on one Redis (thread-safe: redis-py pools).

    Every call is a hint: an unreachable Redis is logged and changes nothing else, so a document
    never fails for want of its progress."""

    def __init__(self, client: Redis, ttl: float) -> None:
        from redis.exceptions import RedisError

        self._client = client
        self._ttl = max(1, round(ttl))
        self._errors = (RedisError, OSError)

    def set_progress(self, document_id: str, done: int, total: int) -> None:
        try:
            self._client.set(PROGRESS_KEY + document_id, f"{done}/{total}", ex=self._ttl)
        except self._errors as exc:
            log.warning("progress of %s not sent: %s", document_id, exc)

    def clear_progress(self, document_ids: list[str]) -> None:
        try:
            self._client.delete(*(PROGRESS_KEY + document_id for document_id in document_ids))
        except self._errors as exc:
            log.warning("progress of %d documents not cleared: %s", len(document_ids), exc)

    def progress(self, document_id: str) -> tuple[int, int] | None:
        """``(texts embedded, texts in all)`` of a document a worker runs, else None."""
        try:
            value = self._client.get(PROGRESS_KEY + document_id)
        except self._errors as exc:
            log.warning("progress of %s not read: %s", document_id, exc)
            return None
        if value is None:
            return None
        text = value.decode() if isinstance(value, bytes) else str(value)
        done, _, total = text.partition("/")
        return int(done), int(total)

    def handed_over(self) -> None:
        """Wake the store owner's writer: a version waits in ``prepared_versions``."""
        try:
            self._client.publish(PREPARED_CHANNEL, b"1")
        except self._errors as exc:
            log.warning("hand-over not announced (the writer finds it at its next poll): %s", exc)

    def listener(self) -> HandOverListener:
        return HandOverListener(self._client.pubsub(ignore_subscribe_messages=True), self._errors)

    def close(self) -> None:
        self._client.close()


class HandOverListener:
    """The writer's side of the hand-over channel: :meth:`wait` returns early on a message."""

    def __init__(self, pubsub: PubSub, errors: tuple[type[Exception], ...]) -> None:
        self._pubsub = pubsub
        self._errors = errors
        self._subscribed = False
        self._failed = False

    def wait(self, timeout: float, stopping: threading.Event) -> None:
        """Return when a version was handed over, ``stopping`` is set, or after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while not stopping.is_set() and (left := deadline - time.monotonic()) > 0:
            try:
                if not self._subscribed:
                    self._pubsub.subscribe(PREPARED_CHANNEL)
                    self._subscribed = True
                message = self._pubsub.get_message(timeout=min(left, 0.5))
            except self._errors:  # Redis away: fall back to polling the table
                if not self._failed:
                    log.warning("hand-over channel unreachable; polling only", exc_info=True)
                self._failed = True
                self._subscribed = False
                stopping.wait(min(left, 0.5))
                continue
            self._failed = False
            if message is not None:
                while self._pubsub.get_message(timeout=0) is not None:
                    pass  # several hand-overs, one write
                return

    def close(self) -> None:
        self._pubsub.close()


def open_signals(broker_url: str | None, ttl: float) -> WorkerSignals | None:
    """The signals on a Redis broker (a connection is made on first use), else None."""
    if not broker_url or not broker_url.startswith(_REDIS_SCHEMES):
        return None
    from redis import Redis

    return WorkerSignals(Redis.from_url(broker_url), ttl)
