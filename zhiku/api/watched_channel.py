"""The waitress channel of ``zhiku serve``: its loop sleeps while a request's thread writes.

Waitress's loop watches a connection for writing whenever its output holds data, and for
reading, with ``channel_request_lookahead``, while its request runs. A request's thread sends
what it writes itself, holding the output's lock; a loop woken meanwhile — by any connection's
traffic, or by this one's, being read ahead — found the socket writable and the output locked,
and turned again at once: tens of thousands of turns for a few hundred requests, holding the
GIL the request's thread needed. With the search itself cached out, retrieve calls took twice
as long at one client, and the server spent twice the CPU per call at four. Here the loop does
not watch for writing while the request's thread holds the output (that thread wakes the loop
if it leaves data unsent), and a connection is read ahead only for a request that asks whether
its client is still there (a streamed answer does, at each checkpoint: see
:mod:`zhiku.api.client_gone`).
"""

from __future__ import annotations

from zhiku.api.server_errors import JsonErrorChannel


class WatchedChannel(JsonErrorChannel):
    """A channel (of a server made with ``channel_request_lookahead`` ≥ 1) that reads ahead on
    its connection only while the running request watches for its client's departure (with
    ``environ["waitress.client_disconnected"]``) and leaves the writing of a request's answer to
    the request's thread; its own errors are answered in JSON."""

    #: Whether the running request asked about its client: only then is the connection read.
    watching = False

    def readable(self) -> bool:
        if self.requests and not self.watching:
            return False  # a request runs and nobody asks about its client: as without lookahead
        return bool(super().readable())

    def writable(self) -> bool:
        """Not while the request's thread holds the output to write it: that thread sends what it
        writes, and the loop, finding the socket writable and the output locked, would only turn
        again at once. Past the high watermark the thread waits for the loop to send, so it is
        watched then."""
        quiet = not (self.will_close or self.close_when_flushed)
        if self.requests and quiet and self.total_outbufs_len <= self.adj.outbuf_high_watermark:
            if not self.outbuf_lock.acquire(False):
                return False
            self.outbuf_lock.release()
        return bool(super().writable())

    def write_soon(self, data: bytes) -> int:
        """Write ``data``; what the request's thread could not send (a full socket) is the loop's
        to send, so the loop is woken once the output is unlocked."""
        written = int(super().write_soon(data))
        if self.total_outbufs_len:
            self.server.pull_trigger()
        return written

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
