"""Commands over a whole data directory: ``init``, ``migrate`` and ``demo``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from zhiku.cli.common import open_knowledge_base, progress_bar
from zhiku.knowledge_base import KnowledgeBase


@click.command()
@click.pass_context
def init(ctx: click.Context) -> None:
    """Create the data directory and database."""
    with open_knowledge_base(ctx) as kb:
        click.echo(f"knowledge base ready in {kb.settings.home}")


@click.command()
@click.option("--to-database", help="Target database URL, e.g. postgresql+psycopg://user:pw@host/zhiku.")
@click.option("--to-qdrant", help="Target Qdrant server URL, e.g. http://qdrant:6333.")
@click.option(
    "--to-home",
    type=click.Path(file_okay=False, path_type=Path),
    help="Target data directory (default: <home>-migrated); gets a zhiku.toml naming the targets.",
)
@click.pass_context
def migrate(ctx: click.Context, to_database: str | None, to_qdrant: str | None, to_home: Path | None) -> None:
    """Copy every dataset to a database and/or Qdrant server, reusing the cached embeddings."""
    from zhiku.core.config import CONFIG_FILE
    from zhiku.knowledge_base.migrate import migrate as migrate_kb

    if not (to_database or to_qdrant):
        raise click.UsageError("give --to-database, --to-qdrant or both")
    with open_knowledge_base(ctx) as source:
        home = to_home or source.settings.home.with_name(f"{source.settings.home.name}-migrated")
        if home.resolve() == source.settings.home.resolve():
            raise click.UsageError("--to-home must differ from the source home")
        backend = "qdrant" if to_qdrant else None
        with (
            KnowledgeBase.open(
                home,
                database_url=to_database,
                qdrant_url=to_qdrant,
                vector_backend=backend,
                fulltext_backend=backend,
            ) as target,
            progress_bar("migrate") as progress,
        ):
            report = migrate_kb(source, target, on_progress=progress)
        config = home / CONFIG_FILE
        if not config.exists():  # so that ``zhiku --home <target>`` opens the migrated stores
            settings = {"database_url": to_database, "qdrant_url": to_qdrant}
            config.write_text(
                "".join(f"{key} = {json.dumps(value)}\n" for key, value in settings.items() if value),
                encoding="utf-8",
            )
    for skipped in report.skipped:
        click.echo(f"skipped {skipped}")
    click.echo(
        f"migrated {report.datasets} datasets, {report.documents} documents, {report.segments} segments, "
        f"{report.cache_rows} cached embeddings to {home}"
    )


@click.command()
@click.pass_context
def demo(ctx: click.Context) -> None:
    """Build the bundled bilingual demo knowledge base and search it with every method."""
    from zhiku.demo import run_demo

    with open_knowledge_base(ctx) as kb:
        run_demo(kb, echo=click.echo)
