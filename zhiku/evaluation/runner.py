"""Run an evaluation set through zhiku and score each search method.

Passage mode indexes every corpus line as one pre-made segment (isolates retrieval); document mode
ingests ``docs/`` through extract → clean → split → index (the whole pipeline) and judges chunks
by document (and, for QA sets, by whether the chunk holds an answer).
The dataset is kept in the knowledge base as ``eval-<set>-<mode>`` and reused by later runs with
the same embedding model, so trying another fusion does not re-embed the corpus; an interrupted
build is resumed, never scored as if it were whole.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from zhiku.core.documents import Chunk, Hit
from zhiku.core.errors import NotFound, ZhikuError
from zhiku.core.retrieval_config import DEFAULT_SCORE_THRESHOLD, RetrievalConfig
from zhiku.evaluation.calibration import (
    SAMPLE_TOP_K,
    Sample,
    calibration_error,
    foreign_questions,
    reliability,
    samples_of,
)
from zhiku.evaluation.coverage import Coverage, coverage
from zhiku.evaluation.metrics import score_run
from zhiku.evaluation.sets import FOREIGN_QUESTIONS, EvalSet, Passage
from zhiku.knowledge_base import Dataset, KnowledgeBase
from zhiku.text.stemming import DEFAULT_STEMMER
from zhiku.text.tokenizer import DEFAULT_HAN_BIGRAMS

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
#: Hears what the run does to the set's dataset (resumed, rebuilt) and warnings, one line each.
Notice = Callable[[str], None]


class IncompleteIndex(ZhikuError):
    """A strict run found documents of the set that are not served, so it scored nothing."""

    code = "incomplete_index"


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
    embedding_options: Mapping[str, Any] | None = None,
) -> tuple[Dataset, str | None]:
    """The set's dataset, and why it was (re)built: None when it already existed and is kept
    (resumed or reused, as :func:`ingest` decides)."""
    suffix = "" if doc_form == "paragraph" else f"-{doc_form}"
    name = name or f"eval-{eval_set.name}-{mode}{suffix}"
    description = description if description is not None else f"evaluation set {eval_set.name}"
    built = "created"
    try:
        dataset = kb.dataset(name)
        wanted = embedding_model or kb.settings.embedding_model
        outdated = _outdated_terms(dataset.tokenizer_settings)
        options = dict(embedding_options or {})
        same_model = dataset.embedding_model == wanted and dataset.embedding_options == options
        if not rebuild and same_model and outdated is None:
            if dataset.description != description:
                dataset.update(description=description)
            return dataset, None
        if rebuild:
            built = "rebuilt (--rebuild)"
        elif not same_model:
            given = f" {dataset.embedding_options}" if dataset.embedding_options else ""
            built = f"rebuilt (embedding model {dataset.embedding_model}{given})"
        else:
            built = f"rebuilt ({outdated})"
        kb.delete_dataset(name)
    except NotFound:
        pass
    rule = {"doc_form": doc_form}  # parents as large as the paragraph run's segments
    dataset = kb.create_dataset(
        name,
        description=description,
        embedding_model=embedding_model,
        embedding_options=dict(embedding_options or {}),
        process_rule=rule,
    )
    return dataset, built


def _outdated_terms(settings: Mapping[str, Any]) -> str | None:
    """Why a set's dataset no longer cuts text as a new one would (an upgrade changed a default),
    or None: scoring it would measure the older terms under the new version's name."""
    if settings.get("stemmer") != DEFAULT_STEMMER:
        return f"made with stemmer {settings.get('stemmer')}, a new dataset's is {DEFAULT_STEMMER}"
    pairs = bool(settings.get("han_bigrams", False))
    if pairs != DEFAULT_HAN_BIGRAMS:
        return f"made {'with' if pairs else 'without'} Chinese character pairs in BM25, unlike a new dataset"
    return None


@dataclass(frozen=True)
class _Unit:
    """One document the set asks for: a passage (passage mode) or a file (document mode)."""

    name: str
    key: str  # what a served document matches: the passage id, or the file's sha256
    passage: Passage | None = None
    path: Path | None = None


def _units(eval_set: EvalSet, mode: Mode) -> list[_Unit]:
    if mode == "passage":
        return [_Unit(p.id, p.id, passage=p) for p in eval_set.passages]
    files = sorted(eval_set.docs_dir.glob("*.txt"))
    return [_Unit(path.name, hashlib.sha256(path.read_bytes()).hexdigest(), path=path) for path in files]


def _missing(units: Sequence[_Unit], served: Coverage, mode: Mode) -> list[_Unit]:
    keys = served.served_names if mode == "passage" else served.served_hashes
    return [unit for unit in units if unit.key not in keys]


def _index(
    dataset: Dataset, units: Sequence[_Unit], on_progress: Progress | None, timings: dict[str, float]
) -> None:
    """Index the units (the embeddings of passages indexed before come from the cache)."""
    passages = [unit.passage for unit in units if unit.passage is not None]
    if passages:
        documents = [
            (p.id, [Chunk(content=p.content, position=0, tokens=0, metadata={"doc": p.doc})])
            for p in passages
        ]
        dataset.add_chunks(documents, on_progress=on_progress, timings=timings)
    files = [unit.path for unit in units if unit.path is not None]
    if files:
        dataset.add_files(files, on_progress=on_progress, timings=timings)


def ingest(
    kb: KnowledgeBase,
    eval_set: EvalSet,
    mode: Mode,
    *,
    embedding_model: str | None = None,
    rebuild: bool = False,
    on_progress: Progress | None = None,
    on_notice: Notice | None = None,
    name: str | None = None,
    description: str | None = None,
    doc_form: DocForm = "paragraph",
    embedding_options: Mapping[str, Any] | None = None,
) -> tuple[Dataset, dict[str, Any]]:
    """Build, resume or reuse the set's dataset (named ``eval-<set>-<mode>[-<doc_form>]`` unless
    ``name`` is given); returns it with ingest figures. ``doc_form`` ``hierarchical_model``
    (document mode) indexes the files as parents of the default size with their children.

    An existing dataset is reused only when every document of the set is served whole; else the
    documents not served are dropped and indexed again (``resumed``). ``on_notice`` hears which
    of these happened. Documents that still fail are counted in ``errors``, not raised: the
    caller decides whether scores over an incomplete corpus are acceptable."""
    if doc_form != "paragraph" and mode == "passage":
        raise ZhikuError("passage mode indexes the corpus lines as given; a doc_form needs document mode")
    dataset, built = _dataset(
        kb, eval_set, mode, embedding_model, rebuild, name, description, doc_form, embedding_options
    )
    units = _units(eval_set, mode)
    before = coverage(kb, dataset)
    missing = _missing(units, before, mode)
    action = built or ("resumed" if missing or not before.complete else "reused")
    info: dict[str, Any] = {"dataset": dataset.name, "action": action, "reused": action == "reused"}
    if action == "resumed" and on_notice:
        on_notice(
            f"{dataset.name}: resuming an incomplete index: {before.served_documents} of {len(units)} "
            f"documents served, {len(before.unserved)} not served (dropped), {len(missing)} to index"
        )
    elif built and built != "created" and on_notice:
        on_notice(f"{dataset.name}: {built}, indexing {len(units)} documents")
    if action != "reused":
        started = time.perf_counter()
        timings: dict[str, float] = {}
        for document in before.unserved:
            dataset.delete_document(document["id"])
        _index(dataset, missing, on_progress, timings)
        dataset.optimize()
        info["ingest_seconds"] = round(time.perf_counter() - started, 1)
        info["stage_seconds"] = {k: round(v, 2) for k, v in timings.items()}
    after = coverage(kb, dataset) if action != "reused" else before
    info.update(dataset.stats())
    info["indexed"] = {
        "documents": after.served_documents,
        "documents_expected": len(units),
        "segments": after.served_segments,
    }
    info["errors"] = after.errors()
    info["complete"] = after.complete and not _missing(units, after, mode)
    if not info["complete"] and on_notice:
        on_notice(_incomplete_warning(dataset.name, info))
    return dataset, info


def _incomplete_warning(name: str, info: dict[str, Any], *, strict: bool = False) -> str:
    """One line for an index that does not serve the whole set (``info`` from :func:`ingest`)."""
    indexed, errors = info["indexed"], info["errors"]
    first = "; ".join(f"{e['name']}: {e['reason']}" for e in errors["first"])
    head = f"{name} serves {indexed['documents']} of {indexed['documents_expected']} documents"
    detail = f"{errors['count']} not indexed{f', first: {first}' if first else ''}"
    return f"{head} ({detail}); nothing scored (strict)" if strict else f"warning: {head} ({detail})"


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
    on_notice: Notice | None = None,
    doc_form: DocForm = "paragraph",
    strict: bool = False,
    foreign: Sequence[EvalSet] = (),
    foreign_count: int = FOREIGN_QUESTIONS,
    score_threshold: float = DEFAULT_SCORE_THRESHOLD,
) -> EvalReport:
    """Ingest (or resume, or reuse) the set and score every method over all judged queries.
    When documents stay unserved the scores cover what is served and ``info`` says how much;
    ``strict`` raises :class:`IncompleteIndex` instead of scoring.

    Every method is scored without a threshold (its ranking) and with ``score_threshold``:
    ``recall@10_at_threshold`` counts only hits whose relevance reaches it. With ``foreign`` sets,
    ``foreign_count`` of their questions are asked too (judged for another corpus, so none is
    judged here): ``abstention`` is the share of them that get no hit at the threshold, per set
    they came from in ``info["abstention_by_origin"][method]`` (a set of the same field may hold
    passages that do answer them), and ``ece`` the expected calibration error of the relevance
    over the top 10 hits of all questions (passage mode), whose reliability diagram (per score
    bin: count, mean score, share relevant) is
    ``info["reliability"][method]``."""
    dataset, info = ingest(
        kb,
        eval_set,
        mode,
        embedding_model=embedding_model,
        rebuild=rebuild,
        on_progress=on_progress,
        on_notice=on_notice,
        doc_form=doc_form,
    )
    if strict and not info["complete"]:
        raise IncompleteIndex(_incomplete_warning(dataset.name, info, strict=True))
    info["doc_form"] = doc_form
    report = EvalReport(set=eval_set.name, mode=mode, info=info)
    qrels = eval_set.qrels if mode == "passage" else eval_set.qrels_docs
    top_k = 10 if mode == "passage" else 30
    query_ids = list(eval_set.queries)
    # every method starts from the default configuration, whatever the dataset stored
    configs = {
        method: RetrievalConfig().merged({**METHODS[method], "top_k": top_k, "score_threshold": None})
        for method in methods
    }
    runs: dict[str, dict[str, list[Hit]]] = {method: {} for method in methods}
    foreign_runs: dict[str, dict[str, list[Hit]]] = {method: {} for method in methods}
    seconds = dict.fromkeys(methods, 0.0)
    asked = foreign_questions(eval_set, foreign, foreign_count) if foreign else []
    dataset.persist_query_embeddings(
        [eval_set.queries[query_id] for query_id in query_ids] + [text for _, text in asked]
    )
    # queries outside, methods inside: each query is embedded once, whatever the number of methods
    for done, query_id in enumerate(query_ids, start=1):
        text = eval_set.queries[query_id]
        for method, config in configs.items():
            started = time.perf_counter()
            runs[method][query_id] = dataset.search_with(text, config)
            seconds[method] += time.perf_counter() - started
        if on_progress and done % 20 == 0:
            on_progress("queries", done, len(query_ids))
    for question_id, text in asked:
        for method, config in configs.items():
            foreign_runs[method][question_id] = dataset.search_with(text, config)
    for method in methods:
        ranked = {query_id: _judged_ids(hits, mode) for query_id, hits in runs[method].items()}
        scores = score_run(ranked, qrels, query_ids)
        kept = {
            query_id: _judged_ids([hit for hit in hits if hit.score >= score_threshold], mode)
            for query_id, hits in runs[method].items()
        }
        scores["recall@10_at_threshold"] = score_run(kept, qrels, query_ids)["recall@10"]
        if mode == "document" and eval_set.answers:
            scores.update(_answer_hit_rate(runs[method], eval_set))
        if asked:
            scores["abstention"] = _abstention(foreign_runs[method].values(), score_threshold)
            report.info.setdefault("abstention_by_origin", {})[method] = {
                origin: _abstention(
                    [hits for qid, hits in foreign_runs[method].items() if qid.split("/", 1)[0] == origin],
                    score_threshold,
                )
                for origin in dict.fromkeys(qid.split("/", 1)[0] for qid, _ in asked)
            }
            if mode == "passage":
                samples = samples_of(
                    eval_set,
                    {qid: hits[:10] for qid, hits in runs[method].items()},
                    {qid: hits[:10] for qid, hits in foreign_runs[method].items()},
                    lambda hit: hit.document_name,
                )
                relevance, judged = [s.score for s in samples], [s.relevant for s in samples]
                scores["ece"] = round(calibration_error(relevance, judged), 4)
                report.info.setdefault("reliability", {})[method] = reliability(relevance, judged)
        scores["ms_per_query"] = round(1000 * seconds[method] / max(1, len(query_ids)), 2)
        report.methods[method] = scores
    report.info["score_threshold"] = score_threshold
    report.info["foreign_questions"] = len(asked)
    report.info["queries"] = len(query_ids)
    report.info["queries_scored"] = sum(1 for query_id in query_ids if qrels.get(query_id))
    report.info["passages_indexed"] = report.info.get("segments", 0)
    report.info["embedding_model"] = dataset.embedding_model
    return report


def _abstention(runs: Iterable[Sequence[Hit]], threshold: float) -> float:
    """The share of searches with no hit at ``threshold`` (0.0 when there were none)."""
    runs = list(runs)
    abstained = sum(1 for hits in runs if not any(hit.score >= threshold for hit in hits))
    return round(abstained / len(runs), 4) if runs else 0.0


def calibration_samples(
    kb: KnowledgeBase,
    eval_set: EvalSet,
    others: Sequence[EvalSet],
    count: int,
    *,
    embedding_model: str | None = None,
    embedding_options: Mapping[str, Any] | None = None,
    on_progress: Progress | None = None,
    on_notice: Notice | None = None,
) -> list[Sample]:
    """The hits (top :data:`~zhiku.evaluation.calibration.SAMPLE_TOP_K`, default hybrid search, no
    threshold) of ``count`` of the set's judged questions and of ``count`` questions of the
    ``others``, with their evidence and judgement: what a calibration is fitted on (passage mode).
    ``embedding_options`` create the model (a ``transformers`` directory, an endpoint)."""
    dataset, _ = ingest(
        kb,
        eval_set,
        "passage",
        embedding_model=embedding_model,
        embedding_options=embedding_options,
        on_progress=on_progress,
        on_notice=on_notice,
    )
    config = RetrievalConfig().merged({"top_k": SAMPLE_TOP_K, "score_threshold": None})
    judged = [qid for qid in eval_set.queries if eval_set.qrels.get(qid)]
    own = random.Random(7).sample(judged, min(count, len(judged)))
    asked = foreign_questions(eval_set, others, count)
    dataset.persist_query_embeddings([eval_set.queries[qid] for qid in own] + [text for _, text in asked])
    own_hits = {qid: dataset.search_with(eval_set.queries[qid], config) for qid in own}
    foreign_hits = {qid: dataset.search_with(text, config) for qid, text in asked}
    return samples_of(eval_set, own_hits, foreign_hits, lambda hit: hit.document_name)
