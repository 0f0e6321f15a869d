"""Cooperative cancellation: long work checks, between small steps, whether it should go on.

A document being indexed runs inside :func:`cancellable` with a :class:`CancelToken`; the loops
that can take long — pages and paragraphs of an extractor, pieces of a splitter, batches of
embedding — call :func:`checkpoint`, which raises :class:`~zhiku.core.errors.Cancelled` when the
document was paused or deleted, or :class:`~zhiku.core.errors.TimeLimitExceeded` past its
deadline. Outside such a scope :func:`checkpoint` costs one context-variable read and does
nothing, so plug-ins call it unconditionally. The token lives in a context variable: each
worker thread has its own, and no signature has to carry it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from zhiku.core.errors import Cancelled, TimeLimitExceeded


class OverBudget(TimeLimitExceeded):
    """The work inside a :func:`time_budget` block ran past its budget (the block turns it into
    its own error: a file too costly to parse)."""

#: Seconds between two calls of a token's ``should_stop`` (it may query a database).
POLL_SECONDS = 0.5


class CancelToken:
    """Says whether a piece of work should stop.

    ``deadline`` is a :func:`time.monotonic` time; ``should_stop`` returns a reason to stop (or
    None) and is asked at most every :data:`POLL_SECONDS`. ``stage`` names what the work is
    doing, for the time-limit message.
    """

    def __init__(
        self,
        *,
        deadline: float | None = None,
        should_stop: Callable[[], str | None] | None = None,
        poll_seconds: float = POLL_SECONDS,
        parent: CancelToken | None = None,
    ) -> None:
        self.deadline = deadline
        #: an enclosing token (a worker's, cancelled when the server stops): cancelling it stops
        #: this work too, while this token's own reasons (a pause) stay this work's
        self.parent = parent
        #: an inner deadline for one part of the work (parsing), see :func:`time_budget`
        self.budget_deadline: float | None = None
        self.stage = "start"
        self._should_stop = should_stop
        self._poll_seconds = poll_seconds
        self._next_poll = 0.0
        self._reason: str | None = None
        self._lock = threading.Lock()

    @classmethod
    def with_time_limit(
        cls,
        seconds: float | None,
        should_stop: Callable[[], str | None] | None = None,
        *,
        parent: CancelToken | None = None,
    ) -> CancelToken:
        deadline = time.monotonic() + seconds if seconds else None
        return cls(deadline=deadline, should_stop=should_stop, parent=parent)

    def cancel(self, reason: str) -> None:
        """Stop the work at its next checkpoint (from any thread)."""
        with self._lock:
            self._reason = self._reason or reason

    @property
    def reason(self) -> str | None:
        """Why this work was cancelled: its own reason, else its parent's (None: it goes on)."""
        if self._reason is not None:
            return self._reason
        return self.parent.reason if self.parent is not None else None

    def check(self) -> None:
        """Raise if the work should stop; cheap enough for a loop over paragraphs."""
        reason = self.reason
        if reason is not None:
            raise Cancelled(reason)
        now = time.monotonic()
        if self.deadline is not None and now > self.deadline:
            raise TimeLimitExceeded(f"time limit at {self.stage}")
        if self.budget_deadline is not None and now > self.budget_deadline:
            raise OverBudget(f"time budget of {self.stage} spent")
        if self._should_stop is not None and now >= self._next_poll:
            self._next_poll = now + self._poll_seconds
            reason = self._should_stop()
            if reason is not None:
                self.cancel(reason)
                raise Cancelled(reason)


_current: ContextVar[CancelToken | None] = ContextVar("zhiku_cancel_token", default=None)


def checkpoint() -> None:
    """Raise if the work this thread is doing was cancelled or ran out of time; else nothing."""
    token = _current.get()
    if token is not None:
        token.check()


def current_token() -> CancelToken | None:
    return _current.get()


@contextmanager
def cancellable(token: CancelToken | None) -> Iterator[CancelToken | None]:
    """Run the block with ``token`` as this thread's token (None: not cancellable)."""
    reset = _current.set(token)
    try:
        yield token
    finally:
        _current.reset(reset)


@contextmanager
def time_budget(seconds: float | None) -> Iterator[None]:
    """Within the block, :func:`checkpoint` raises :class:`OverBudget` once ``seconds`` have
    passed, under this thread's token (or, outside any, a token of its own). The outer
    deadline still applies; ``None`` adds no budget."""
    if seconds is None:
        yield
        return
    token = _current.get()
    with cancellable(token or CancelToken()) as active:
        assert active is not None
        saved = active.budget_deadline
        active.budget_deadline = time.monotonic() + seconds
        try:
            yield
        finally:
            active.budget_deadline = saved
