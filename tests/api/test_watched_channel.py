"""``zhiku serve``'s loop sleeps while a request's thread writes its answer (it used to spin,
holding the GIL that thread needed), and reads a busy connection only for a request that
watches its client: a streamed answer still learns that its client left."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from flask import Flask, Response, request
from waitress import wasyncore

from zhiku.api.serve import create_server
from zhiku.api.watched_channel import WatchedChannel
from zhiku.core.config import Settings

#: Seconds to wait for what must happen at once, on a busy machine.
GENEROUS = 60.0
#: An answer the size of a retrieve call's ten records.
RECORDS = b"x" * 13_000


def _blocking_app(running: threading.Event, release: threading.Event, answers: list[bool]) -> Flask:
    """``/plain`` waits for ``release``; ``/watching`` asks about its client first, then waits
    until it has gone (its answers to the question recorded in ``answers``)."""
    app = Flask(__name__)

    @app.get("/plain")
    def plain() -> str:
        running.set()
        release.wait(GENEROUS)
        return "done"

    @app.get("/watching")
    def watching() -> str:
        disconnected = request.environ["waitress.client_disconnected"]
        answers.append(disconnected())
        running.set()
        release.wait(GENEROUS)
        answers.append(disconnected())
        return "done"

    return app


@contextmanager
def _served(app: Flask, home: Path) -> Iterator[Any]:
    server = create_server(app, Settings.load(home), host="127.0.0.1", port=0)
    thread = threading.Thread(target=lambda: _run(server), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.close()
        thread.join(GENEROUS)


def _run(server: Any) -> None:
    with suppress(OSError):  # the loop fails on its closed sockets when the server is closed
        server.run()


def _channel(server: Any) -> WatchedChannel:
    (channel,) = [item for item in list(server._map.values()) if isinstance(item, WatchedChannel)]
    return channel


def _get(port: int, path: str) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=GENEROUS)
    client.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    return client


def _answer(client: socket.socket) -> bytes:
    """The response to a request, read to the end of its 4-byte body."""
    data = b""
    while not data.endswith(b"done"):
        chunk = client.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def test_a_plain_request_leaves_its_connection_unread_while_it_runs(home: Path) -> None:
    running, release, answers = threading.Event(), threading.Event(), []
    with _served(_blocking_app(running, release, answers), home) as server:
        with _get(server.effective_port, "/plain") as client:
            assert running.wait(GENEROUS)
            channel = _channel(server)
            assert channel.requests and not channel.watching
            assert not channel.readable()  # with waitress's lookahead alone: True
            release.set()
            assert _answer(client).endswith(b"done")
        assert not channel.watching


def test_a_request_that_asks_about_its_client_has_its_connection_read(home: Path) -> None:
    running, release, answers = threading.Event(), threading.Event(), []
    with _served(_blocking_app(running, release, answers), home) as server:
        client = _get(server.effective_port, "/watching")
        assert running.wait(GENEROUS)
        channel = _channel(server)
        assert channel.watching and channel.readable()
        client.close()  # the client leaves while the request runs
        deadline = time.monotonic() + GENEROUS
        while channel.connected and time.monotonic() < deadline:
            time.sleep(0.05)
        release.set()
        assert answers[0] is False
        assert not channel.connected  # the server read the connection's end


def _answering_app() -> Flask:
    app = Flask(__name__)

    @app.get("/records")
    def records() -> Response:
        return Response(RECORDS, mimetype="application/json")

    @app.get("/huge")
    def huge() -> Response:
        # past waitress's 16 MB high watermark: its thread waits for the loop to send
        return Response((b"y" * 10_000_000 for _ in range(3)), mimetype="application/octet-stream")

    return app


def _fetch(port: int, path: str, times: int) -> list[int]:
    """The body lengths of ``times`` requests on one keep-alive connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=GENEROUS)
    try:
        lengths = []
        for _ in range(times):
            connection.request("GET", path)
            lengths.append(len(connection.getresponse().read()))
        return lengths
    finally:
        connection.close()


def test_the_loop_sleeps_while_requests_write_their_answers(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    turns = []
    real_poll = wasyncore.poll

    def counted_poll(*args: Any, **kwargs: Any) -> None:
        turns.append(1)
        real_poll(*args, **kwargs)

    monkeypatch.setattr(wasyncore, "poll", counted_poll)
    clients, each = 4, 50
    results: list[list[int]] = []
    with _served(_answering_app(), home) as server:
        threads = [
            threading.Thread(target=lambda: results.append(_fetch(server.effective_port, "/records", each)))
            for _ in range(clients)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(GENEROUS)
    assert results == [[len(RECORDS)] * each] * clients
    # a turn or two to read each request, one when it ends; spinning took dozens per request
    assert len(turns) < 10 * clients * each, len(turns)


def test_an_answer_past_the_high_watermark_still_arrives_whole(home: Path) -> None:
    with _served(_answering_app(), home) as server:
        assert _fetch(server.effective_port, "/huge", 1) == [30_000_000]
