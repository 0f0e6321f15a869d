"""``zhiku ingest``: files and folders into a dataset, once each, or a folder mirrored."""

from __future__ import annotations

from pathlib import Path

import click

from zhiku.cli.common import CommandError, open_knowledge_base, progress_bar, user_errors
from zhiku.client import ServerClient, UploadRefused, running_server, sha256_of
from zhiku.core.errors import NotFound
from zhiku.knowledge_base import Dataset, DocumentInfo, KnowledgeBase


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--dataset", "dataset_name", required=True)
@click.option("--create", is_flag=True, help="Create the dataset if it does not exist.")
@click.option("--qa-csv", is_flag=True, help="The files are question,answer CSV files (no LLM needed).")
@click.option(
    "--on-duplicate",
    type=click.Choice(["skip", "replace", "keep"]),
    default="skip",
    help="A file whose content is already in the dataset: skip it (default), index it again, or keep both.",
)
@click.option(
    "--sync",
    is_flag=True,
    help="Make the dataset mirror the folder(s): add new files, re-index changed ones, delete removed ones.",
)
@click.option(
    "--no-optimize",
    is_flag=True,
    help="Skip the index build at the end (searches scan exactly until the next ingest builds it).",
)
@click.pass_context
def ingest(
    ctx: click.Context,
    paths: tuple[Path, ...],
    dataset_name: str,
    create: bool,
    qa_csv: bool,
    on_duplicate: str,
    sync: bool,
    no_optimize: bool,
) -> None:
    """Ingest files (or folders) into a dataset. Exit status 1 if any file failed."""
    if sync and (qa_csv or not all(path.is_dir() for path in paths)):
        raise click.BadParameter("--sync takes folders (and no --qa-csv)")
    files = _expand(paths)
    server = running_server(ctx.obj["home"])
    if server is not None:
        if sync or qa_csv:
            raise CommandError(
                f"zhiku serve (pid {server.pid}, {server.url}) owns this data directory: "
                "--sync and --qa-csv run only where the stores are; stop the server or use its API"
            )
        with user_errors(ctx), ServerClient(server) as client:
            failed_any = _ingest_through(client, files, dataset_name, create, on_duplicate)
        if failed_any:
            ctx.exit(1)
        return
    with open_knowledge_base(ctx) as kb:
        ds = _dataset(kb, dataset_name, create)
        if sync:
            failed_sync = _sync(ds, paths)
            if not no_optimize:
                ds.optimize()
            if failed_sync:
                ctx.exit(1)
            return
        if qa_csv:
            infos = [ds.add_qa_csv(path) for path in files]
        else:
            with progress_bar("ingest") as progress:
                infos = ds.add_files(files, on_progress=progress, on_duplicate=on_duplicate)  # type: ignore[arg-type]
        if not no_optimize:
            ds.optimize()
        if _report(infos):
            ctx.exit(1)


def _dataset(kb: KnowledgeBase, name: str, create: bool) -> Dataset:
    """The dataset ``name``, created if missing and ``create`` says so (NotFound otherwise)."""
    try:
        return kb.dataset(name)
    except NotFound:
        if not create:
            raise
        return kb.create_dataset(name)


def _report(infos: list[DocumentInfo]) -> bool:
    """Print one line per file and the totals; True if any failed."""
    failed = [info for info in infos if info.status == "error"]
    skipped = [info for info in infos if info.duplicate == "skipped"]
    for info in infos:
        if info.duplicate == "skipped":
            click.echo(f"{'skipped':9} {info.name}: its content is already indexed")
            continue
        suffix = f": {info.error}" if info.error else f" ({info.segment_count} segments)"
        click.echo(f"{info.status:9} {info.name}{suffix}")
    summary = f"{len(infos) - len(failed) - len(skipped)} indexed, {len(failed)} failed"
    click.echo(summary + (f", {len(skipped)} skipped as duplicates" if skipped else ""))
    return bool(failed)


def _ingest_through(
    client: ServerClient, files: list[Path], dataset_name: str, create: bool, on_duplicate: str
) -> bool:
    """Upload ``files`` to the running server and wait for them; True if any failed."""
    dataset_id = client.dataset_id(dataset_name, create=create)
    known = client.content_hashes(dataset_id) if on_duplicate != "keep" else {}
    click.echo(f"through zhiku serve (pid {client.pid}) at {client.url}")
    batches: list[str] = []
    names: dict[str, str] = {}
    skipped = refused = 0
    for path in files:
        existing = known.get(sha256_of(path))
        if existing is not None and on_duplicate == "skip":
            click.echo(f"{'skipped':9} {path.name}: its content is already indexed")
            skipped += 1
            continue
        try:
            document_id, batch = client.upload(dataset_id, path, replace=existing)
        except UploadRefused as exc:  # as a local run reports a file it cannot read, and goes on
            click.echo(f"{'error':9} {path.name}: {exc}")
            refused += 1
            continue
        names[document_id] = path.name
        batches.append(batch)
    statuses = client.wait(dataset_id, batches) if batches else []
    failed = 0
    for status in statuses:
        name = names.get(status["id"], status["id"])
        if status["indexing_status"] == "error":
            failed += 1
            click.echo(f"{'error':9} {name}: {status['error']}")
        else:
            click.echo(f"{status['indexing_status']:9} {name} ({status['completed_segments']} segments)")
    summary = f"{len(statuses) - failed} indexed, {failed + refused} failed"
    click.echo(summary + (f", {skipped} skipped as duplicates" if skipped else ""))
    return failed + refused > 0


def _expand(paths: tuple[Path, ...]) -> list[Path]:
    """Files as given, and the files under folders (hidden ones left out), in order."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")))
        else:
            files.append(path)
    return files


def _sync(ds: Dataset, folders: tuple[Path, ...]) -> bool:
    """Sync each folder into the dataset, print what changed; True if a file failed."""
    failed = False
    for folder in folders:
        report = ds.sync_folder(folder)
        for info in report.added:
            click.echo(f"added     {info.name} ({info.status}{': ' + info.error if info.error else ''})")
        for info in report.updated:
            click.echo(f"updated   {info.name} ({info.status}{': ' + info.error if info.error else ''})")
        for origin in report.deleted:
            click.echo(f"deleted   {origin}")
        click.echo(
            f"{folder}: {len(report.added)} added, {len(report.updated)} updated, "
            f"{len(report.deleted)} deleted, {len(report.unchanged)} unchanged, {len(report.failed)} failed"
        )
        failed = failed or bool(report.failed)
    return failed
