"""Quality: the sparse BM25 store ranks at least as well as rank_bm25's BM25Okapi on real sets.

Runs over the shared evaluation sets (``shared/eval`` beside the repository); skipped when they
are absent. Both systems get the same tokens (the dataset tokenizer), title + text indexed.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from zhiku.datasource.fulltext.base import TextRecord
from zhiku.datasource.fulltext.sparse import EdgeSparseBM25Store
from zhiku.text.tokenizer import Tokenizer

EVAL_DIR = Path(__file__).parents[2].parent / "shared" / "eval"
TOLERANCE = 0.005


class EvalSet:
    def __init__(self, name: str) -> None:
        folder = EVAL_DIR / name
        if not (folder / "corpus.jsonl").is_file():
            pytest.skip(f"evaluation set {name!r} not found under {EVAL_DIR}")
        tokenizer = Tokenizer()
        self.doc_ids: list[str] = []
        self.doc_tokens: list[list[str]] = []
        for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            text = f"{row['title']}\n{row['text']}" if row.get("title") else row["text"]
            self.doc_ids.append(row["_id"])
            self.doc_tokens.append(tokenizer.tokenize(text))
        self.relevant: dict[str, set[str]] = {}
        for line in (folder / "qrels.tsv").read_text(encoding="utf-8").splitlines()[1:]:
            query_id, doc_id, score = line.split("\t")
            if int(score) > 0:
                self.relevant.setdefault(query_id, set()).add(doc_id)
        self.queries: list[tuple[str, list[str]]] = []
        for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["_id"] in self.relevant:
                self.queries.append((row["_id"], tokenizer.tokenize(row["text"])))


@cache
def eval_set(name: str) -> EvalSet:
    return EvalSet(name)


def ndcg_at_10(ranked: Sequence[str], relevant: set[str]) -> float:
    dcg = sum(1.0 / math.log2(rank + 2) for rank, doc in enumerate(ranked[:10]) if doc in relevant)
    ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(len(relevant), 10)))
    return dcg / ideal


def okapi_rankings(data: EvalSet) -> dict[str, list[str]]:
    """Top 10 of BM25Okapi per query, scored with its own statistics but vectorised per term."""
    bm25 = BM25Okapi(data.doc_tokens)
    postings: dict[str, tuple[list[int], list[int]]] = {}
    for position, freqs in enumerate(bm25.doc_freqs):
        for token, tf in freqs.items():
            docs, tfs = postings.setdefault(token, ([], []))
            docs.append(position)
            tfs.append(tf)
    arrays = {token: (np.asarray(docs), np.asarray(tfs)) for token, (docs, tfs) in postings.items()}
    norm = bm25.k1 * (1 - bm25.b + bm25.b * np.asarray(bm25.doc_len) / bm25.avgdl)
    rankings: dict[str, list[str]] = {}
    for index, (query_id, tokens) in enumerate(data.queries):
        scores = np.zeros(len(data.doc_ids))
        for token in tokens:
            if token in arrays:
                where, counts = arrays[token]
                scores[where] += bm25.idf[token] * counts * (bm25.k1 + 1) / (counts + norm[where])
        if index < 3:  # the vectorised scores are rank_bm25's own
            np.testing.assert_allclose(scores, bm25.get_scores(tokens), rtol=1e-9, atol=1e-9)
        top = np.argsort(-scores, kind="stable")[:10]
        rankings[query_id] = [data.doc_ids[i] for i in top if scores[i] > 0]
    return rankings


def sparse_rankings(data: EvalSet, path: Path) -> dict[str, list[str]]:
    uuids = [str(uuid.uuid5(uuid.NAMESPACE_OID, doc_id)) for doc_id in data.doc_ids]
    to_doc = dict(zip(uuids, data.doc_ids, strict=True))
    store = EdgeSparseBM25Store(path)
    try:
        store.upsert([TextRecord(u, t, "d") for u, t in zip(uuids, data.doc_tokens, strict=True)])
        return {qid: [to_doc[i] for i, _ in store.search(tokens, 10)] for qid, tokens in data.queries}
    finally:
        store.close()


@pytest.mark.parametrize("name", ["scifact", "zh_medical_dialogue"])
def test_sparse_bm25_matches_or_beats_okapi(name: str, tmp_path: Path) -> None:
    data = eval_set(name)
    okapi = okapi_rankings(data)
    sparse = sparse_rankings(data, tmp_path / "bm25")
    ndcg_okapi = float(np.mean([ndcg_at_10(okapi[q], data.relevant[q]) for q, _ in data.queries]))
    ndcg_sparse = float(np.mean([ndcg_at_10(sparse[q], data.relevant[q]) for q, _ in data.queries]))
    print(f"\n{name}: nDCG@10 sparse BM25 (edge) {ndcg_sparse:.4f}, BM25Okapi {ndcg_okapi:.4f}")
    assert ndcg_sparse >= ndcg_okapi - TOLERANCE
