"""Grid-search fusion settings on an evaluation set already ingested by ``zhiku eval``.

Each channel is searched once per query (``recall_k`` candidates); every fusion setting is then
scored offline with the same functions the retrieval service uses, so a grid of hundreds of
settings costs one pass of searches. Used to choose the default fusion (``adaptive``) and
weights; prints nDCG@10.

    python scripts/tune_fusion.py --home ~/.zhiku ../shared/eval/zh_medical_dialogue
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

from sqlalchemy import select

from zhiku import KnowledgeBase
from zhiku.core.db import DocumentRow, SegmentRow
from zhiku.core.retrieval_config import DEFAULT_WEIGHTS
from zhiku.evaluation.metrics import mrr_at, ndcg_at, recall_at
from zhiku.evaluation.sets import load_eval_set
from zhiku.fusion.fusion import adaptive_score, rrf, weighted_score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("setdir", type=Path)
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--recall-k", type=int, default=100)
    parser.add_argument("--limit-queries", type=int, default=None)
    parser.add_argument(
        "--weights",
        default=None,
        help="only these weights: 'semantic,full_text,keyword;...' (weighted minmax; adaptive's priors)",
    )
    parser.add_argument(
        "--metrics", action="store_true", help="print [nDCG@10, recall@5, MRR@10] per setting"
    )
    args = parser.parse_args()

    eval_set = load_eval_set(args.setdir, args.limit_queries)
    with KnowledgeBase.open(args.home) as kb:
        dataset = kb.dataset(f"eval-{eval_set.name}-passage")
        dataset.persist_query_embeddings(list(eval_set.queries.values()))
        index = kb.dataset_index(dataset.id)
        with kb.sessions() as session:
            passage_of = dict(
                session.execute(
                    select(SegmentRow.id, DocumentRow.name).join(
                        DocumentRow, DocumentRow.id == SegmentRow.document_id
                    )
                ).all()
            )
        runs = []
        for query_id, text in eval_set.queries.items():
            candidates = {
                "semantic": index.vector.search(index.embedding.embed_query(text), args.recall_k),
                "full_text": index.fulltext.search(index.tokenizer.tokenize(text), args.recall_k),
                "keyword": index.keywords.search(text, args.recall_k),
            }
            runs.append((eval_set.qrels[query_id], candidates))

    def score(fuse) -> float | list[float]:  # type: ignore[no-untyped-def]
        totals = [0.0, 0.0, 0.0]
        for relevant, candidates in runs:
            ranked = [passage_of[hit.segment_id] for hit in fuse(candidates)]
            totals[0] += ndcg_at(ranked, relevant, 10)
            totals[1] += recall_at(ranked, relevant, 5)
            totals[2] += mrr_at(ranked, relevant, 10)
        values = [round(total / len(runs), 4) for total in totals]
        return values if args.metrics else values[0]

    results = {}
    for channel in ("semantic", "full_text", "keyword"):
        results[channel] = score(lambda c, ch=channel: weighted_score({ch: c[ch]}, {ch: 1.0}, top_n=10))
    priors = {str(ch): w for ch, w in DEFAULT_WEIGHTS.items()}  # the default config's, keyword 0.1
    for channels in (("semantic", "full_text"), ("semantic", "full_text", "keyword")):
        results[f"adaptive {'+'.join(channels)}"] = score(
            lambda c, chs=channels: adaptive_score({ch: c[ch] for ch in chs}, priors, top_n=10)
        )
    if args.weights:
        for item in args.weights.split(";"):
            semantic, full_text, keyword = (float(x) for x in item.split(","))
            weights = {"semantic": semantic, "full_text": full_text, "keyword": keyword}
            results[f"weighted minmax {item}"] = score(lambda c, w=weights: weighted_score(c, w, top_n=10))
            results[f"adaptive {item}"] = score(lambda c, w=weights: adaptive_score(c, w, top_n=10))
        print(json.dumps(results, indent=1))
        return
    grid = [w / 10 for w in range(0, 11)]
    for semantic, keyword in itertools.product(grid, (0.0, 0.1, 0.2)):
        full_text = round(1.0 - semantic - keyword, 2)
        if full_text < 0:
            continue
        weights = {"semantic": semantic, "full_text": full_text, "keyword": keyword}
        for normalization in ("minmax", "zscore"):
            key = f"weighted {normalization} s{semantic} f{full_text} k{keyword}"
            results[key] = score(
                lambda c, w=weights, n=normalization: weighted_score(c, w, normalization=n, top_n=10)
            )
        results[f"rrf s{semantic} f{full_text} k{keyword}"] = score(
            lambda c, w=weights: rrf(c, k=60, weights=w, top_n=10)
        )
    best = sorted(results.items(), key=lambda item: -_ndcg(item[1]))
    print(
        json.dumps(
            {
                "set": eval_set.name,
                "single": {k: results[k] for k in ("semantic", "full_text", "keyword")},
                "best": best[:15],
            },
            indent=1,
        )
    )


def _ndcg(value: float | list[float]) -> float:
    return value[0] if isinstance(value, list) else value


if __name__ == "__main__":
    main()
