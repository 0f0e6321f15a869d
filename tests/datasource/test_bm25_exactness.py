"""The sparse BM25 stores compute textbook BM25 with Lucene's IDF, to float32 precision.

The reference below is written out loop by loop from the formula, independently of bm25_math.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from zhiku.datasource.fulltext.base import TextRecord
from zhiku.datasource.fulltext.pgvector import PgBM25Store
from zhiku.datasource.fulltext.sparse import EdgeSparseBM25Store, QdrantClientSparseBM25Store, SparseBM25Store
from zhiku.text.tokenizer import Tokenizer

K1, B = 1.2, 0.75

#: the stores whose statistics and reweighting are checked here
BM25Store = SparseBM25Store | PgBM25Store

TEXTS = [
    "Qdrant stores dense and sparse vectors in segments.",
    "BM25 ranks documents by term frequency and inverse document frequency.",
    "Sparse vectors hold one value per vocabulary term that occurs in the text.",
    "The inverse document frequency discounts terms that occur in many documents.",
    "Dense vectors come from an embedding model such as multilingual E5.",
    "Term frequency saturates: the tenth occurrence of a term adds little.",
    "Long documents are normalised by their length relative to the average length.",
    "HNSW is a graph index for approximate nearest neighbour search of dense vectors.",
    "A write-ahead log makes every update durable before it is applied.",
    "Tokens, tokens, tokens: repeated tokens raise the term frequency of a document.",
    "Chinese text is segmented by jieba before indexing, English text is split into words.",
    "Hybrid search fuses the ranks of dense and sparse retrieval.",
    "Reciprocal rank fusion adds one over sixty plus the rank.",
    "知识库把文档切分成段落，然后为每个段落建立向量索引和全文索引。",
    "全文检索使用BM25算法，根据词频和逆文档频率给文档打分。",
    "中文文本先用结巴分词，再把词语映射成稀疏向量的维度。",
    "向量检索根据语义相似度查找段落，全文检索根据关键词查找段落。",
    "混合检索把向量检索和全文检索的结果融合在一起。",
    "文档越长，词频的作用越要按文档长度进行归一化。",
    "逆文档频率让常见词的权重变低，让罕见词的权重变高。",
    "用户词典可以让结巴分词识别专业术语，例如知识库和向量数据库。",
    "停用词在分词之后被去掉，例如的、了、和。",
    "Qdrant 的稀疏向量支持 IDF 修正，在查询时计算逆文档频率。",
    "每个数据集使用一个独立的分片，这样逆文档频率只统计本数据集的段落。",
    "Mixed text: 知识库 supports BM25 and 向量 search in one query.",
    "The average document length changes as documents are added to the corpus.",
    "Deleted points are removed from the statistics when segments are optimised.",
    "检索结果按照分数从高到低排序，返回前十个段落。",
    "Segments that are disabled stay in the corpus but are never returned.",
    "全文检索和向量检索都在同一个 Qdrant 引擎里运行。",
]
QUERIES = [
    "inverse document frequency",
    "dense vectors search",
    "tokens tokens term frequency",
    "逆文档频率",
    "全文检索 BM25 算法",
    "知识库 向量 search",
    "结巴分词 用户词典",
    "nothing matches this zzzz",
]


def reference_bm25(docs: list[list[str]], query: list[str]) -> dict[int, float]:
    """Okapi BM25 with Lucene's IDF, summed over query tokens (repeats count), straight loops."""
    n_docs = len(docs)
    avgdl = sum(len(d) for d in docs) / n_docs
    scores: dict[int, float] = {}
    for i, doc in enumerate(docs):
        score = 0.0
        for token in query:
            tf = doc.count(token)
            if tf == 0:
                continue
            df = sum(1 for other in docs if token in other)
            idf = math.log(1 + (n_docs - df + 0.5) / (df + 0.5))
            score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * len(doc) / avgdl))
        if score > 0:
            scores[i] = score
    return scores


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    return Tokenizer()


@pytest.fixture(params=["edge", "qdrant-memory", "pgvector"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], BM25Store]]:
    opened: list[BM25Store] = []
    url = request.getfixturevalue("pgvector_url") if request.param == "pgvector" else ""

    def factory() -> BM25Store:
        store: BM25Store
        if request.param == "edge":
            store = EdgeSparseBM25Store(tmp_path / "bm25", k1=K1, b=B)
        elif request.param == "pgvector":
            store = PgBM25Store(url, "bm25", k1=K1, b=B)
        else:
            if opened:
                pytest.skip(":memory: cannot be reopened")
            store = QdrantClientSparseBM25Store(":memory:", "bm25", k1=K1, b=B)
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


def ids_for(n: int) -> list[str]:
    return [str(uuid.UUID(int=i + 1)) for i in range(n)]


def assert_exact(store: BM25Store, docs: list[list[str]], ids: list[str], queries: list[list[str]]) -> None:
    for query in queries:
        expected = reference_bm25(docs, query)
        got = dict(store.search(query, len(docs)))
        assert set(got) == {ids[i] for i in expected}, query
        for i, score in expected.items():
            assert got[ids[i]] == pytest.approx(score, abs=1e-5), (query, i)


def test_one_batch_scores_are_exact(open_store: Callable[[], BM25Store], tokenizer: Tokenizer) -> None:
    docs = [tokenizer.tokenize(t) for t in TEXTS]
    queries = [tokenizer.tokenize(q) for q in QUERIES]
    ids = ids_for(len(docs))
    store = open_store()
    store.upsert([TextRecord(i, d, "doc") for i, d in zip(ids, docs, strict=True)])
    assert_exact(store, docs, ids, queries)
    assert store.search(queries[-1], 10) == []
    hits = store.search(queries[0], 3)
    assert len(hits) == 3 and [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


def test_reweight_restores_exactness_after_incremental_writes(
    open_store: Callable[[], BM25Store], tokenizer: Tokenizer
) -> None:
    docs = [tokenizer.tokenize(t) for t in TEXTS]
    queries = [tokenizer.tokenize(q) for q in QUERIES]
    ids = ids_for(len(docs))
    store = open_store()
    for start in range(0, len(docs), 7):  # four batches, each weighted with the avgdl of its time
        store.upsert([TextRecord(ids[i], docs[i], "doc") for i in range(start, min(start + 7, len(docs)))])
    with pytest.raises(AssertionError):
        assert_exact(store, docs, ids, queries)
    assert store.reweight() > 0
    assert_exact(store, docs, ids, queries)
    assert store.reweight() == 0

    # Replace some records, delete others: statistics follow, optimize() makes it exact again.
    docs[3] = docs[3] + docs[3]
    store.upsert([TextRecord(ids[3], docs[3], "doc")])
    store.delete([ids[0], ids[20]])
    kept = [i for i in range(len(docs)) if i not in (0, 20)]
    store.optimize()
    assert_exact(store, [docs[i] for i in kept], [ids[i] for i in kept], queries)


def test_statistics_survive_reopen(open_store: Callable[[], BM25Store], tokenizer: Tokenizer) -> None:
    docs = [tokenizer.tokenize(t) for t in TEXTS]
    ids = ids_for(len(docs))
    store = open_store()
    store.upsert([TextRecord(ids[i], docs[i], "doc") for i in range(10)])
    store.close()
    reopened = open_store()  # skipped for :memory:
    assert reopened.avgdl == pytest.approx(sum(len(d) for d in docs[:10]) / 10)
    reopened.upsert([TextRecord(ids[i], docs[i], "doc") for i in range(10, len(docs))])
    reopened.reweight()
    assert_exact(reopened, docs, ids, [tokenizer.tokenize(q) for q in QUERIES])


def test_the_best_few_are_the_best_of_all(open_store: Callable[[], BM25Store], tokenizer: Tokenizer) -> None:
    """A small limit returns the reference's best scores (a store that prunes records which
    cannot reach the best ``limit`` must not prune one that does)."""
    docs = [tokenizer.tokenize(t) for t in TEXTS]
    ids = ids_for(len(docs))
    store = open_store()
    store.upsert([TextRecord(i, d, "doc") for i, d in zip(ids, docs, strict=True)])
    queries = [tokenizer.tokenize(q) for q in QUERIES[:-1]] + [tokenizer.tokenize(" ".join(QUERIES))]
    for query in queries:
        expected = reference_bm25(docs, query)
        for limit in (1, 3):
            hits = store.search(query, limit)
            best = sorted(expected.values(), reverse=True)[:limit]
            assert [score for _, score in hits] == pytest.approx(best, abs=1e-5), (query, limit)
            assert all(expected[ids.index(i)] == pytest.approx(score, abs=1e-5) for i, score in hits)
