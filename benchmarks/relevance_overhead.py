"""What scoring relevance adds to a search: the same queries with and without it, alternated.

    python benchmarks/relevance_overhead.py                          # the bundled demo corpus
    python benchmarks/relevance_overhead.py --set DIR --queries 400  # an evaluation set's questions

Relevance reads, per query, the attainable BM25 (one sparse search and one point read per query
term whose IDF is not cached yet) and scores the returned hits; everything else is the search as
before. Both variants run in one process on one dataset, query by query in alternating order, so
the machine's load weighs on both alike. Prints p50 and mean per variant and their ratio.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from zhiku import KnowledgeBase
from zhiku.demo import load_questions
from zhiku.demo.runner import build_demo_dataset
from zhiku.evaluation.runner import ingest
from zhiku.evaluation.sets import load_eval_set
from zhiku.knowledge_base import Dataset


def _dataset(kb: KnowledgeBase, set_dir: Path | None, count: int) -> tuple[Dataset, list[str]]:
    if set_dir is None:
        dataset = build_demo_dataset(kb)
        questions = [item["question"] for item in load_questions()]
        # the segments' openings stand in for more questions, as `zhiku bench` does
        openings = [segment.content[:60] for segment in dataset.segments()]
        return dataset, (questions + openings)[:count]
    eval_set = load_eval_set(set_dir)
    dataset, _ = ingest(kb, eval_set, "passage")
    return dataset, list(eval_set.queries.values())[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=None, help="an evaluation set (default: the demo corpus)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedding-model", default="use")
    parser.add_argument("--home", type=Path, default=None, help="data directory (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        home = args.home or Path(scratch)
        with KnowledgeBase.open(home, embedding_model=args.embedding_model) as kb:
            dataset, queries = _dataset(kb, args.set, args.queries)
            dataset.persist_query_embeddings(queries)
            service = kb.dataset_index(dataset.id).search_service
            calibration = service._calibration
            for query in queries[:10]:  # warm the caches both variants share
                dataset.search(query, top_k=10)
            times: dict[str, list[float]] = {"with relevance": [], "fusion only": []}
            for i, query in enumerate(queries):
                variants = [("with relevance", calibration), ("fusion only", None)]
                for name, chosen in variants if i % 2 else reversed(variants):
                    service._calibration = chosen
                    started = time.perf_counter()
                    dataset.search(query, top_k=10, score_threshold=None)
                    times[name].append((time.perf_counter() - started) * 1000)
            service._calibration = calibration
    p50 = {name: statistics.median(values) for name, values in times.items()}
    print(f"{len(queries)} queries, {args.embedding_model}, {args.set or 'demo corpus'}")
    for name, values in times.items():
        print(f"  {name:15} p50 {p50[name]:6.2f} ms   mean {statistics.mean(values):6.2f} ms")
    print(f"  ratio (p50)     {p50['with relevance'] / p50['fusion only']:.2f}")


if __name__ == "__main__":
    main()
