"""``zhiku search``: one dataset with its own settings, or a query routed across several."""

from __future__ import annotations

from typing import Any

import click

from zhiku.cli.common import SEARCH_METHODS, open_knowledge_base, user_errors
from zhiku.cli.output import json_option, print_json
from zhiku.client import ServerClient, remote_hit, running_server
from zhiku.core.documents import Hit


@click.command()
@click.argument("query")
@click.option(
    "--dataset",
    "dataset_names",
    multiple=True,
    help="Dataset to search (repeatable). None or several: routed across them (default: all).",
)
@click.option(
    "--method",
    type=click.Choice(sorted(SEARCH_METHODS)),
    default=None,
    help="Override the dataset's search method (one dataset only).",
)
@click.option("--top-k", type=int, default=None)
@click.option(
    "--section",
    default=None,
    help="Only this section (a heading path, 'Guide > Install') and those under it (one dataset only).",
)
@click.option("--routing", type=click.Choice(["single", "multiple"]), default="multiple")
@click.option(
    "--router", default="embedding", help="embedding, function_call, react or an installed router."
)
@click.option(
    "--merge", default="relevance", help="relevance, weighted, reranking_model, rrf or an installed merge."
)
@json_option
@click.pass_context
def search(
    ctx: click.Context,
    query: str,
    dataset_names: tuple[str, ...],
    method: str | None,
    top_k: int | None,
    section: str | None,
    routing: str,
    router: str,
    merge: str,
    as_json: bool,
) -> None:
    """Search one dataset, or route a query across several."""
    override: dict[str, Any] = {}
    if method:
        override["search_method"] = SEARCH_METHODS[method]
    if top_k:
        override["top_k"] = top_k
    if section is not None:
        override["section"] = section
    if len(dataset_names) != 1 and section is not None:
        raise click.BadParameter("--section applies to one dataset (give one --dataset)")
    if len(dataset_names) > 1 and method:
        raise click.BadParameter("--method applies to one dataset; routing uses each dataset's own")
    server = running_server(ctx.obj["home"])
    if server is not None:
        with user_errors(ctx), ServerClient(server) as client:
            if len(dataset_names) == 1:
                hits = client.search(dataset_names[0], query, override)
            else:
                options = {"routing": routing, "router": router, "merge": merge, "top_k": top_k}
                routed = client.retrieve(query, dataset_names, {k: v for k, v in options.items() if v})
                hits = [remote_hit(record) for record in routed["records"]]
        _finish(hits, None, as_json)
        return
    with open_knowledge_base(ctx) as kb:
        threshold: float | None = None
        if len(dataset_names) == 1:
            ds = kb.dataset(dataset_names[0])
            hits = ds.search(query, **override)
            threshold = ds.retrieval.score_threshold
        else:
            result = kb.retrieve(
                query,
                datasets=list(dataset_names) or None,
                routing=routing,  # type: ignore[arg-type]
                router=router,
                top_k=top_k,
                merge=merge,
            )
            hits = result.hits
            if not as_json:
                names = {ds.id: ds.name for ds in kb.datasets()}
                searched = ", ".join(names.get(i, i) for i in result.datasets)
                click.echo(
                    f"{routing} routing: searched {searched or 'nothing'}"
                    + (f" — {result.note}" if result.note else "")
                )
    _finish(hits, threshold, as_json)


def _finish(hits: list[Hit], threshold: float | None, as_json: bool) -> None:
    if as_json:
        print_json([hit.__dict__ for hit in hits])
        return
    _echo_hits(hits, threshold)


def _echo_hits(hits: list[Hit], threshold: float | None) -> None:
    if not hits:
        click.echo(
            f"nothing relevant found (no hit reaches relevance {threshold:g})"
            if threshold is not None
            else "nothing relevant found"
        )
    for rank, hit in enumerate(hits, start=1):
        per_method = ", ".join(f"{k} {v:.3f}" for k, v in hit.scores.items())
        click.echo(f"{rank}. [relevance {hit.score:.3f}] {hit.document_name} #{hit.position}  ({per_method})")
        click.echo("   " + hit.content.replace("\n", " ")[:200])
        if hit.answer:
            click.echo("   → " + hit.answer.replace("\n", " ")[:200])
