"""``zhiku worker`` (a Celery indexing worker) and ``zhiku status`` (queue, workers, documents)."""

from __future__ import annotations

import json

import click

from zhiku.cli.common import user_errors


@click.command()
@click.option("--concurrency", type=int, default=1, show_default=True, help="Documents indexed at once.")
@click.option("--name", default=None, help="Worker name (Celery's --hostname, e.g. indexer1@%h).")
@click.pass_context
def worker(ctx: click.Context, concurrency: int, name: str | None) -> None:
    """Run a Celery worker indexing the documents `zhiku serve` queues (task_queue = "celery")."""
    from zhiku.core.config import Settings
    from zhiku.knowledge_base.runtime.celery_worker import run_worker

    with user_errors(ctx):
        settings = Settings.load(ctx.obj["home"], task_queue="celery")
        if concurrency < 1:
            raise click.BadParameter("must be at least 1", param_hint="--concurrency")
        run_worker(settings, concurrency=concurrency, name=name)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON document on stdout.")
@click.option(
    "--ping-timeout",
    type=click.FloatRange(0.1, 60.0),
    default=1.0,
    show_default=True,
    help="Seconds to wait for workers to answer the ping (a busy machine answers slower).",
)
@click.pass_context
def status(ctx: click.Context, as_json: bool, ping_timeout: float) -> None:
    """Queue depth, workers alive, running documents, documents per status and index builds due."""
    from zhiku.core.config import Settings
    from zhiku.knowledge_base import KnowledgeBase
    from zhiku.knowledge_base.runtime.queue_status import queue_status

    with user_errors(ctx):
        kb = KnowledgeBase(Settings.load(ctx.obj["home"]), worker=True)  # a look: no recovery
        try:
            report = queue_status(kb, ping_timeout=ping_timeout)
        finally:
            kb.close()
    if as_json:
        click.echo(json.dumps(report.to_json(), ensure_ascii=False))
        return
    click.echo(f"task queue: {report.task_queue}")
    if report.broker_error:
        click.echo(f"broker: unreachable ({report.broker_error})")
    if report.queue_depth is not None:
        click.echo(f"queue depth: {report.queue_depth} tasks")
    if report.workers_alive is not None:
        click.echo(f"workers alive: {len(report.workers_alive)} {' '.join(report.workers_alive)}".rstrip())
    for owner, count in sorted(report.running.items()):
        click.echo(f"running: {count} on {owner}")
    if report.prepared_waiting:
        click.echo(f"prepared, waiting for the store owner: {report.prepared_waiting}")
    counts = ", ".join(f"{name} {count}" for name, count in report.documents.items()) or "none"
    click.echo(f"documents: {counts}")
    if report.unoptimized:
        changed = ", ".join(f"{name} {points:,} points" for name, points in report.unoptimized.items())
        click.echo(f"changed since their last index build: {changed}")
