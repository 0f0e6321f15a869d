"""``zhiku`` command line: one module per command group, assembled here.

Command modules import click and zhiku's facade only; anything heavier (evaluation, servers,
plug-in modules) is imported inside the command that needs it, so ``zhiku --help`` stays quick.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from zhiku.cli.answers import ask, chat, eval_answers, mcp
from zhiku.cli.console import console_password
from zhiku.cli.datasets import dataset
from zhiku.cli.documents import document, document_retry
from zhiku.cli.evaluation import bench, eval_command, eval_routing_command
from zhiku.cli.home import demo, init, migrate
from zhiku.cli.ingest import ingest
from zhiku.cli.keys import apikey
from zhiku.cli.plugins import plugins
from zhiku.cli.search import search
from zhiku.cli.segments import segment
from zhiku.cli.server import serve
from zhiku.cli.workers import status, worker


@click.group()
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="ZHIKU_HOME",
    help="Data directory (default ~/.zhiku).",
)
@click.pass_context
def main(ctx: click.Context, home: Path | None) -> None:
    """知库 zhiku: a modular RAG knowledge base."""
    # what the stores write under the data directory (shards, journals) is the owner's alone
    os.umask(0o077)
    ctx.ensure_object(dict)
    ctx.obj["home"] = home


for _command in (
    init,
    dataset,
    ingest,
    document,
    segment,
    search,
    ask,
    chat,
    mcp,
    eval_command,
    eval_answers,
    eval_routing_command,
    bench,
    serve,
    worker,
    status,
    apikey,
    console_password,
    migrate,
    demo,
    plugins,
):
    main.add_command(_command)
main.add_command(document_retry, "retry")  # the older spelling of ``zhiku document retry``

__all__ = ["main"]
