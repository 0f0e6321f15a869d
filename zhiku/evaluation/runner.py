"""Run an evaluation set through zhiku and score each search method.

Passage mode indexes every corpus line as one pre-made segment (isolates retrieval); document mode
ingests ``docs/`` through extract → clean → split → index (the whole pipeline) and judges chunks
by document (and, for QA sets, by whether the chunk holds an answer).
The dataset is kept in the knowledge base as ``eval-<set>-<mode>`` and reused by later runs with
the same embedding model, so trying another fusion does not re-embed the corpus.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from zhiku.core.documents import Chunk, Hit
from zhiku.core.errors import NotFound, ZhikuError
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.evaluation.metrics import score_run
from zhiku.evaluation.sets import EvalSet
from zhiku.knowledge_base import Dataset, KnowledgeBase

Mode = Literal["passage", "document"]
#: How document mode indexes the files: paragraphs, or parents with their children.
DocForm = Literal["paragraph", "hierarchical_model"]

#: Search methods the eval can run: name → override of the dataset's retrieval config.
METHODS: dict[str, dict[str, Any]] = {
    "semantic": {"search_method": "semantic_search"},
    "full_text": {"search_method": "full_text_search"},
    "keyword": {"search_method": "keyword_search"},
    "hybrid": {},
    "hybrid_weighted": {"reranking": {"mode": "weighted_score"}},
    "hybrid_rrf": {"reranking": {"mode": "rrf"}},
    "hybrid_all_three": {"hybrid_methods": ["semantic", "full_text", "keyword"]},
}
DEFAULT_METHODS = ("semantic", "full_text", "keyword", "hybrid")

Progress = Callable[[str, int, int], None]


@dataclass
class EvalReport:
    set: str
    mode: Mode
    methods: dict[str, dict[str, float]] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"set": self.set, "mode": self.mode, "methods": self.methods, "info": self.info}


def _dataset(
    kb: KnowledgeBase,
    eval_set: EvalSet,
    mode: Mode,
    embedding_model: str | None,
    rebuild: bool,
    name: str | None,
    description: str | None,
    doc_form: DocForm = "paragraph",
) -> tuple[Dataset, bool]:
    suffix = "" if doc_form == "paragraph" else f"-{doc_form}"
    name = name or f"eval-{eval_set.name}-{mode}{suffix}"
    description = description if description is not None else f"evaluation set {eval_set.name}"
    try:
        dataset = kb.dataset(name)
        wanted = embedding_model or kb.settings.embedding_model
        if rebuild or dataset.embedding_model != wanted or _incomplete(dataset):
            kb.delete_dataset(name)
        else:
            if dataset.description != description:
                dataset.update(description=description)
            return dataset, False
    except NotFound:
        pass
    rule = {"doc_form": doc_form}  # parents as large as the paragraph run's segments
    return (
        kb.create_dataset(name, description=description, embedding_model=embedding_model, process_rule=rule),
        True,
    )


def _incomplete(dataset: Dataset) -> bool:
    """Reused only when every document completed: scores over a half-indexed corpus would be
    silently low (an interrupted run leaves documents waiting, indexing or in error)."""
    stats = dataset.stats()
    return stats["documents"] == 0 or set(stats["by_status"]) != {"completed"}


def ingest(
    kb: KnowledgeBase,
    eval_set: EvalSet,
    mode: Mode,
    *,
    embedding_model: str | None = None,
    rebuild: bool = False,
    on_progress: Progress | None = None,
    name: str | None = None,
    description: str | None = None,
    doc_form: DocForm = "paragraph",
) -> tuple[Dataset, dict[str, Any]]:
    """Build (or reuse) the set's dataset (named ``eval-<set>-<mode>[-<doc_form>]`` unless
    ``name`` is given); returns it with ingest figures. ``doc_form`` ``hierarchical_model``
    (document mode) indexes the files as parents of the default size with their children."""
    if doc_form != "paragraph" and mode == "passage":
        raise ZhikuError("passage mode indexes the corpus lines as given; a doc_form needs document mode")
    dataset, fresh = _dataset(kb, eval_set, mode, embedding_model, rebuild, name, description, doc_form)
    info: dict[str, Any] = {"reused": not fresh}
    if fresh:
        started = time.perf_counter()
        timings: dict[str, float] = {}
        if mode == "passage":
            documents = [
                (p.id, [Chunk(content=p.content, position=0, tokens=0, metadata={"doc": p.doc})])
                for p in eval_set.passages
            ]
            dataset.add_chunks(documents, on_progress=on_progress, timings=timings)
        else:
            files = sorted(eval_set.docs_dir.glob("*.txt"))
            dataset.add_files(files, on_progress=on_progress, timings=timings)
        _require_complete(dataset)
        dataset.optimize()
        info["ingest_seconds"] = round(time.perf_counter() - started, 1)
        info["stage_seconds"] = {k: round(v, 2) for k, v in timings.items()}
    info.update(dataset.stats())
    return dataset, info


def _require_complete(dataset: Dataset) -> None:
    """Refuse to score a corpus that did not index whole (the reason of the first failure)."""
    stats = dataset.stats()
    failed = stats["documents"] - stats["by_status"].get("completed", 0)
    if failed:
        reason = ""
        first = next((doc for doc in dataset.documents() if doc.status != "completed"), None)
        if first is not None:
            reason = f" (first: {first.name}, {first.status}{f': {first.error}' if first.error else ''})"
        raise ZhikuError(
            f"{failed} of {stats['documents']} documents of {dataset.name!r} did not index{reason}; "
            "fix the cause and run again (the dataset is rebuilt)"
        )


def _judged_ids(hits: Sequence[Hit], mode: Mode) -> list[str]:
    if mode == "passage":
        return [hit.document_name for hit in hits]
    return [hit.document_name.rsplit(".", 1)[0] for hit in hits]


def _answer_hit_rate(runs: dict[str, list[Hit]], eval_set: EvalSet) -> dict[str, float]:
    """Share of queries with a chunk from a gold document that contains an answer, in the top k."""
    totals = {"answer_recall@1": 0.0, "answer_recall@5": 0.0, "answer_recall@10": 0.0, "answer_mrr@10": 0.0}
    judged = 0
    for query_id, hits in runs.items():
        answers = eval_set.answers.get(query_id)
        if not answers:
            continue
        judged += 1
        gold_docs = eval_set.qrels_docs.get(query_id, set())
        for rank, hit in enumerate(hits[:10], start=1):
            doc = hit.document_name.rsplit(".", 1)[0]
            if doc in gold_docs and any(answer in hit.content for answer in answers):
                for k in (1, 5, 10):
                    if rank <= k:
                        totals[f"answer_recall@{k}"] += 1
                totals["answer_mrr@10"] += 1.0 / rank
                break
    return {name: round(value / judged, 4) for name, value in totals.items()} if judged else {}


def evaluate(
    kb: KnowledgeBase,
    eval_set: EvalSet,
    mode: Mode = "passage",
    methods: Sequence[str] = DEFAULT_METHODS,
    *,
    embedding_model: str | None = None,
    rebuild: bool = False,
    on_progress: Progress | None = None,
    doc_form: DocForm = "paragraph",
) -> EvalReport:
    """Ingest (or reuse) the set and score every method over all judged queries."""
    dataset, info = ingest(
        kb,
        eval_set,
        mode,
        embedding_model=embedding_model,
        rebuild=rebuild,
        on_progress=on_progress,
        doc_form=doc_form,
    )
    info["doc_form"] = doc_form
    report = EvalReport(set=eval_set.name, mode=mode, info=info)
    qrels = eval_set.qrels if mode == "passage" else eval_set.qrels_docs
    top_k = 10 if mode == "passage" else 30
    query_ids = list(eval_set.queries)
    # every method starts from the default configuration, whatever the dataset stored
    configs = {method: RetrievalConfig().merged({**METHODS[method], "top_k": top_k}) for method in methods}
    runs: dict[str, dict[str, list[Hit]]] = {method: {} for method in methods}
    seconds = dict.fromkeys(methods, 0.0)
    dataset.persist_query_embeddings([eval_set.queries[query_id] for query_id in query_ids])
    # queries outside, methods inside: each query is embedded once, whatever the number of methods
    for done, query_id in enumerate(query_ids, start=1):
        text = eval_set.queries[query_id]
        for method, config in configs.items():
            started = time.perf_counter()
            runs[method][query_id] = dataset.search_with(text, config)
            seconds[method] += time.perf_counter() - started
        if on_progress and done % 20 == 0:
            on_progress("queries", done, len(query_ids))
    for method in methods:
        ranked = {query_id: _judged_ids(hits, mode) for query_id, hits in runs[method].items()}
        scores = score_run(ranked, qrels, query_ids)
        if mode == "document" and eval_set.answers:
            scores.update(_answer_hit_rate(runs[method], eval_set))
        scores["ms_per_query"] = round(1000 * seconds[method] / max(1, len(query_ids)), 2)
        report.methods[method] = scores
    report.info["queries"] = len(query_ids)
    report.info["passages_indexed"] = report.info.get("segments", 0)
    report.info["embedding_model"] = dataset.embedding_model
    return report
