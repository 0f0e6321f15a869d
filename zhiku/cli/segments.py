"""``zhiku segment``: list, show, edit, enable and disable a dataset's segments one by one, and
the child chunks of parent segments (parent-child datasets).

An edit of a segment's content or keywords re-indexes that segment alone in every store.
"""

from __future__ import annotations

from typing import TextIO

import click

from zhiku.cli.common import dataset_option, open_knowledge_base
from zhiku.cli.lookup import find_document
from zhiku.cli.output import echo_segment, json_option, print_json, segment_json, segment_line
from zhiku.knowledge_base import Dataset
from zhiku.knowledge_base.indexing.child_chunks import StoredChild
from zhiku.knowledge_base.indexing.segments import StoredSegment


@click.group()
def segment() -> None:
    """List, show, edit, enable and disable segments (SEG: a segment id, as `segment list` shows)."""


@segment.command("list")
@dataset_option
@click.option("--document", "doc", default=None, help="Only this document's (an id or a unique name).")
@click.option("--enabled/--disabled", "enabled", default=None, help="Only enabled, or only disabled, ones.")
@click.option("--keyword", default=None, help="Only those whose content or answer contains this text.")
@click.option("--page", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True, help="Segments a page.")
@json_option
@click.pass_context
def segment_list(
    ctx: click.Context,
    dataset_name: str,
    doc: str | None,
    enabled: bool | None,
    keyword: str | None,
    page: int,
    limit: int,
    as_json: bool,
) -> None:
    """List segments page by page, document by document in order."""
    with open_knowledge_base(ctx) as kb:
        ds = kb.dataset(dataset_name)
        document_id = find_document(ds, doc).id if doc is not None else None
        found, total = ds.segment_editor().page(
            document_id, offset=(page - 1) * limit, limit=limit, keyword=keyword, enabled=enabled
        )
        names = _document_names(ds, found)
    if as_json:
        print_json(
            {
                "total": total,
                "page": page,
                "limit": limit,
                "segments": [segment_json(stored, names[stored.segment.document_id]) for stored in found],
            }
        )
        return
    for stored in found:
        click.echo(segment_line(stored, names[stored.segment.document_id]))
    first = (page - 1) * limit + 1
    shown = f"{first}-{first + len(found) - 1} of {total}" if found else f"none of {total} on page {page}"
    click.echo(f"segments {shown}")


@segment.command("show")
@click.argument("seg")
@dataset_option
@json_option
@click.pass_context
def segment_show(ctx: click.Context, seg: str, dataset_name: str, as_json: bool) -> None:
    """Show a segment in full: content, answer, keywords, state."""
    with open_knowledge_base(ctx) as kb:
        ds = kb.dataset(dataset_name)
        stored = ds.segment_editor().find(seg)
        name = ds.document(stored.segment.document_id).name
    if as_json:
        print_json(segment_json(stored, name))
        return
    echo_segment(stored, name)


@segment.command("edit")
@click.argument("seg")
@dataset_option
@click.option("--content", default=None, help="New text (re-embedded and re-indexed).")
@click.option(
    "--content-file",
    type=click.File("r", encoding="utf-8"),
    default=None,
    help="Read the new text from a UTF-8 file ('-': standard input).",
)
@click.option("--keywords", default=None, metavar="A,B", help="Replace its keywords (comma-separated).")
@click.option("--answer", default=None, help="New answer (Q&A segments; not indexed).")
@json_option
@click.pass_context
def segment_edit(
    ctx: click.Context,
    seg: str,
    dataset_name: str,
    content: str | None,
    content_file: TextIO | None,
    keywords: str | None,
    answer: str | None,
    as_json: bool,
) -> None:
    """Change a segment's content, keywords or answer; only that segment is re-indexed. New
    content without --keywords gets its keywords extracted again."""
    if content is not None and content_file is not None:
        raise click.UsageError("give --content or --content-file, not both")
    if content_file is not None:
        content = content_file.read()
    if content is None and keywords is None and answer is None:
        raise click.UsageError("nothing to change: give --content, --content-file, --keywords or --answer")
    with open_knowledge_base(ctx) as kb:
        ds = kb.dataset(dataset_name)
        editor = ds.segment_editor()
        current = editor.find(seg).segment
        stored = editor.update(
            current.document_id,
            current.id,
            content=content,
            keywords=[k.strip() for k in keywords.split(",")] if keywords is not None else None,
            answer=answer,
        )
        name = ds.document(current.document_id).name
    if as_json:
        print_json(segment_json(stored, name))
        return
    click.echo(f"updated segment {stored.segment.id}")
    echo_segment(stored, name)


def _set_enabled(
    ctx: click.Context, segs: tuple[str, ...], dataset_name: str, enabled: bool, as_json: bool
) -> None:
    ids = list(dict.fromkeys(segs))
    with open_knowledge_base(ctx) as kb:
        ds = kb.dataset(dataset_name)
        ds.set_segments_enabled(ids, enabled)
    if as_json:
        print_json({"segments": [{"id": segment_id, "enabled": enabled} for segment_id in ids]})
        return
    for segment_id in ids:
        click.echo(f"{'enabled' if enabled else 'disabled'} segment {segment_id}")


@segment.command("enable")
@click.argument("segs", nargs=-1, required=True)
@dataset_option
@json_option
@click.pass_context
def segment_enable(ctx: click.Context, segs: tuple[str, ...], dataset_name: str, as_json: bool) -> None:
    """Serve segments in search again."""
    _set_enabled(ctx, segs, dataset_name, True, as_json)


@segment.command("disable")
@click.argument("segs", nargs=-1, required=True)
@dataset_option
@json_option
@click.pass_context
def segment_disable(ctx: click.Context, segs: tuple[str, ...], dataset_name: str, as_json: bool) -> None:
    """Stop serving segments in search (they stay stored and editable)."""
    _set_enabled(ctx, segs, dataset_name, False, as_json)


def _document_names(ds: Dataset, found: list[StoredSegment]) -> dict[str, str]:
    """The names of the documents these segments belong to (a page holds few)."""
    return {
        document_id: ds.document(document_id).name for document_id in {s.segment.document_id for s in found}
    }


# -- child chunks (documents indexed as hierarchical_model) -------------------------------------------


def _child_json(stored: StoredChild) -> dict[str, object]:
    chunk = stored.chunk
    return {
        "id": chunk.id,
        "segment_id": stored.segment_id,
        "position": chunk.position,
        "tokens": chunk.tokens,
        "content": chunk.content,
    }


def _echo_children(found: list[StoredChild]) -> None:
    for stored in found:
        text = stored.chunk.content.replace("\n", " ")
        click.echo(f"{stored.chunk.id}  #{stored.chunk.position}  {text[:80]}")


@segment.command("children")
@click.argument("seg")
@dataset_option
@click.option("--keyword", default=None, help="Only those whose content contains this text.")
@click.option("--page", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
@json_option
@click.pass_context
def segment_children(
    ctx: click.Context, seg: str, dataset_name: str, keyword: str | None, page: int, limit: int, as_json: bool
) -> None:
    """List a parent segment's child chunks (the pieces indexed in its place), in order."""
    with open_knowledge_base(ctx) as kb:
        editor = kb.dataset(dataset_name).segment_editor()
        parent = editor.find(seg).segment
        found, total = editor.children(
            parent.document_id, parent.id, offset=(page - 1) * limit, limit=limit, keyword=keyword
        )
    if as_json:
        children = [_child_json(c) for c in found]
        print_json({"total": total, "page": page, "limit": limit, "children": children})
        return
    click.echo(f"{total} child chunk(s)")
    _echo_children(found)


@segment.command("add-child")
@click.argument("seg")
@dataset_option
@click.option("--content", required=True, help="The child chunk's text (indexed in every store).")
@json_option
@click.pass_context
def segment_add_child(ctx: click.Context, seg: str, dataset_name: str, content: str, as_json: bool) -> None:
    """Append a child chunk to a parent segment."""
    with open_knowledge_base(ctx) as kb:
        editor = kb.dataset(dataset_name).segment_editor()
        parent = editor.find(seg).segment
        stored = editor.add_child(parent.document_id, parent.id, content)
    if as_json:
        print_json(_child_json(stored))
    else:
        _echo_children([stored])


@segment.command("edit-child")
@click.argument("seg")
@click.argument("child")
@dataset_option
@click.option("--content", required=True, help="The child chunk's new text.")
@json_option
@click.pass_context
def segment_edit_child(
    ctx: click.Context, seg: str, child: str, dataset_name: str, content: str, as_json: bool
) -> None:
    """Change a child chunk's text (it keeps its id; its parent's text is unchanged)."""
    with open_knowledge_base(ctx) as kb:
        editor = kb.dataset(dataset_name).segment_editor()
        parent = editor.find(seg).segment
        stored = editor.update_child(parent.document_id, parent.id, child, content)
    if as_json:
        print_json(_child_json(stored))
    else:
        _echo_children([stored])


@segment.command("delete-child")
@click.argument("seg")
@click.argument("child")
@dataset_option
@click.pass_context
def segment_delete_child(ctx: click.Context, seg: str, child: str, dataset_name: str) -> None:
    """Delete a child chunk (a parent keeps at least one)."""
    with open_knowledge_base(ctx) as kb:
        editor = kb.dataset(dataset_name).segment_editor()
        parent = editor.find(seg).segment
        editor.delete_child(parent.document_id, parent.id, child)
    click.echo(f"deleted child chunk {child}")
