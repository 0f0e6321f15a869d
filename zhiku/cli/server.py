"""``zhiku serve``: the HTTP API with its background indexing workers."""

from __future__ import annotations

import click

from zhiku.cli.common import user_errors


@click.command()
@click.option("--host", default=None, help="Address to listen on (default: setting api_host, 127.0.0.1).")
@click.option("--port", type=int, default=None, help="Port (default: setting api_port, 5001; 0 picks one).")
@click.option("--threads", type=int, default=None, help="Request threads (default: setting api_threads, 8).")
@click.option("--workers", type=int, default=None, help="Indexing threads (default: indexing_workers).")
@click.pass_context
def serve(
    ctx: click.Context, host: str | None, port: int | None, threads: int | None, workers: int | None
) -> None:
    """Serve the HTTP API (waitress) with background indexing; needs an API key (zhiku apikey create)."""
    from zhiku.api.serve import serve as run_server
    from zhiku.core.config import Settings

    with user_errors(ctx):
        settings = Settings.load(ctx.obj["home"], indexing_workers=workers)
        run_server(
            settings,
            host=host or settings.api_host,
            port=settings.api_port if port is None else port,
            threads=threads,
            echo=click.echo,
        )
