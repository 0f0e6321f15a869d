"""``zhiku`` command line: one module per command group, assembled here.

The commands are registered by name (:class:`LazyGroup`): a command's module, and what it
imports (the knowledge base, stores, models, servers), loads only when that command runs, so
``zhiku --help`` and each command start without paying for the others.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from zhiku.cli.lazy import LazyCommand, LazyGroup

#: command name → where it is defined, and the first sentence of its help (listed by ``--help``)
COMMANDS = {
    "init": LazyCommand("zhiku.cli.home", "init", "Create the data directory and database."),
    "dataset": LazyCommand(
        "zhiku.cli.datasets", "dataset", "Create, list, show, update and delete datasets."
    ),
    "ingest": LazyCommand("zhiku.cli.ingest", "ingest", "Ingest files (or folders) into a dataset."),
    "document": LazyCommand(
        "zhiku.cli.documents",
        "document",
        "List, show, delete, retry, enable and disable documents (DOC: an id or a unique name).",
    ),
    "retry": LazyCommand(  # the older spelling of ``zhiku document retry``
        "zhiku.cli.documents",
        "document_retry",
        "Retry a failed document: only its failed chunks when it has some, else the whole file.",
    ),
    "segment": LazyCommand(
        "zhiku.cli.segments",
        "segment",
        "List, show, edit, enable and disable segments (SEG: a segment id, as `segment list` shows).",
    ),
    "search": LazyCommand(
        "zhiku.cli.search", "search", "Search one dataset, or route a query across several."
    ),
    "ask": LazyCommand(
        "zhiku.cli.answers", "ask", "Answer a question from the knowledge base, citing numbered sources."
    ),
    "chat": LazyCommand(
        "zhiku.cli.answers",
        "chat",
        "Talk with the knowledge base; follow-up questions remember the conversation.",
    ),
    "mcp": LazyCommand(
        "zhiku.cli.answers", "mcp", "Serve knowledge search (kb_search, list_datasets) to MCP clients."
    ),
    "eval": LazyCommand(
        "zhiku.cli.evaluation",
        "eval_command",
        "Score retrieval on an evaluation set: recall@1/5/10, MRR@10, nDCG@10 per method.",
    ),
    "eval-answers": LazyCommand(
        "zhiku.cli.answers",
        "eval_answers",
        "Score answers on a SQuAD-style set: answer contains a gold answer, citation precision/recall, "
        "and the share of other sets' questions (which it cannot answer) answered \"not found\".",
    ),
    "eval-routing": LazyCommand(
        "zhiku.cli.evaluation",
        "eval_routing_command",
        "Route every query of several evaluation sets (one dataset each): router accuracy, and nDCG@10 "
        "of multi-path retrieval against searching the right dataset alone.",
    ),
    "calibrate": LazyCommand(
        "zhiku.cli.evaluation",
        "calibrate_command",
        "Fit the relevance calibration of an embedding model on evaluation sets and check it on each "
        "set left out.",
    ),
    "bench": LazyCommand(
        "zhiku.cli.evaluation",
        "bench",
        "Ingestion throughput and query latency against rank_bm25 and qdrant-client (see benchmarks/).",
    ),
    "serve": LazyCommand(
        "zhiku.cli.server",
        "serve",
        "Serve the HTTP API (waitress) with background indexing; needs an API key (zhiku apikey create).",
    ),
    "worker": LazyCommand(
        "zhiku.cli.workers",
        "worker",
        'Run a Celery worker indexing the documents `zhiku serve` queues (task_queue = "celery").',
    ),
    "status": LazyCommand(
        "zhiku.cli.workers",
        "status",
        "Queue depth, workers alive, running documents, documents per status and index builds due.",
    ),
    "apikey": LazyCommand("zhiku.cli.keys", "apikey", "Create, list and revoke HTTP API keys."),
    "console-password": LazyCommand(
        "zhiku.cli.console",
        "console_password",
        "Set the web console's password (asked twice, not echoed); signs out every console session.",
    ),
    "migrate": LazyCommand(
        "zhiku.cli.home",
        "migrate",
        "Copy every dataset to a database and/or Qdrant server, reusing the cached embeddings.",
    ),
    "stores": LazyCommand(
        "zhiku.cli.stores",
        "stores",
        "Show where each dataset's stores are; move them to other backends.",
    ),
    "demo": LazyCommand(
        "zhiku.cli.home",
        "demo",
        "Build the bundled bilingual demo knowledge base and search it with every method.",
    ),
    "plugins": LazyCommand(
        "zhiku.cli.plugins",
        "plugins",
        "List each plug-in registry with its names: those registered in code and those installed as "
        "entry points (group zhiku.plugins, name KIND.NAME), usable by name in settings.",
    ),
}


@click.group(cls=LazyGroup, lazy=COMMANDS)
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


__all__ = ["main"]
