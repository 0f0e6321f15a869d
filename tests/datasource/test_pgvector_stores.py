"""What the pgvector stores add to the store contract: filtered search as good as exact search,
clear errors for a wrong table or a database without pgvector, state shared by every process,
recovery from a dropped connection, and the settings that choose the database."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from sqlalchemy import create_engine, event, make_url, text

from zhiku.core.config import Settings
from zhiku.core.errors import ConfigError, StoreError
from zhiku.core.scope import DocumentScope
from zhiku.datasource.fulltext.base import TextRecord
from zhiku.datasource.fulltext.bm25_math import lucene_idf
from zhiku.datasource.fulltext.pgvector import PgBM25Store, open_pgvector_fulltext
from zhiku.datasource.points.pgvector import store_url
from zhiku.datasource.stores import open_fulltext, open_vector
from zhiku.datasource.vector.base import VectorRecord
from zhiku.datasource.vector.pgvector import PgVectorStore, open_pgvector_vector

DIM, DOCUMENTS, PER_DOCUMENT, QUERIES = 32, 100, 30, 40


def clustered(rng: np.random.Generator, n: int) -> np.ndarray:
    """Unit vectors around 50 centres, overlapping (harder for a graph than uniform noise)."""
    centres = rng.normal(size=(50, DIM))
    vectors = centres[rng.integers(0, 50, n)] + rng.normal(size=(n, DIM))
    unit: np.ndarray = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    return unit


def has_graph(store: PgVectorStore) -> bool:
    with store.engine.connect() as connection:
        return (
            connection.scalar(text("SELECT to_regclass(:index)"), {"index": f"{store.table_name}_hnsw"})
            is not None
        )


def test_a_filtered_top_10_holds_what_an_exact_search_finds(pgvector_url: str) -> None:
    """3,000 points in 100 documents; a 10% and a 1% document filter, top 10 against an exact
    search of the admitted points: exactly the same below ``exact_scan_max``, recall >= 0.95
    through the HNSW graph's iterative scan above it (and for a filter leaving 10% out, which
    always takes the graph). The graph is built by ``optimize``; before it, search is exact."""
    rng = np.random.default_rng(11)
    vectors = clustered(rng, DOCUMENTS * PER_DOCUMENT + QUERIES)
    queries, points = vectors[:QUERIES], vectors[QUERIES:]
    ids = [str(uuid.UUID(int=i + 1)) for i in range(len(points))]
    documents = [f"doc-{i // PER_DOCUMENT}" for i in range(len(points))]
    exact_store = PgVectorStore(pgvector_url, "segments", DIM)
    graph_store = PgVectorStore(pgvector_url, "segments", DIM, exact_scan_max=0)

    def truth(scope: DocumentScope) -> list[set[str]]:
        admitted = np.array([scope.admits(d) for d in documents])
        similarity = np.where(admitted, queries @ points.T, -np.inf)
        return [{ids[i] for i in row} for row in np.argsort(-similarity, axis=1)[:, :10]]

    def recall(store: PgVectorStore, scope: DocumentScope) -> float:
        found = [store.search(q, 10, scope) for q in queries]
        assert all(len(hits) == 10 for hits in found)  # the filter does not starve the search
        shared = [len({i for i, _ in hits} & t) for hits, t in zip(found, truth(scope), strict=True)]
        return float(np.mean(shared)) / 10

    try:
        for start in range(0, len(points), 500):
            exact_store.upsert(
                [VectorRecord(ids[i], points[i], documents[i]) for i in range(start, start + 500)]
            )
        first = DocumentScope(frozenset({"doc-0"}))
        assert not has_graph(exact_store) and recall(graph_store, first) == 1.0  # no graph: exact
        exact_store.optimize()
        assert has_graph(exact_store)
        for share in (10, 1):
            scope = DocumentScope(frozenset(f"doc-{d}" for d in rng.choice(DOCUMENTS, share, replace=False)))
            assert recall(exact_store, scope) == 1.0, share
            assert recall(graph_store, scope) >= 0.95, share
        left_out = DocumentScope(frozenset(f"doc-{d}" for d in range(10)), exclude=True)
        assert recall(exact_store, left_out) >= 0.95
    finally:
        exact_store.close()
        graph_store.close()


def test_a_scope_is_counted_in_its_documents_and_disabled_points_stay_out(pgvector_url: str) -> None:
    """The count that chooses the exact scan reads the scope's documents alone (their index, not
    each row's ``enabled``): disabled points count towards the bound, and are never found."""
    rng = np.random.default_rng(5)
    points = clustered(rng, 60)
    ids = [str(uuid.UUID(int=i + 1)) for i in range(60)]
    store = PgVectorStore(pgvector_url, "segments", DIM, exact_scan_max=30)
    counts: list[str] = []

    def record(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        if statement.startswith("SELECT count(*)"):
            counts.append(statement)

    try:
        store.upsert([VectorRecord(ids[i], points[i], f"doc-{i // 30}") for i in range(60)])
        store.set_enabled(ids[:10], False)  # doc-0: 20 enabled of its 30 points
        event.listen(store.engine, "before_cursor_execute", record)
        for scope, admitted in (
            (DocumentScope(frozenset({"doc-0"})), ids[10:30]),
            (DocumentScope(frozenset({"doc-0", "doc-1"})), ids[10:]),
        ):
            found = [i for i, _ in store.search(points[0], 60, scope)]
            assert sorted(found) == sorted(admitted)
        assert len(counts) == 2 and not any("enabled" in statement for statement in counts)
    finally:
        event.remove(store.engine, "before_cursor_execute", record)
        store.close()


def test_optimize_leaves_the_document_index_answering_a_count_alone(pgvector_url: str) -> None:
    """Vacuumed by ``optimize``, a table just written has every page marked visible, so the count
    of a scope's points reads the ``document_id`` index and no row."""
    rng = np.random.default_rng(6)
    store = PgVectorStore(pgvector_url, "segments", DIM)
    try:
        points = clustered(rng, 600)
        store.upsert(
            [VectorRecord(str(uuid.UUID(int=i + 1)), points[i], f"doc-{i // 60}") for i in range(600)]
        )
        store.optimize()
        with store.engine.begin() as connection:  # a plan through the index, whatever it costs
            connection.exec_driver_sql("SET LOCAL enable_seqscan = off")
            connection.exec_driver_sql("SET LOCAL enable_bitmapscan = off")
            plan = connection.exec_driver_sql(
                f'EXPLAIN (ANALYZE) SELECT count(*) FROM "{store.table_name}"'
                " WHERE document_id = ANY(ARRAY['doc-1', 'doc-2'])"
            ).all()
        lines = [row[0] for row in plan]
        assert any("Index Only Scan" in line for line in lines), lines
        assert any("Heap Fetches: 0" in line for line in lines), lines
    finally:
        store.close()


def test_a_table_of_another_dimension_is_a_clear_error(pgvector_url: str) -> None:
    PgVectorStore(pgvector_url, "segments", DIM).close()
    with pytest.raises(StoreError, match=f"holds vectors of {DIM} dimensions.*model gives {DIM * 2}"):
        PgVectorStore(pgvector_url, "segments", DIM * 2)


def test_a_database_without_pgvector_is_a_clear_error_naming_the_fix(pgvector_server: str) -> None:
    """A role that may not create the extension, in a database that lacks it: the error says
    what to install and run; a superuser's first open creates it."""
    database, role = f"plain_{uuid.uuid4().hex[:8]}", f"reader_{uuid.uuid4().hex[:8]}"
    admin = create_engine(pgvector_server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f"CREATE DATABASE {database}"))
        connection.execute(text(f"CREATE ROLE {role} LOGIN"))
    admin.dispose()
    url = make_url(pgvector_server).set(database=database)
    plain = url.set(username=role).render_as_string(hide_password=False)
    with pytest.raises(StoreError, match=r"pgvector extension is missing.*CREATE EXTENSION vector"):
        PgVectorStore(plain, "segments", DIM)
    store = PgBM25Store(url.render_as_string(hide_password=False), "bm25")  # superuser: created
    store.close()


def test_every_process_sees_the_same_records_and_statistics(pgvector_url: str) -> None:
    """Two stores on one table stand for two processes: writes of one are searched by the other
    with the same BM25 statistics (nothing is cached per process)."""
    writer, reader = PgBM25Store(pgvector_url, "bm25"), PgBM25Store(pgvector_url, "bm25")
    try:
        a, b = str(uuid.UUID(int=1)), str(uuid.UUID(int=2))
        writer.upsert([TextRecord(a, ["tea", "leaf"], "doc-1"), TextRecord(b, ["tea"], "doc-2")])
        assert reader.search(["leaf"], 5) == writer.search(["leaf"], 5)
        before = reader.attainable(["tea"])
        writer.upsert([TextRecord(str(uuid.UUID(int=3)), ["coffee"], "doc-3")])
        assert reader.attainable(["tea"]) > before  # tea became rarer: its IDF grew
        writer.delete_document("doc-1")
        assert reader.search(["leaf"], 5) == [] and reader.count() == 2
    finally:
        writer.close()
        reader.close()


def test_a_dropped_connection_is_replaced_before_the_next_search(
    pgvector_url: str, pgvector_server: str
) -> None:
    store = PgVectorStore(pgvector_url, "segments", DIM)
    try:
        point = str(uuid.UUID(int=1))
        store.upsert([VectorRecord(point, np.ones(DIM), "doc-1")])
        assert [i for i, _ in store.search(np.ones(DIM), 1)] == [point]
        admin = create_engine(pgvector_server, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:  # what a server restart does to the pooled connections
            # waiting (up to 60 s) until each session has ended, as a restart has before it accepts
            killed = connection.scalar(
                text(
                    "SELECT count(pg_terminate_backend(pid, 60000)) FROM pg_stat_activity"
                    " WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'"
                )
            )
        admin.dispose()
        assert killed >= 1
        assert [i for i, _ in store.search(np.ones(DIM), 1)] == [point]
    finally:
        store.close()


def test_a_connection_dropped_mid_search_is_a_clear_error_and_the_next_search_works(
    pgvector_url: str,
) -> None:
    """The search waits on a lock another session holds; its connection is terminated meanwhile
    (a database restart, a failover): that search fails saying the connection was lost, and the
    next one gets a new connection."""
    store = PgVectorStore(pgvector_url, "segments", DIM)
    admin = create_engine(pgvector_url)
    try:
        point = str(uuid.UUID(int=1))
        store.upsert([VectorRecord(point, np.ones(DIM), "doc-1")])
        with admin.connect() as holder, ThreadPoolExecutor(1) as pool:
            holder.execute(text("LOCK TABLE segments IN ACCESS EXCLUSIVE MODE"))
            search = pool.submit(store.search, np.ones(DIM), 1)
            waiting = text(
                "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            )
            with admin.connect() as watcher:
                while not (pids := watcher.scalars(waiting).all()):
                    watcher.rollback()  # pg_stat_activity is read once per transaction
                    assert not search.done(), search.result()
                    time.sleep(0.05)
                watcher.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pids[0]})
                watcher.commit()
            with pytest.raises(StoreError, match="search failed: the connection to the database was lost"):
                search.result(timeout=120)
            holder.rollback()
        assert [i for i, _ in store.search(np.ones(DIM), 1)] == [point]
    finally:
        admin.dispose()
        store.close()


def test_settings_choose_the_database_and_each_dataset_has_its_tables(pgvector_url: str) -> None:
    with pytest.raises(ConfigError, match="pgvector_url"):
        store_url(Settings(database_url="sqlite:///kb.db"))
    assert store_url(Settings(database_url=pgvector_url)) == pgvector_url
    assert store_url(Settings(database_url="sqlite:///kb.db", pgvector_url=pgvector_url)) == pgvector_url
    settings = Settings(pgvector_url=pgvector_url)
    dataset = str(uuid.uuid4())
    dense, bm25 = open_pgvector_vector(settings, dataset, DIM), open_pgvector_fulltext(settings, dataset)
    other = open_pgvector_vector(settings, str(uuid.uuid4()), DIM * 2)  # its own table, its own size
    try:
        assert dense.table_name == f"zhiku_{uuid.UUID(dataset).hex}_dense"
        assert bm25.table_name == f"zhiku_{uuid.UUID(dataset).hex}_bm25"
        dense.upsert([VectorRecord(str(uuid.UUID(int=1)), np.ones(DIM), "doc")])
        assert other.count() == 0
    finally:
        for store in (dense, bm25, other):
            store.close()


def test_the_settings_name_the_pgvector_stores(pgvector_url: str) -> None:
    settings = Settings(pgvector_url=pgvector_url, vector_backend="pgvector", fulltext_backend="pgvector")
    dense, bm25 = open_vector(settings, str(uuid.uuid4()), DIM), open_fulltext(settings, str(uuid.uuid4()))
    assert isinstance(dense, PgVectorStore) and isinstance(bm25, PgBM25Store)
    dense.close()
    bm25.close()


def test_concurrent_writers_keep_the_statistics_exact(pgvector_url: str) -> None:
    """Four writers with connections of their own (as four processes would) upsert, replace and
    delete records sharing terms at once: afterwards the record count, the average length and
    every term's document count (read back as its IDF) are those of the records present."""
    vocabulary = [f"w{n}" for n in range(12)]
    rng = np.random.default_rng(5)
    texts = {
        str(uuid.UUID(int=i + 1)): list(rng.choice(vocabulary, int(rng.integers(1, 8)))) for i in range(120)
    }
    ids = list(texts)
    stores = [PgBM25Store(pgvector_url, "bm25") for _ in range(4)]

    def write(n: int) -> None:
        mine = ids[n * 30 : n * 30 + 30]
        for start in range(0, 30, 5):
            stores[n].upsert([TextRecord(i, texts[i], f"doc-{n}") for i in mine[start : start + 5]])
        stores[n].upsert([TextRecord(mine[0], ["w0", "w0"], f"doc-{n}")])  # a replacement
        stores[n].delete(mine[-3:])

    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(write, range(4)))
        present = {}
        for n in range(4):
            mine = ids[n * 30 : n * 30 + 27]
            present.update({i: texts[i] for i in mine})
            present[mine[0]] = ["w0", "w0"]
        reader = stores[0]
        assert reader.ids() == set(present) and reader.count() == len(present)
        assert reader.avgdl == pytest.approx(sum(map(len, present.values())) / len(present))
        for word in vocabulary:
            holders = sum(1 for tokens in present.values() if word in tokens)
            expected = lucene_idf(len(present), holders or 1) * (reader.k1 + 1)
            assert reader.attainable([word]) == pytest.approx(expected), word
            assert len(reader.search([word], 200)) == holders, word
    finally:
        for store in stores:
            store.close()


def test_a_record_of_many_distinct_terms_is_stored_and_found(pgvector_url: str) -> None:
    """pgvector's HNSW index refuses sparse vectors of more than 1,000 terms; the BM25 table has
    none, so a long record is stored and ranked like any other."""
    store = PgBM25Store(pgvector_url, "bm25")
    try:
        long, short = str(uuid.UUID(int=1)), str(uuid.UUID(int=2))
        store.upsert(
            [
                TextRecord(long, [f"t{n}" for n in range(3000)], "doc-1"),
                TextRecord(short, ["t7", "x"], "doc-2"),
            ]
        )
        assert [i for i, _ in store.search(["t2999"], 5)] == [long]
        assert [i for i, _ in store.search(["t7"], 5)] == [short, long]
    finally:
        store.close()


def test_a_cancelled_index_build_stops_and_the_next_optimize_builds_it(pgvector_url: str) -> None:
    """A delete or a stopping server cancels a background optimize: the HNSW build is stopped on
    the server (not left running), its transaction rolls back, and a later optimize builds it.
    The build is held waiting by another writer's open transaction, so it cannot end first."""
    from zhiku.core.cancellation import CancelToken, cancellable
    from zhiku.core.errors import Cancelled

    store = PgVectorStore(pgvector_url, "segments", DIM)
    blocker = create_engine(pgvector_url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        vectors = clustered(np.random.default_rng(3), 200)
        store.upsert([VectorRecord(str(uuid.UUID(int=i + 1)), v, "doc-1") for i, v in enumerate(vectors)])
        token = CancelToken()
        token.cancel("dataset deleted")
        raised: list[BaseException] = []

        def optimize() -> None:
            with cancellable(token):
                try:
                    store.optimize()
                except BaseException as exc:  # noqa: BLE001 - handed to the test thread
                    raised.append(exc)

        with blocker.connect() as writer:
            writer.execute(text(f'UPDATE "{store.table_name}" SET enabled = enabled'))  # holds its lock
            building = threading.Thread(target=optimize)
            building.start()
            building.join(120)  # a bound on a hang, not a timing: the cancel is polled every 0.2 s
            stopped = not building.is_alive()
            writer.rollback()  # lets an uncancelled build finish, so a failing test does not hang
        building.join()
        assert stopped, "the build went on waiting after its work was cancelled"
        assert len(raised) == 1 and isinstance(raised[0], Cancelled) and "dataset deleted" in str(raised[0])
        assert not has_graph(store)
        store.optimize()
        assert has_graph(store)
    finally:
        blocker.dispose()
        store.close()


HOSTILE_DOCUMENTS = [
    "a'b",
    "50%(x)s %s",
    'c"d',
    "e,f}",
    "{g}",
    "h\\i",
    "j k; DROP TABLE segments; --",
    "龙井",
]


def test_document_ids_and_sections_of_any_text_are_parameters(pgvector_url: str) -> None:
    """Quotes, commas, braces, backslashes, placeholders and SQL in document ids and sections reach both
    stores' searches as values: each scope finds its own document's point and nothing else."""
    dense = PgVectorStore(pgvector_url, "segments", DIM)
    bm25 = PgBM25Store(pgvector_url, "bm25")
    try:
        points = {document: str(uuid.UUID(int=n + 1)) for n, document in enumerate(HOSTILE_DOCUMENTS)}
        dense.upsert([VectorRecord(p, np.ones(DIM), d, section=d) for d, p in points.items()])
        bm25.upsert([TextRecord(p, ["tea"], d, section=d) for d, p in points.items()])
        for document, point in points.items():
            for scope in (DocumentScope(frozenset({document})), DocumentScope.of_section(document)):
                assert [i for i, _ in dense.search(np.ones(DIM), 10, scope)] == [point], scope
                assert [i for i, _ in bm25.search(["tea"], 10, scope)] == [point], scope
            others = DocumentScope(frozenset({document}), exclude=True)
            assert point not in {i for i, _ in dense.search(np.ones(DIM), 10, others)}
            assert len(bm25.search(["tea"], 10, others)) == len(points) - 1
    finally:
        dense.drop()
        bm25.drop()
