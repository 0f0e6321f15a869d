"""``zhiku eval``, ``zhiku eval-routing`` and ``zhiku bench``: measure quality and speed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar

import click

from zhiku.cli.common import (
    Progress,
    foreign_options,
    foreign_sets,
    open_knowledge_base,
    progress_bar,
    user_errors,
)
from zhiku.cli.output import json_option, notice, print_json
from zhiku.knowledge_base import KnowledgeBase

METRIC_COLUMNS = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10", "ms_per_query")
#: What the eval reports of the relevance threshold, after each method's metrics.
THRESHOLD_COLUMNS = ("recall@10_at_threshold", "abstention", "ece")


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
@foreign_options
@click.option(
    "--score-threshold",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    help="The relevance threshold scored (default: the default threshold).",
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
    foreign_dirs: tuple[Path, ...],
    foreign_questions: int,
    score_threshold: float | None,
    as_json: bool,
) -> None:
    """Score retrieval on an evaluation set: recall@1/5/10, MRR@10, nDCG@10 per method.

    Each method is also scored at the relevance threshold: recall@10 of the hits that reach it,
    and, asking questions of other sets (which have no answer here), the share it abstains on and
    the calibration error of its scores. The set's dataset is reused when it serves every
    document, else resumed (stderr says so); documents still failing are counted in the report and
    warned about, or refused by --strict."""
    from zhiku.core.retrieval_config import DEFAULT_SCORE_THRESHOLD
    from zhiku.evaluation.runner import DEFAULT_METHODS, METHODS, EvalReport, evaluate
    from zhiku.evaluation.sets import load_eval_set

    unknown = set(methods) - set(METHODS)
    if unknown:
        raise click.BadParameter(f"unknown method(s) {sorted(unknown)}; known: {sorted(METHODS)}")
    with user_errors(ctx):
        eval_set = load_eval_set(setdir, limit_queries)
        foreign = foreign_sets(setdir, foreign_dirs, foreign_questions)

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
            foreign=foreign,
            foreign_count=foreign_questions,
            score_threshold=DEFAULT_SCORE_THRESHOLD if score_threshold is None else score_threshold,
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
            extra = {k: v for k, v in scores.items() if k.startswith("answer_") or k in THRESHOLD_COLUMNS}
            if extra:
                click.echo(f"{'':28}" + "  ".join(f"{k} {v}" for k, v in extra.items()))
            by_origin = info.get("abstention_by_origin", {}).get(method)
            if by_origin:
                origins = "  ".join(f"{origin} {value}" for origin, value in by_origin.items())
                click.echo(f"{'':28}abstention by origin: {origins}")
        click.echo(
            f"at relevance >= {info['score_threshold']}; abstention over {info['foreign_questions']} "
            "questions of other sets"
        )

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
@click.option(
    "--store",
    default=None,
    help="Instead: the same corpus on the embedded stores and on this backend (pgvector, qdrant; "
    "edge: the embedded stores alone): ingest rate, hybrid p50/p99 unfiltered and with 10%/1% "
    "filters, filtered recall against exact.",
)
@json_option
@click.pass_context
def bench(
    ctx: click.Context, segments: int, queries: int, keep: Path | None, store: str | None, as_json: bool
) -> None:
    """Ingestion throughput and query latency against rank_bm25 and qdrant-client (see benchmarks/).

    With --json the progress and the readable report go to stderr (a 1M run takes hours)."""
    from zhiku.benchmarking import run_benchmark

    def log(line: str) -> None:
        click.echo(line, err=as_json)

    with user_errors(ctx):
        if store is not None:
            from zhiku.benchmarking.stores import compare_stores, format_stores

            backends = ["edge"] if store == "edge" else ["edge", store]
            result = compare_stores(ctx.obj["home"], backends, segments, queries, log=log)
            for line in format_stores(result):
                log(line)
        else:
            result = run_benchmark(ctx.obj["home"], segments=segments, queries=queries, log=log, keep=keep)
    if as_json:
        print_json(result, indent=None)


@click.command("calibrate")
@click.argument(
    "setdirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@click.option("--embedding-model", default=None, help="Default: the knowledge base's embedding model.")
@click.option(
    "--embedding-option",
    "embedding_options",
    multiple=True,
    metavar="KEY=VALUE",
    help="An option of the model (path=/models/bge for transformers; a JSON value or a string); repeatable.",
)
@click.option(
    "--questions",
    type=click.IntRange(10, 100_000),
    default=300,
    show_default=True,
    help="Own and foreign questions asked of each set.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Also write the calibration (JSON) here.",
)
@click.option(
    "--save",
    is_flag=True,
    help="Write it to <home>/calibrations/<model>.json, where searches of this home read it.",
)
@json_option
@click.pass_context
def calibrate_command(
    ctx: click.Context,
    setdirs: tuple[Path, ...],
    embedding_model: str | None,
    embedding_options: tuple[str, ...],
    questions: int,
    out: Path | None,
    save: bool,
    as_json: bool,
) -> None:
    """Fit the relevance calibration of an embedding model on evaluation sets and check it on each
    set left out.

    Each set is asked its own judged questions and the other sets' questions (which it cannot
    answer); the hits' evidence and judgements fit one logistic model per kind of evidence. The
    check fits on all sets but one and prints the expected calibration error on the one left out.
    With --save, the home's datasets of that model score with it from their next opening (before a
    shipped calibration of the same model); with --embedding-option, only those of that exact
    model (the file is named after it: another directory gets its own)."""
    import json

    from zhiku.evaluation.calibration import fit, leave_one_out
    from zhiku.evaluation.runner import calibration_samples
    from zhiku.evaluation.sets import load_eval_set
    from zhiku.retrieval.calibration_files import home_calibration_path

    if len(setdirs) < 2:
        raise click.BadParameter("give at least two sets: each is asked the others' questions")
    options = _key_values(embedding_options)
    with user_errors(ctx):
        sets = [load_eval_set(path) for path in setdirs]
    with open_knowledge_base(ctx) as kb, progress_bar("calibrate") as progress, user_errors(ctx):
        model = embedding_model or kb.settings.embedding_model
        home = kb.settings.home
        by_set = {
            eval_set.name: calibration_samples(
                kb,
                eval_set,
                sets,
                questions,
                embedding_model=model,
                embedding_options=options,
                on_progress=progress,
                on_notice=notice,
            )
            for eval_set in sets
        }
    samples = [sample for found in by_set.values() for sample in found]
    with user_errors(ctx):
        calibration = fit(samples, model)
        check = leave_one_out(by_set, model)
    text = json.dumps(calibration.to_json(), indent=2) + "\n"
    written = [out] if out is not None else []
    if save:
        written.append(home_calibration_path(home, _exact_name(model, options) if options else model))
    for path in written:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    written_to = [str(path) for path in written]
    result = {"calibration": calibration.to_json(), "held_out_ece": check, "written": written_to}
    if as_json:
        print_json(result, indent=None)
        return
    click.echo(f"{model}: fitted on {', '.join(calibration.fitted_on)} ({len(samples)} hits)")
    for kinds, weights in calibration.weights.items():
        click.echo(f"  {kinds:16} weights {', '.join(f'{w:.4g}' for w in weights)}")
    click.echo("expected calibration error on each set left out of the fit:")
    for name, errors in check.items():
        click.echo(f"  {name:28}" + "  ".join(f"{kinds} {value}" for kinds, value in errors.items()))
    for path in written:
        click.echo(f"written to {path}")


def _key_values(pairs: tuple[str, ...]) -> dict[str, Any]:
    """``KEY=VALUE`` options as a dict: a value is read as JSON (``256``, ``true``), else kept as text."""
    import json

    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint="--embedding-option")
        try:
            options[key.strip()] = json.loads(value)
        except ValueError:
            options[key.strip()] = value
    return options


def _exact_name(model: str, options: dict[str, Any]) -> str:
    """The model's own name (a directory's carries a digest of its weights): its calibration's file."""
    from zhiku.providers.embedding import create_embedding_model

    return str(create_embedding_model(model, **options).name)
