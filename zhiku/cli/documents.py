"""``zhiku document``: list, show, delete, retry, enable and disable a dataset's documents.

A document is named by its id or by its name when no other document of the dataset has it.
"""

from __future__ import annotations

import click

from zhiku.cli.common import dataset_option, open_knowledge_base
from zhiku.cli.lookup import find_document, find_documents
from zhiku.cli.output import (
    document_detail_json,
    document_json,
    document_line,
    json_option,
    print_json,
    when,
)
from zhiku.core.document_status import DocumentStatus


@click.group()
def document() -> None:
    """List, show, delete, retry, enable and disable documents (DOC: an id or a unique name)."""


@document.command("list")
@dataset_option
@click.option(
    "--status",
    type=click.Choice([str(status) for status in DocumentStatus]),
    default=None,
    help="Only documents in this status.",
)
@json_option
@click.pass_context
def document_list(ctx: click.Context, dataset_name: str, status: str | None, as_json: bool) -> None:
    """List a dataset's documents, oldest first."""
    with open_knowledge_base(ctx) as kb:
        ds = kb.dataset(dataset_name)
        infos = ds.documents(status=status)
        if as_json:
            words = ds.word_counts([info.id for info in infos])
            print_json(
                {
                    "dataset": {"id": ds.id, "name": ds.name},
                    "documents": [document_json(info, words.get(info.id, 0)) for info in infos],
                }
            )
            return
        for info in infos:
            click.echo(document_line(info))
        click.echo(f"{len(infos)} documents" + (f" {status}" if status else ""))


@document.command("show")
@click.argument("doc")
@dataset_option
@json_option
@click.pass_context
def document_show(ctx: click.Context, doc: str, dataset_name: str, as_json: bool) -> None:
    """Show a document: status, error, counts, content hash, times and any failed chunks."""
    with open_knowledge_base(ctx) as kb:
        ds = kb.dataset(dataset_name)
        info = find_document(ds, doc)
        detail = document_detail_json(info, ds.word_counts([info.id]).get(info.id, 0))
    if as_json:
        print_json(detail)
        return
    click.echo(f"document  {info.name} ({info.id})")
    click.echo(f"status    {info.status}, {'enabled' if info.enabled else 'disabled'}")
    if info.error:
        click.echo(f"error     {info.error}")
    click.echo(
        f"counts    {info.segment_count} segments, {info.token_count} tokens, {detail['word_count']} words"
    )
    click.echo(f"source    {info.source or '—'} ({info.size} bytes)")
    click.echo(f"hash      {info.file_hash or '—'}")
    click.echo(f"created   {when(info.created_at)}")
    for stage, at in info.stage_times.items():
        if at is not None:
            click.echo(f"{stage:9} {when(at)}")
    failed = detail["failed_chunks"]
    if failed:
        click.echo(f"{len(failed)} failed chunk(s) (`zhiku document retry` redoes only these):")
        for chunk in failed:
            click.echo(f"  #{chunk['position']}: {chunk['reason']}")


@document.command("delete")
@click.argument("docs", nargs=-1, required=True)
@dataset_option
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@json_option
@click.pass_context
def document_delete(
    ctx: click.Context, docs: tuple[str, ...], dataset_name: str, yes: bool, as_json: bool
) -> None:
    """Delete documents with their segments from every store."""
    with open_knowledge_base(ctx) as kb:
        ds = kb.dataset(dataset_name)
        infos = find_documents(ds, docs)
        if not yes:
            names = ", ".join(info.name for info in infos)
            click.confirm(f"delete {len(infos)} document(s) from {ds.name}: {names}?", abort=True, err=True)
        for info in infos:
            ds.delete_document(info.id)
            if not as_json:
                click.echo(f"deleted {info.name} ({info.id})")
    if as_json:
        print_json({"deleted": [{"id": info.id, "name": info.name} for info in infos]})


@document.command("retry")
@click.argument("doc")
@dataset_option
@json_option
@click.pass_context
def document_retry(ctx: click.Context, doc: str, dataset_name: str, as_json: bool) -> None:
    """Retry a failed document: only its failed chunks when it has some, else the whole file.
    Exit status 1 if it failed again."""
    with open_knowledge_base(ctx) as kb:
        ds = kb.dataset(dataset_name)
        info = ds.retry_document(find_document(ds, doc).id)
        words = ds.word_counts([info.id]).get(info.id, 0)
    if as_json:
        print_json(document_json(info, words))
    else:
        click.echo(f"{info.status:9} {info.name}" + (f": {info.error}" if info.error else ""))
    if info.status == DocumentStatus.ERROR:
        ctx.exit(1)


def _set_enabled(
    ctx: click.Context, docs: tuple[str, ...], dataset_name: str, enabled: bool, as_json: bool
) -> None:
    with open_knowledge_base(ctx) as kb:
        ds = kb.dataset(dataset_name)
        infos = find_documents(ds, docs)
        ds.set_documents_enabled([info.id for info in infos], enabled)
    if as_json:
        print_json({"documents": [{"id": info.id, "name": info.name, "enabled": enabled} for info in infos]})
        return
    for info in infos:
        click.echo(f"{'enabled' if enabled else 'disabled'} {info.name} ({info.id})")


@document.command("enable")
@click.argument("docs", nargs=-1, required=True)
@dataset_option
@json_option
@click.pass_context
def document_enable(ctx: click.Context, docs: tuple[str, ...], dataset_name: str, as_json: bool) -> None:
    """Serve documents' segments in search again."""
    _set_enabled(ctx, docs, dataset_name, True, as_json)


@document.command("disable")
@click.argument("docs", nargs=-1, required=True)
@dataset_option
@json_option
@click.pass_context
def document_disable(ctx: click.Context, docs: tuple[str, ...], dataset_name: str, as_json: bool) -> None:
    """Stop serving documents' segments in search (they stay stored)."""
    _set_enabled(ctx, docs, dataset_name, False, as_json)
