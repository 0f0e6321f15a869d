"""``zhiku stores``: where each dataset's stores are, and moving them to other backends.

``migrate`` needs the stores of both sides: with embedded stores on either side, stop
``zhiku serve`` on the data directory first (the command says so otherwise). With PostgreSQL on
both sides, stop the other API processes and workers too: they keep the stores they opened.
"""

from __future__ import annotations

import functools

import click

from zhiku.cli.common import open_knowledge_base, progress_bar, user_errors


@click.group()
def stores() -> None:
    """Show where each dataset's stores are; move them to other backends."""


@stores.command("show")
@click.pass_context
def stores_show(ctx: click.Context) -> None:
    """Each dataset with its vector and BM25 store backends."""
    with open_knowledge_base(ctx) as kb:
        for dataset in kb.datasets():
            backends = kb.store_backends(dataset.id)
            click.echo(f"{dataset.name}\tvector={backends['vector']}\tfulltext={backends['fulltext']}")


@stores.command("migrate")
@click.option("--to", "to", required=True, help="Backend of both stores: pgvector, edge, qdrant, ...")
@click.option("--vector", help="Backend of the vector store, if not --to's.")
@click.option("--fulltext", help="Backend of the BM25 store, if not --to's.")
@click.option("--dataset", "datasets", multiple=True, help="Only this dataset (name or id; repeatable).")
@click.pass_context
def stores_migrate(
    ctx: click.Context, to: str, vector: str | None, fulltext: str | None, datasets: tuple[str, ...]
) -> None:
    """Copy each dataset's points (vectors, BM25 records, child chunks, summaries) to other
    backends, embedding nothing; check the copy, switch the dataset over and drop its old stores.

    A dataset searches its old stores until its copy is complete. Killed midway, run it again:
    it goes on from what was copied.
    """
    target = {"vector": vector or to, "fulltext": fulltext or to}
    with open_knowledge_base(ctx) as kb, user_errors(ctx):
        names = list(datasets) or [dataset.name for dataset in kb.datasets()]
        for name in names:
            with progress_bar(f"migrate {name}") as progress:
                move = kb.move_stores(name, target, on_progress=functools.partial(progress, name))
            where = f"vector={target['vector']} fulltext={target['fulltext']}"
            if not move.moved:
                click.echo(f"{move.dataset}: already on {where}")
                continue
            click.echo(
                f"{move.dataset}: {move.points} points moved from vector={move.source['vector']} "
                f"fulltext={move.source['fulltext']} to {where} ({move.copied} copied, {move.kept} "
                f"already there, {move.removed} removed); counts checked, switched"
            )
