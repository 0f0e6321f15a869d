"""Routing evaluation: several evaluation sets become several datasets, every query is routed.

Each set is one dataset (passage mode) named after its folder and described by its README's
first paragraph (or ``describe``). A query belongs to the dataset of its set. Reported:

- per router, ``accuracy``: the share of queries routed to their own dataset;
- ``multiple``: nDCG@10 (and the other metrics) of multi-path retrieval over all datasets;
- ``single_dataset``: the same metrics when each query searches only its own dataset — the
  ceiling a perfect router would reach. Metrics are averaged over all queries of all sets.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from zhiku.core.documents import Hit
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.evaluation.metrics import score_run
from zhiku.evaluation.runner import Notice, ingest
from zhiku.evaluation.sets import EvalSet
from zhiku.knowledge_base import Dataset, KnowledgeBase
from zhiku.knowledge_base.profiles import DatabaseProfiles
from zhiku.retrieval.profiles import load_profiles

Progress = Callable[[str, int, int], None]
TOP_K = 10


def readme_description(eval_set: EvalSet) -> str:
    """The README's first paragraph, headings and one-line ``Key: value`` notes included with it
    (``# scifact: SciFact ...`` + ``Language: English ...`` + the first prose paragraph)."""
    path = eval_set.root / "README.md"
    if not path.is_file():
        return f"evaluation set {eval_set.name}"
    parts = []
    for block in re.split(r"\n\s*\n", path.read_text(encoding="utf-8")):
        text = " ".join(line.strip().lstrip("#").strip() for line in block.strip().splitlines())
        if not text:
            continue
        parts.append(text)
        if len(text) >= 120:  # the first real paragraph ends the description
            break
    return "\n".join(parts)


@dataclass
class RoutingReport:
    sets: list[str]
    routers: dict[str, dict[str, Any]] = field(default_factory=dict)
    multiple: dict[str, float] = field(default_factory=dict)
    single_dataset: dict[str, float] = field(default_factory=dict)
    per_set: dict[str, dict[str, Any]] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "sets": self.sets,
            "routers": self.routers,
            "multiple": self.multiple,
            "single_dataset": self.single_dataset,
            "per_set": self.per_set,
            "info": self.info,
        }


def evaluate_routing(
    kb: KnowledgeBase,
    eval_sets: Sequence[EvalSet],
    *,
    routers: Sequence[str] = ("embedding",),
    describe: Mapping[str, str] | None = None,
    embedding_model: str | None = None,
    on_progress: Progress | None = None,
    on_notice: Notice | None = None,
) -> RoutingReport:
    """Build (or resume, or reuse) one dataset per set, then route and search every query."""
    describe = describe or {}
    datasets: dict[str, Dataset] = {}
    for eval_set in eval_sets:
        description = describe.get(eval_set.name) or readme_description(eval_set)
        datasets[eval_set.name], _ = ingest(
            kb,
            eval_set,
            "passage",
            embedding_model=embedding_model,
            on_progress=on_progress,
            on_notice=on_notice,
            name=eval_set.name,
            description=description,
        )
    targets = list(datasets.values())
    config = RetrievalConfig(top_k=TOP_K)
    queries = [(s, qid, s.queries[qid]) for s in eval_sets for qid in s.queries]
    for dataset in targets:
        dataset.persist_query_embeddings([text for s, _, text in queries if s.name == dataset.name])
    report = RoutingReport(sets=[s.name for s in eval_sets])
    qrels = {f"{s.name}/{qid}": {f"{s.name}/{p}" for p in s.qrels[qid]} for s, qid, _ in queries}
    runs_multi: dict[str, list[str]] = {}
    runs_single: dict[str, list[str]] = {}
    routed: dict[str, dict[str, str | None]] = {router: {} for router in routers}
    seconds = {"multiple": 0.0, "single_dataset": 0.0, **dict.fromkeys(routers, 0.0)}
    retrieval = kb.routed_retrieval()
    profiles = load_profiles(DatabaseProfiles(kb.sessions), [d.id for d in targets])
    for done, (eval_set, query_id, text) in enumerate(queries, start=1):
        key = f"{eval_set.name}/{query_id}"
        for router in routers:
            started = time.perf_counter()
            routed[router][key] = retrieval.router(router).choose(text, profiles).dataset_id
            seconds[router] += time.perf_counter() - started
        started = time.perf_counter()
        multi = kb.retrieve(text, datasets=[d.id for d in targets], routing="multiple", top_k=TOP_K)
        seconds["multiple"] += time.perf_counter() - started
        runs_multi[key] = _judged(multi.hits, datasets)
        started = time.perf_counter()
        runs_single[key] = _judged(datasets[eval_set.name].search_with(text, config), datasets)
        seconds["single_dataset"] += time.perf_counter() - started
        if on_progress and done % 50 == 0:
            on_progress("queries", done, len(queries))
    keys = list(qrels)
    own = {f"{s.name}/{qid}": datasets[s.name].id for s, qid, _ in queries}
    for router in routers:
        correct = sum(routed[router][key] == own[key] for key in keys)
        report.routers[router] = {
            "accuracy": round(correct / max(1, len(keys)), 4),
            "ms_per_query": round(1000 * seconds[router] / max(1, len(keys)), 2),
        }
    report.multiple = {**score_run(runs_multi, qrels, keys), "ms_per_query": _ms(seconds["multiple"], keys)}
    report.single_dataset = {
        **score_run(runs_single, qrels, keys),
        "ms_per_query": _ms(seconds["single_dataset"], keys),
    }
    for eval_set in eval_sets:
        set_keys = [key for key in keys if key.startswith(f"{eval_set.name}/")]
        report.per_set[eval_set.name] = {
            "queries": len(set_keys),
            "accuracy": {
                router: round(sum(routed[router][k] == own[k] for k in set_keys) / max(1, len(set_keys)), 4)
                for router in routers
            },
            "multiple_ndcg@10": score_run(runs_multi, qrels, set_keys)["ndcg@10"],
            "single_dataset_ndcg@10": score_run(runs_single, qrels, set_keys)["ndcg@10"],
        }
    report.info = {"queries": len(keys), "embedding_model": targets[0].embedding_model if targets else None}
    return report


def _judged(hits: Sequence[Hit], datasets: Mapping[str, Dataset]) -> list[str]:
    names = {dataset.id: name for name, dataset in datasets.items()}
    return [f"{names.get(hit.dataset_id, '?')}/{hit.document_name}" for hit in hits]


def _ms(seconds: float, keys: Sequence[str]) -> float:
    return round(1000 * seconds / max(1, len(keys)), 2)
