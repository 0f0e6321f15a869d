"""The waitress channel of ``zhiku serve``: a connection is read while its request runs only once
that request asks whether its client is still there (a streamed answer does, at each checkpoint).

Waitress's ``channel_request_lookahead`` reads every busy connection. That is how a stream sees
its client leave, but reading a busy connection also lets waitress's loop wake while the
request's thread writes its answer: the loop then finds the socket writable and the output
locked by that thread, and turns again at once, thousands of times per request, holding the GIL
the request's thread needs. A retrieve call took twice as long. Here a connection is read ahead
only for a request that watches its client, so a plain request runs as without lookahead.
"""

from __future__ import annotations

from zhiku.api.server_errors import JsonErrorChannel


class WatchedChannel(JsonErrorChannel):
    """A channel (of a server made with ``channel_request_lookahead`` ≥ 1) that reads ahead on
    its connection only while the running request watches for its client's departure (with
    ``environ["waitress.client_disconnected"]``); its own errors are answered in JSON."""

    #: Whether the running request asked about its client: only then is the connection read.
    watching = False

    def readable(self) -> bool:
        if self.requests and not self.watching:
            return False  # a request runs and nobody asks about its client: as without lookahead
        return bool(super().readable())

    def check_client_disconnected(self) -> bool:
        """Whether the client has gone; the first call starts reading the connection (the loop
        is woken to add it to the sockets it reads), so later calls can tell."""
        if not self.watching:
            self.watching = True
            self.server.pull_trigger()
        return bool(super().check_client_disconnected())

    def service(self) -> None:
        """Run a request: it starts unwatched, and the next one does too."""
        self.watching = False
        try:
            super().service()
        finally:
            self.watching = False
