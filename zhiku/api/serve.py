"""``zhiku serve``: the API app under waitress, a production WSGI server (threads, no debug mode).

One process: the embedded stores admit one. SIGINT and SIGTERM stop it
cleanly: requests end, the indexing workers' runs are cancelled (each stops at its next
checkpoint, within about a second) and their documents are queued again for the next start.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from types import FrameType

import waitress
from flask import Flask
from waitress.server import BaseWSGIServer, MultiSocketServer

from zhiku.api.app import create_app
from zhiku.api.context import EXTENSION, ApiContext
from zhiku.api.watched_channel import WatchedChannel
from zhiku.core.config import Settings
from zhiku.core.server_file import remove_server_file, write_server_file

#: Seconds the workers get to finish running documents when the server stops.
STOP_GRACE_SECONDS = 10.0
#: Requests waitress reads ahead on a connection while one runs: reading on is how it sees the
#: client leave while a streamed answer writes nothing yet (see :mod:`zhiku.api.client_gone`);
#: it reads on only for a request that asks (see :mod:`zhiku.api.watched_channel`).
REQUEST_LOOKAHEAD = 1


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def create_server(
    app: Flask, settings: Settings, *, host: str, port: int, threads: int | None = None
) -> BaseWSGIServer | MultiSocketServer:
    """The waitress server of ``app``, bound, with the connection limit, idle timeout and
    threads of ``settings`` (``threads`` overrides the setting). Waitress checks idle
    connections every ``cleanup_interval`` seconds: at most the timeout, so it holds. It reads
    ahead on a connection whose request watches its client (a streamed answer), which tells it
    that the client has left, and answers its own errors in JSON."""
    timeout = settings.api_channel_timeout
    server = waitress.create_server(
        app,
        host=host,
        port=port,
        threads=threads or settings.api_threads,
        connection_limit=settings.api_connection_limit,
        channel_timeout=timeout,
        cleanup_interval=max(1, min(30, timeout // 2)),
        channel_request_lookahead=REQUEST_LOOKAHEAD,
        ident="zhiku",
    )
    listeners = [server] if isinstance(server, BaseWSGIServer) else list(server.map.values())
    for listener in listeners:
        if isinstance(listener, BaseWSGIServer):
            listener.channel_class = WatchedChannel
    return server


def serve(
    settings: Settings,
    *,
    host: str,
    port: int,
    threads: int | None = None,
    echo: Callable[[str], None] = print,
) -> None:
    """Serve until interrupted; ``port=0`` picks a free port (the address is echoed).

    Waitress alone bounds connections and idle time, and the app the requests per minute of
    one client address (``rate_limit_per_address``), not the connections one address may hold:
    behind nginx (or another reverse proxy) limit those there (see ``api_channel_timeout``).
    """
    app = create_app(settings)
    context: ApiContext = app.extensions[EXTENSION]
    server = create_server(app, settings, host=host, port=port, threads=threads)
    previous = signal.signal(signal.SIGTERM, _interrupt)
    bound_host, bound_port = server.effective_host, server.effective_port  # type: ignore[union-attr]
    url = f"http://{bound_host}:{bound_port}/v1"
    # a wildcard bind is reached on the loopback by commands on this machine
    local_host = "127.0.0.1" if bound_host in ("0.0.0.0", "::", "") else bound_host
    local = write_server_file(settings.home, f"http://{local_host}:{bound_port}/v1")
    context.local_token = local.token
    echo(f"zhiku API on {url} (home {settings.home})")
    if not context.keys.stored():
        echo("no API key yet: create one with `zhiku apikey create`")
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        remove_server_file(settings.home, local)
        server.close()
        context.close(STOP_GRACE_SECONDS)
