"""``zhiku eval``, ``zhiku eval-routing`` and ``zhiku bench``: measure quality and speed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import click

from zhiku.cli.common import Progress, open_knowledge_base, progress_bar, user_errors
from zhiku.cli.output import json_option, notice, print_json
from zhiku.knowledge_base import KnowledgeBase

METRIC_COLUMNS = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10", "ms_per_query")


class Report(Protocol):
    def to_json(self) -> dict[str, Any]: ...


R = TypeVar("R", bound=Report)


def _evaluate(
    ctx: click.Context,
    label: str,
    run: Callable[[KnowledgeBase, Progress], R],
    echo_report: Callable[[R], None],
    as_json: bool,
) -> None:
    """Run an evaluation on the knowledge base with a progress bar, then print its report."""
    with open_knowledge_base(ctx) as kb, progress_bar(label) as progress:
        report = run(kb, progress)
    if as_json:
        print_json(report.to_json(), indent=None)
    else:
        echo_report(report)


def _echo_metrics_header(label: str) -> None:
    click.echo(f"{label:28}" + "".join(f"{column:>13}" for column in METRIC_COLUMNS))


def _echo_metrics(label: str, scores: dict[str, float]) -> None:
    click.echo(f"{label:28}" + "".join(f"{scores.get(column, 0):>13}" for column in METRIC_COLUMNS))


@click.command("eval")
@click.argument("setdir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--mode", type=click.Choice(["passage", "document"]), default="passage")
@click.option(
    "--method",
    "methods",
    multiple=True,
    help="semantic, full_text, keyword, hybrid, hybrid_weighted, hybrid_rrf, hybrid_all_three (repeatable).",
)
@click.option("--embedding-model", default=None)
@click.option(
    "--doc-form",
    type=click.Choice(["paragraph", "hierarchical_model"]),
    default="paragraph",
    help="Document mode: index paragraphs, or parents of the same size with their child chunks.",
)
@click.option("--limit-queries", type=int, default=None, help="Only the first N judged queries.")
@click.option("--rebuild", is_flag=True, help="Re-ingest even if the set's dataset exists.")
@click.option(
    "--strict",
    is_flag=True,
    help="Exit 1 (code incomplete_index) instead of scoring when documents of the set stay unindexed.",
)
@json_option
@click.pass_context
def eval_command(
    ctx: click.Context,
    setdir: Path,
    mode: str,
    methods: tuple[str, ...],
    embedding_model: str | None,
    doc_form: str,
    limit_queries: int | None,
    rebuild: bool,
    strict: bool,
    as_json: bool,
) -> None:
    """Score retrieval on an evaluation set: recall@1/5/10, MRR@10, nDCG@10 per method.

    The set's dataset is reused when it serves every document, else resumed (stderr says so);
    documents still failing are counted in the report and warned about, or refused by --strict."""
    from zhiku.evaluation.runner import DEFAULT_METHODS, METHODS, EvalReport, evaluate
    from zhiku.evaluation.sets import load_eval_set

    unknown = set(methods) - set(METHODS)
    if unknown:
        raise click.BadParameter(f"unknown method(s) {sorted(unknown)}; known: {sorted(METHODS)}")
    with user_errors(ctx):
        eval_set = load_eval_set(setdir, limit_queries)

    def run(kb: KnowledgeBase, progress: Progress) -> EvalReport:
        return evaluate(
            kb,
            eval_set,
            "document" if mode == "document" else "passage",
            methods or DEFAULT_METHODS,
            embedding_model=embedding_model,
            rebuild=rebuild,
            on_progress=progress,
            on_notice=notice,
            doc_form="hierarchical_model" if doc_form == "hierarchical_model" else "paragraph",
            strict=strict,
        )

    def echo(report: EvalReport) -> None:
        info = report.info
        indexed, errors = info["indexed"], info["errors"]
        click.echo(
            f"{report.set} ({report.mode} mode, {info['doc_form']}, {info['queries_scored']} of "
            f"{info['queries']} queries scored, {info['embedding_model']})"
        )
        click.echo(
            f"dataset {info['dataset']} ({info['action']}): {indexed['documents']} of "
            f"{indexed['documents_expected']} documents served, {indexed['segments']} segments"
            + (f", {errors['count']} not indexed" if errors["count"] else "")
        )
        _echo_metrics_header("method")
        for method, scores in report.methods.items():
            _echo_metrics(method, scores)
            extra = {k: v for k, v in scores.items() if k.startswith("answer_")}
            if extra:
                click.echo(f"{'':28}" + "  ".join(f"{k} {v}" for k, v in extra.items()))

    _evaluate(ctx, f"eval {eval_set.name}", run, echo, as_json)


@click.command("eval-routing")
@click.argument(
    "setdirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option(
    "--router",
    "routers",
    multiple=True,
    help="Routers to score (repeatable): embedding, function_call, react. "
    "Default: embedding, plus the LLM routers when a chat model is configured.",
)
@click.option("--describe", multiple=True, metavar="NAME=TEXT", help="A dataset's description (repeatable).")
@click.option("--embedding-model", default=None)
@click.option("--limit-queries", type=int, default=None, help="Only the first N judged queries of each set.")
@json_option
@click.pass_context
def eval_routing_command(
    ctx: click.Context,
    setdirs: tuple[Path, ...],
    routers: tuple[str, ...],
    describe: tuple[str, ...],
    embedding_model: str | None,
    limit_queries: int | None,
    as_json: bool,
) -> None:
    """Route every query of several evaluation sets (one dataset each): router accuracy, and
    nDCG@10 of multi-path retrieval against searching the right dataset alone."""
    from zhiku.evaluation.routing import RoutingReport, evaluate_routing
    from zhiku.evaluation.sets import load_eval_set
    from zhiku.retrieval.routers import router_names

    descriptions = {}
    for item in describe:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"--describe wants NAME=TEXT, got {item!r}")
        descriptions[name.strip()] = text
    known = router_names()
    unknown = set(routers) - set(known)
    if unknown:
        raise click.BadParameter(f"unknown router(s) {sorted(unknown)}; known: {known}")
    with user_errors(ctx):
        eval_sets = [load_eval_set(path, limit_queries) for path in setdirs]

    def run(kb: KnowledgeBase, progress: Progress) -> RoutingReport:
        chosen = routers or (known if kb.settings.llm_base_url and kb.settings.llm_model else ["embedding"])
        return evaluate_routing(
            kb,
            eval_sets,
            routers=chosen,
            describe=descriptions,
            embedding_model=embedding_model,
            on_progress=progress,
            on_notice=notice,
        )

    def echo(report: RoutingReport) -> None:
        info = report.info
        click.echo(f"{len(report.sets)} datasets, {info['queries']} queries ({info['embedding_model']})")
        for router, figures in report.routers.items():
            click.echo(
                f"router {router:14} accuracy {figures['accuracy']:.4f}  ({figures['ms_per_query']} ms/query)"
            )
        _echo_metrics_header("retrieval")
        _echo_metrics("multiple (all datasets)", report.multiple)
        _echo_metrics("single_dataset (right one)", report.single_dataset)
        for name, figures in report.per_set.items():
            click.echo(
                f"  {name:24} {figures['queries']:>5} queries  accuracy {figures['accuracy']}  "
                f"nDCG@10 multiple {figures['multiple_ndcg@10']:.4f} / "
                f"right dataset {figures['single_dataset_ndcg@10']:.4f}"
            )

    _evaluate(ctx, "eval-routing", run, echo, as_json)


@click.command()
@click.option("--segments", type=int, default=10_000, help="Corpus size for the latency runs.")
@click.option("--queries", type=int, default=200)
@click.option(
    "--keep",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Build the dataset in this directory and keep it; a later run of the same size reuses it "
    "(no ingest, no index build), so two versions time their searches on the same data.",
)
@json_option
@click.pass_context
def bench(ctx: click.Context, segments: int, queries: int, keep: Path | None, as_json: bool) -> None:
    """Ingestion throughput and query latency against rank_bm25 and qdrant-client (see benchmarks/).

    With --json the progress and the readable report go to stderr (a 1M run takes hours)."""
    from zhiku.benchmarking import run_benchmark

    def log(line: str) -> None:
        click.echo(line, err=as_json)

    with user_errors(ctx):
        result = run_benchmark(ctx.obj["home"], segments=segments, queries=queries, log=log, keep=keep)
    if as_json:
        print_json(result, indent=None)
