"""The pgvector BM25 store searches through its postings, and what they find is what an exact
search over the records finds: after replacements, deletes and disabled records (dead keys in
the blocks), under a scope that admits most records or few, before and after ``optimize`` folds
the blocks; a table of an earlier version gets its postings at its first open."""

from __future__ import annotations

import math
import threading
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from psycopg.pq import Format
from sqlalchemy import event, func, select, text

from zhiku.core.scope import DocumentScope
from zhiku.datasource.fulltext.base import TextRecord
from zhiku.datasource.fulltext.bm25_math import lucene_idf
from zhiku.datasource.fulltext.pg_postings import _packed, block_keys
from zhiku.datasource.fulltext.pgvector import RANK_ADMITTED_MAX, PgBM25Store, folded_counts

RECORDS, DOCUMENTS, TOP = 2_600, 26, 20
VOCABULARY = [f"w{n}" for n in range(300)]


def corpus(seed: int) -> dict[str, tuple[list[str], str]]:
    """Records of 3-40 words drawn by a Zipf law (a few words in most records), 100 per document."""
    rng = np.random.default_rng(seed)
    ranks = np.arange(1, len(VOCABULARY) + 1)
    p = (1.0 / ranks) / np.sum(1.0 / ranks)
    return {
        str(uuid.UUID(int=n + 1)): (
            list(rng.choice(VOCABULARY, int(rng.integers(3, 41)), p=p)),
            f"doc-{n % DOCUMENTS}",
        )
        for n in range(RECORDS)
    }


def exact(
    present: dict[str, tuple[list[str], str]], disabled: set[str], query: list[str], admitted: set[str]
) -> dict[str, float]:
    """BM25 of every record the search admits, written out from the formula (every record counts
    in the statistics, disabled ones too)."""
    k1, b = 1.2, 0.75
    n = len(present)
    avgdl = sum(len(tokens) for tokens, _ in present.values()) / n
    df = Counter(word for tokens, _ in present.values() for word in set(tokens))
    wanted = Counter(query)
    scores = {}
    for point, (tokens, document) in present.items():
        if point in disabled or document not in admitted:
            continue
        tf = Counter(tokens)
        score = math.fsum(
            count
            * lucene_idf(n, df[word])
            * tf[word]
            * (k1 + 1)
            / (tf[word] + k1 * (1 - b + b * len(tokens) / avgdl))
            for word, count in wanted.items()
            if tf[word]
        )
        if score > 0:
            scores[point] = score
    return scores


def assert_exact(found: list[tuple[str, float]], scores: dict[str, float]) -> None:
    """``found`` holds the best of ``scores``, each with its score (float32 weights: ties and
    near-ties may come in either order)."""
    best = sorted(scores.values(), reverse=True)[: len(found)]
    assert len(found) == min(TOP, len(scores))
    for (point, score), expected in zip(found, best, strict=True):
        assert score == pytest.approx(scores[point], rel=1e-5)
        assert score == pytest.approx(expected, rel=1e-5)


def blocks(store: PgBM25Store) -> int:
    with store.engine.connect() as connection:
        return int(connection.scalar(select(func.count()).select_from(store.postings.blocks)) or 0)


def test_postings_find_what_an_exact_search_finds_through_churn_and_merges(pgvector_url: str) -> None:
    present = corpus(7)
    for n in range(5):  # a word fewer records hold than a search asks for
        present[str(uuid.UUID(int=50_000 + n))] = (["rare", "w0", "w1", f"w{n + 60}"], "doc-0")
    store = PgBM25Store(pgvector_url, "bm25")
    try:
        items = list(present.items())
        for start in range(0, len(items), 200):  # 13 writes: up to 13 blocks per term
            store.upsert([TextRecord(p, tokens, d) for p, (tokens, d) in items[start : start + 200]])
        rng = np.random.default_rng(8)
        replaced = [items[i][0] for i in rng.choice(len(items), 300, replace=False)]
        for point in replaced:  # new words: the replaced records' old keys die
            present[point] = (list(rng.choice(VOCABULARY[:40], 6)), present[point][1])
        store.upsert([TextRecord(p, present[p][0], present[p][1]) for p in replaced])
        gone = [p for p, _ in items[::9] if p not in replaced]
        store.delete(gone)
        for point in gone:
            del present[point]
        disabled = set(list(present)[::13])
        store.set_enabled(sorted(disabled), False)
        store.reweight()  # every record weighted with today's average length, as the formula is
        documents = {f"doc-{n}" for n in range(DOCUMENTS)}
        scopes = {
            "all": (None, documents),
            "one document left out": (
                DocumentScope(frozenset({"doc-3"}), exclude=True),
                documents - {"doc-3"},
            ),
            "most documents": (DocumentScope(frozenset(sorted(documents)[:24])), set(sorted(documents)[:24])),
            "one document": (DocumentScope(frozenset({"doc-5"})), {"doc-5"}),
        }
        queries = [list(rng.choice(VOCABULARY, int(rng.integers(1, 12)))) for _ in range(25)]
        queries.append(["w0", "w1", "w2"])  # the commonest words only
        queries.append(["rare", "w0", "w1"])  # the common words fill the list
        queries.append(["w250"] * 6 + ["w0"])  # the common words cannot lift a record

        def check() -> None:
            for query in queries:
                for scope, admitted in scopes.values():
                    assert_exact(store.search(query, TOP, scope), exact(present, disabled, query, admitted))

        check()
        before = blocks(store)
        assert store.merge_postings() > 0
        assert blocks(store) < before
        with store.engine.connect() as connection:
            terms = connection.scalar(select(func.count(func.distinct(store.postings.blocks.c.term))))
        assert blocks(store) == terms  # one block per term, none without live keys
        with store.engine.connect() as connection:
            postings = connection.scalar(
                select(func.sum(func.octet_length(store.postings.blocks.c.posting_keys)))
            )
        assert postings // 4 == sum(len(set(tokens)) for tokens, _ in present.values())  # no dead key left
        check()
        store.optimize()
        check()
    finally:
        store.drop()


def test_a_scope_of_few_records_ranks_them_from_their_rows(pgvector_url: str) -> None:
    """Under the bound, the admitted records are counted and ranked from their rows; the postings
    are not read."""
    store = PgBM25Store(pgvector_url, "bm25")
    try:
        present = corpus(3)
        store.upsert([TextRecord(p, tokens, d) for p, (tokens, d) in present.items()])
        statements: list[str] = []

        @event.listens_for(store.engine, "before_cursor_execute")
        def seen(conn, cursor, statement, params, context, many):  # type: ignore[no-untyped-def]
            statements.append(statement)

        few = DocumentScope(frozenset({"doc-1"}))
        assert RECORDS / DOCUMENTS <= RANK_ADMITTED_MAX
        assert_exact(store.search(["w5", "w9"], TOP, few), exact(present, set(), ["w5", "w9"], {"doc-1"}))
        assert not any(store.postings.blocks.name in s for s in statements)
        statements.clear()
        assert store.search(["w5", "w9"], TOP)
        assert any(store.postings.blocks.name in s for s in statements)
        event.remove(store.engine, "before_cursor_execute", seen)
    finally:
        store.drop()


def test_a_table_of_the_earlier_version_gets_its_postings_at_first_open(pgvector_url: str) -> None:
    """Records only, found through a GIN index on their terms: the first open numbers them and
    writes their postings, and they are found as before."""
    present = dict(list(corpus(11).items())[:500])
    store = PgBM25Store(pgvector_url, "bm25")
    store.upsert([TextRecord(p, tokens, d) for p, (tokens, d) in present.items()])
    query = ["w3", "w17", "w40"]
    expected = store.search(query, TOP)
    name = store.table_name
    with store.engine.begin() as connection:  # what an earlier version created
        connection.execute(text(f'DROP TABLE "{name}_postings"'))
        connection.execute(text(f'DROP SEQUENCE "{name}_posting_keys"'))
        connection.execute(text(f'ALTER TABLE "{name}" DROP COLUMN posting_key'))
        connection.execute(text(f'CREATE INDEX "{name}_terms_gin" ON "{name}" USING gin (terms)'))
    store.close()
    reopened = PgBM25Store(pgvector_url, "bm25")
    try:
        found = reopened.search(query, TOP)
        assert [p for p, _ in found] == [p for p, _ in expected]
        assert [s for _, s in found] == pytest.approx([s for _, s in expected])
        assert blocks(reopened) > 0
        with reopened.engine.connect() as connection:
            assert connection.scalar(text("SELECT to_regclass(:i)"), {"i": f"{name}_terms_gin"}) is None
        reopened.upsert([TextRecord(str(uuid.UUID(int=10_001)), ["w3", "w17", "w40"] * 3, "doc-new")])
        assert reopened.search(query, 1)[0][0] == str(uuid.UUID(int=10_001))
    finally:
        reopened.drop()


def test_keys_further_apart_than_an_offset_holds_go_to_blocks_of_their_own() -> None:
    keys = np.array([7, (1 << 32) + 9, 3, (1 << 33) + 20], dtype=np.int64)
    weights = np.array([0.5, 1.5, 0.25, 2.0])
    packed = _packed(42, keys, weights)
    assert [(term, base) for term, base, _, _ in packed] == [
        (42, 3),
        (42, (1 << 32) + 9),
        (42, (1 << 33) + 20),
    ]
    assert np.concatenate([block_keys(base, offsets) for _, base, offsets, _ in packed]).tolist() == sorted(
        keys.tolist()
    )
    restored = np.concatenate([np.frombuffer(w, dtype=np.float32) for _, _, _, w in packed])
    assert restored.tolist() == [0.25, 0.5, 1.5, 2.0]


def test_the_postings_come_in_the_binary_format_and_other_rows_do_not(pgvector_url: str) -> None:
    """A ``bytea`` in text format is twice its size in hex digits to decode, a tenth of the speed."""
    store = PgBM25Store(pgvector_url, "bm25")
    try:
        store.upsert([TextRecord(str(uuid.UUID(int=1)), ["tea", "leaf"], "doc-1")])
        formats: dict[str, int] = {}

        @event.listens_for(store.engine, "before_cursor_execute")
        def seen(conn, cursor, statement, params, context, many):  # type: ignore[no-untyped-def]
            formats[statement] = cursor.format

        assert [p for p, _ in store.search(["tea"], 5)] == [str(uuid.UUID(int=1))]
        event.remove(store.engine, "before_cursor_execute", seen)
        name = store.postings.blocks.name
        postings = [f for statement, f in formats.items() if name in statement]
        assert postings == [Format.BINARY]
        assert all(f == Format.TEXT for statement, f in formats.items() if name not in statement)
    finally:
        store.drop()


def test_the_most_a_query_could_score_comes_from_the_statistics_its_search_read(pgvector_url: str) -> None:
    store = PgBM25Store(pgvector_url, "bm25")
    try:
        store.upsert([TextRecord(str(uuid.UUID(int=n + 1)), ["tea", f"w{n}"], "doc-1") for n in range(4)])
        fresh = store.attainable(["tea", "w1"])
        store.search(["tea", "w1"], 5)
        store.upsert([TextRecord(str(uuid.UUID(int=10)), ["w1"], "doc-2")])  # w1 now in 2 of 5
        statements: list[str] = []

        @event.listens_for(store.engine, "before_cursor_execute")
        def seen(conn, cursor, statement, params, context, many):  # type: ignore[no-untyped-def]
            statements.append(statement)

        assert store.attainable(["w1", "tea"]) == pytest.approx(fresh)  # as the search saw it
        assert statements == []
        store.recent.seconds = 0.0  # past its time: read again
        assert store.attainable(["tea", "w1"]) < fresh
        assert statements
        event.remove(store.engine, "before_cursor_execute", seen)
    finally:
        store.drop()


def test_merges_beside_writers_lose_no_posting(pgvector_url: str) -> None:
    """Two stores (as two processes would) fold the postings again and again while a third
    writes new records and replaces old ones: every record is still found by its own word, and
    a last merge leaves exactly the live postings."""
    stores = [PgBM25Store(pgvector_url, "bm25") for _ in range(3)]
    writer, *mergers = stores
    words: dict[str, list[str]] = {}

    def record(n: int, version: int) -> TextRecord:
        point = str(uuid.UUID(int=n + 1))
        words[point] = [f"u{n}v{version}", "w0", f"w{n % 7}"]
        return TextRecord(point, words[point], f"doc-{n % 5}")

    try:
        for start in range(0, 300, 50):
            writer.upsert([record(n, 0) for n in range(start, start + 50)])
        stop = threading.Event()

        def write() -> None:
            for batch in range(12):
                writer.upsert([record(n, 0) for n in range(300 + batch * 25, 325 + batch * 25)])
                writer.upsert([record(n, batch + 1) for n in range(batch * 20, batch * 20 + 20)])
            stop.set()

        def merge(store: PgBM25Store) -> None:
            while not stop.is_set():
                store.merge_postings()

        with ThreadPoolExecutor(3) as pool:
            for future in [pool.submit(write), *(pool.submit(merge, s) for s in mergers)]:
                future.result()
        reader = mergers[0]
        for point, tokens in words.items():
            assert [p for p, _ in reader.search([tokens[0]], 1)] == [point], tokens[0]
        reader.merge_postings()
        with reader.engine.connect() as connection:
            postings = connection.scalar(
                select(func.sum(func.octet_length(reader.postings.blocks.c.posting_keys)))
            )
        assert postings // 4 == sum(len(set(tokens)) for tokens in words.values())
    finally:
        stores[0].drop()
        for store in stores:
            store.close()


def test_the_postings_are_stored_uncompressed(pgvector_url: str) -> None:
    """pglz's decompression of a common term's block cost more than reading it."""
    for _ in range(2):  # made, then opened again
        store = PgBM25Store(pgvector_url, "bm25")
        with store.engine.connect() as connection:
            storage = connection.execute(
                text(
                    "SELECT attname, attstorage FROM pg_attribute WHERE attrelid = to_regclass(:t)"
                    " AND attname IN ('posting_keys', 'weights') ORDER BY attname"
                ),
                {"t": store.postings.blocks.name},
            ).all()
        store.close()
        assert [tuple(row) for row in storage] == [("posting_keys", "e"), ("weights", "e")]
    PgBM25Store(pgvector_url, "bm25").drop()


def test_a_query_reads_its_rarest_terms_up_to_the_bound_of_postings(pgvector_url: str) -> None:
    """Terms held by 10, 100, 400 and 900 records: a bound of 510 postings reads the three rarest,
    a bound of 1 the rarest alone, and the statistics of all four come with them."""
    store = PgBM25Store(pgvector_url, "bm25")
    try:
        store.upsert(
            [
                TextRecord(
                    str(uuid.UUID(int=n + 1)),
                    ["w900", *(f"w{held}" for held in (10, 100, 400) if n < held)],
                    "doc-1",
                )
                for n in range(900)
            ]
        )
        counts = folded_counts(["w10", "w100", "w400", "w900"])

        def read(most: int) -> tuple[int, list[int], int]:
            with store._snapshot() as connection:
                (records, held), postings = store.ranking.read(connection, counts, most)
            return records, sorted(held.values()), len(postings.keys)

        assert read(10_000) == (900, [10, 100, 400, 900], 1410)
        assert read(510) == (900, [10, 100, 400, 900], 510)
        assert read(1) == (900, [10, 100, 400, 900], 10)  # the rarest term, always
    finally:
        store.drop()
