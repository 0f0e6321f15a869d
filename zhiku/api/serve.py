"""``zhiku serve``: the API app under waitress, a production WSGI server (threads, no debug mode).

One process: the embedded stores admit one. SIGINT and SIGTERM stop it
cleanly: requests end, the indexing workers get some seconds to finish their documents, and any
document still running is queued again at the next start.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from types import FrameType

import waitress

from zhiku.api.app import create_app
from zhiku.api.context import EXTENSION, ApiContext
from zhiku.core.config import Settings

#: Seconds the workers get to finish running documents when the server stops.
STOP_GRACE_SECONDS = 10.0


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def serve(
    settings: Settings, *, host: str, port: int, threads: int, echo: Callable[[str], None] = print
) -> None:
    """Serve until interrupted; ``port=0`` picks a free port (the address is echoed)."""
    app = create_app(settings)
    context: ApiContext = app.extensions[EXTENSION]
    server = waitress.create_server(app, host=host, port=port, threads=threads, ident="zhiku")
    previous = signal.signal(signal.SIGTERM, _interrupt)
    echo(f"zhiku API on http://{server.effective_host}:{server.effective_port}/v1 (home {settings.home})")  # type: ignore[union-attr]
    if not context.keys.stored():
        echo("no API key yet: create one with `zhiku apikey create`")
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.close()
        context.close(STOP_GRACE_SECONDS)
