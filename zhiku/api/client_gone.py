"""Streamed answers stop when their client leaves.

A failed write tells waitress that the client of a streamed answer is gone, and closing the
response's iterator then closes the chat model's stream. Nothing is written while a reasoning
model thinks before its first word (minutes of tokens, paid for), so ``zhiku serve`` also keeps
reading the connection of a request that asks about its client (waitress's
``channel_request_lookahead``, see :mod:`zhiku.api.watched_channel`), which lets it see the
connection end, and the answer runs under a
:class:`~zhiku.core.cancellation.CancelToken` that asks it: the chat model's stream reaches a
:func:`~zhiku.core.cancellation.checkpoint` at every line the model sends (a reasoning delta, a
keep-alive comment), and stops there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from zhiku.core.cancellation import CancelToken, cancellable

#: The reason a streamed answer was stopped.
CLIENT_LEFT = "the client closed the connection"
#: The WSGI environ key of waitress's "has the client gone?" check (with a lookahead only).
DISCONNECTED_KEY = "waitress.client_disconnected"


def until_client_leaves(events: Iterator[str], disconnected: Callable[[], bool] | None) -> Iterator[str]:
    """``events``, each produced under a token that stops the work once ``disconnected()`` says
    the client is gone (None: the server cannot tell; only failed writes stop the stream)."""
    if disconnected is None:
        yield from events
        return
    token = CancelToken(should_stop=lambda: CLIENT_LEFT if disconnected() else None)
    try:
        while True:
            with cancellable(token):
                try:
                    event = next(events)
                except StopIteration:
                    return
            if token.reason is not None:
                return  # no one to write to
            yield event
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()
