"""Moving a dataset's stores between backends (``zhiku stores migrate``): embedded → pgvector and
back with every point (segments, child chunks, summaries, disabled ones), nothing embedded again,
every search method answering as before; a move cut off midway leaves the dataset on its old
stores, and the next run goes on from the copy."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, inspect, text

from tests.fixtures.openai_server import Reply, ScriptedChatServer, last_user_text
from tests.reliability.consistency import assert_stores_match_rows
from zhiku import KnowledgeBase
from zhiku.cli import main
from zhiku.core.errors import StoreError
from zhiku.datasource.points.pgvector import table_prefix
from zhiku.datasource.vector.pgvector import PgVectorStore
from zhiku.knowledge_base import store_moves
from zhiku.knowledge_base.dataset import Dataset
from zhiku.providers.embedding import CachedEmbedding

PGVECTOR = {"vector": "pgvector", "fulltext": "pgvector"}
EDGE = {"vector": "edge", "fulltext": "edge"}
METHODS = ("semantic_search", "full_text_search", "keyword_search", "hybrid_search")
QUERIES = ("annual leave days", "zebra3 tea", "daily timetable", "travel portal flights")
HANDBOOK = "\n\n".join(
    [
        "Employees get fifteen days of annual leave. Unused leave carries over to March.",
        "Book flights through the travel portal. Economy class for trips under six hours.",
        "The tea garden opens at eight in the morning and closes at five in the afternoon.",
        "Lock your laptop when you leave your desk. Report phishing emails to security.",
    ]
)
ESTATE = "\n\n".join(
    f"Chapter {i} is about plantation number {i}. The estate keeps careful records of every harvest. "
    f"Only here grows the tea called zebra{i}."
    for i in range(6)
)


def summarise(body: dict[str, Any]) -> Reply:
    text = re.split(r"Text:\n|文本：\n", last_user_text(body))[-1]
    summary = "The daily timetable of the garden." if "opens at eight" in text else "A handbook rule."
    return Reply.text(summary)


@pytest.fixture
def kb(tmp_path: Path, pgvector_url: str) -> Iterator[KnowledgeBase]:
    """Embedded stores by default, a pgvector database at hand; summaries by a scripted model."""
    with (
        ScriptedChatServer(summarise) as chat,
        KnowledgeBase.open(
            tmp_path / "home",
            embedding_model="use",
            pgvector_url=pgvector_url,
            llm_base_url=chat.base_url,
            llm_model="m",
            llm_max_retries=0,
        ) as knowledge_base,
    ):
        yield knowledge_base


@pytest.fixture
def datasets(kb: KnowledgeBase) -> list[Dataset]:
    """Segments with summaries and a disabled one; parent-child segments with their children."""
    handbook = kb.create_dataset(
        "handbook", process_rule={"splitter": "fixed_separator", "max_tokens": 100, "summary": "llm"}
    )
    assert handbook.add_text("handbook.txt", HANDBOOK).status == "completed"
    disabled = next(s for s in handbook.segments() if "phishing" in s.content)
    handbook.set_segment_enabled(disabled.id, False)
    estate = kb.create_dataset(
        "estate", process_rule={"doc_form": "hierarchical_model", "max_tokens": 60, "child_max_tokens": 16}
    )
    assert estate.add_text("estate.txt", ESTATE).status == "completed"
    return [handbook, estate]


Results = dict[tuple[str, str], list[tuple[str, float]]]


def results(dataset: Dataset) -> Results:
    return {
        (query, method): [(hit.segment_id, hit.score) for hit in dataset.search(query, search_method=method)]
        for query in QUERIES
        for method in METHODS
    }


def assert_same(found: Results, expected: Results) -> None:
    """The same scores, and the same hit wherever its score ties no other (cosines of vectors
    copied between stores differ in their last bits, which may reorder hits of equal score)."""
    for key, hits in expected.items():
        scores = [score for _, score in hits]
        assert [score for _, score in found[key]] == pytest.approx(scores, abs=1e-3), key
        for position, (segment, score) in enumerate(hits):
            if all(abs(score - other) > 1e-3 for n, (_, other) in enumerate(hits) if n != position):
                assert found[key][position][0] == segment, key


def test_a_move_to_pgvector_and_back_keeps_every_point_and_search_and_embeds_nothing(
    kb: KnowledgeBase, datasets: list[Dataset], pgvector_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = {dataset.name: results(dataset) for dataset in datasets}
    points = {dataset.name: kb.dataset_index(dataset.id).vector.count() for dataset in datasets}
    assert min(points.values()) > 5

    def no_embedding(*args: object, **kwargs: object) -> None:
        raise AssertionError("a move embedded texts")

    with monkeypatch.context() as patch:
        patch.setattr(CachedEmbedding, "embed_documents", no_embedding)
        moves = [kb.move_stores(dataset.name, PGVECTOR) for dataset in datasets]
    assert [(m.points, m.copied, m.kept, m.removed) for m in moves] == [
        (points[d.name], points[d.name], 0, 0) for d in datasets
    ]
    engine = create_engine(pgvector_url)
    tables = set(inspect(engine).get_table_names())
    engine.dispose()
    for dataset in datasets:
        assert kb.store_backends(dataset.id) == PGVECTOR
        assert {f"{table_prefix(dataset.id)}_dense", f"{table_prefix(dataset.id)}_bm25"} <= tables
        assert not list((kb.settings.qdrant_path / dataset.id).glob("*"))  # the old stores are dropped
        assert_stores_match_rows(kb, dataset)
        assert_same(results(dataset), before[dataset.name])

    # a process opened afterwards finds each dataset where it went, and it moves back
    home = kb.settings.home
    kb.close()
    with KnowledgeBase.open(home, embedding_model="use", pgvector_url=pgvector_url) as reopened:
        for dataset in (reopened.dataset("handbook"), reopened.dataset("estate")):
            assert_same(results(dataset), before[dataset.name])
            with monkeypatch.context() as patch:
                patch.setattr(CachedEmbedding, "embed_documents", no_embedding)
                assert reopened.move_stores(dataset.id, EDGE).copied == points[dataset.name]
            assert reopened.store_backends(dataset.id) == EDGE
            assert_stores_match_rows(reopened, dataset)
            assert_same(results(dataset), before[dataset.name])
            assert not reopened.move_stores(dataset.id, EDGE).moved


def test_a_move_cut_off_midway_serves_the_old_stores_and_the_next_run_goes_on(
    kb: KnowledgeBase, datasets: list[Dataset], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first run stops after its first batch (as a kill would: every batch is committed);
    meanwhile one segment is edited and one document deleted. The next run keeps what is still
    right, writes the rest, removes the deleted document's points and switches."""
    estate, handbook = datasets[1], datasets[0]
    monkeypatch.setattr(store_moves, "BATCH_SEGMENTS", 2)

    def cut(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        kb.move_stores("estate", PGVECTOR, on_progress=cut)
    assert kb.store_backends("estate") == EDGE
    assert "zebra3" in estate.search("zebra3", search_method="full_text_search")[0].content

    first = estate.segments(with_children=True)[0]
    edited = first.content.replace("careful", "fine")
    estate.segment_editor().update(first.document_id, first.id, content=edited)
    extra = estate.add_text("extra.txt", "Chapter 9 is about the drying shed. The leaves are spread out.")
    estate.delete_document(extra.id)
    kb.dataset_index(estate.id).optimize()  # the embedded BM25 statistics forget deleted points
    before = results(estate)
    move = kb.move_stores("estate", PGVECTOR)
    assert move.kept > 0 and move.copied > 0 and move.kept + move.copied == move.points
    assert kb.store_backends("estate") == PGVECTOR
    assert_stores_match_rows(kb, estate)
    assert_same(results(estate), before)
    assert kb.store_backends("handbook") == EDGE and results(handbook)


def test_a_move_killed_midway_leaves_the_dataset_on_its_old_stores_and_a_rerun_finishes(
    kb: KnowledgeBase, datasets: list[Dataset], pgvector_url: str
) -> None:
    """``zhiku stores migrate`` is killed (SIGKILL) while its first batch waits to write its
    vectors (a lock held on the target table), its BM25 records written: the dataset stays on
    the embedded stores and searches them; the command run again finishes the move."""
    handbook = datasets[0]
    before = results(handbook)
    home, dim = kb.settings.home, kb.dataset_index(handbook.id).vector.dim
    kb.close()
    PgVectorStore(pgvector_url, f"{table_prefix(handbook.id)}_dense", dim).close()
    env = {**os.environ, "ZHIKU_PGVECTOR_URL": pgvector_url, "ZHIKU_EMBEDDING_MODEL": "use"}
    command = [sys.executable, "-m", "zhiku.cli", "--home", str(home)]
    command += ["stores", "migrate", "--to", "pgvector"]
    engine = create_engine(pgvector_url)
    try:
        with engine.connect() as holder:
            # reads pass, writes wait: the first batch reads, writes its BM25 records, then waits
            holder.execute(text(f'LOCK TABLE "{table_prefix(handbook.id)}_dense" IN EXCLUSIVE MODE'))
            child = subprocess.Popen([*command, "--dataset", "handbook"], env=env, stderr=subprocess.PIPE)
            waiting = text("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
            with engine.connect() as watcher:
                while not watcher.scalar(waiting):
                    watcher.rollback()  # pg_stat_activity is read once per transaction
                    assert child.poll() is None, child.stderr.read() if child.stderr else ""
                    time.sleep(0.1)
            child.kill()
            child.wait(60)
            holder.rollback()
            counts = {
                family: holder.scalar(text(f'SELECT count(*) FROM "{table_prefix(handbook.id)}_{family}"'))
                for family in ("bm25", "dense")
            }
            assert counts["bm25"] > 0 and counts["dense"] == 0, counts
        with KnowledgeBase.open(home, embedding_model="use", pgvector_url=pgvector_url) as reopened:
            assert reopened.store_backends("handbook") == EDGE
            assert_same(results(reopened.dataset("handbook")), before)
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        assert re.search(r"handbook: \d+ points moved .* \(\d+ copied", done.stdout), done.stdout
        with KnowledgeBase.open(home, embedding_model="use", pgvector_url=pgvector_url) as reopened:
            moved = reopened.dataset("handbook")
            assert reopened.store_backends("handbook") == PGVECTOR
            assert_stores_match_rows(reopened, moved)
            assert_same(results(moved), before)
    finally:
        engine.dispose()


def test_a_point_missing_from_the_source_stops_the_move_before_any_switch(
    kb: KnowledgeBase, datasets: list[Dataset]
) -> None:
    handbook = datasets[0]
    index = kb.dataset_index(handbook.id)
    lost = sorted(index.vector.ids())[0]
    index.vector.delete([lost])
    with pytest.raises(StoreError, match=f"1 points have no vector in its edge store .*{lost}"):
        kb.move_stores("handbook", PGVECTOR)
    assert kb.store_backends("handbook") == EDGE
    assert handbook.search("annual leave", search_method="full_text_search")


def test_the_command_moves_the_datasets_named_and_shows_where_each_is(
    kb: KnowledgeBase, datasets: list[Dataset], pgvector_url: str
) -> None:
    home = str(kb.settings.home)
    kb.close()
    runner = CliRunner()
    env = {"ZHIKU_PGVECTOR_URL": pgvector_url, "ZHIKU_EMBEDDING_MODEL": "use"}
    migrate = ["--home", home, "stores", "migrate", "--to", "pgvector", "--dataset", "estate"]
    moved = runner.invoke(main, migrate, env=env)
    assert moved.exit_code == 0, moved.output
    moved_from = r"estate: \d+ points moved from vector=edge fulltext=edge to vector=pgvector "
    assert re.search(moved_from, moved.output)
    shown = runner.invoke(main, ["--home", home, "stores", "show"], env=env)
    assert shown.output.splitlines() == [
        "handbook\tvector=edge\tfulltext=edge",
        "estate\tvector=pgvector\tfulltext=pgvector",
    ]
    unknown = runner.invoke(main, ["--home", home, "stores", "migrate", "--to", "nosuch"], env=env)
    assert unknown.exit_code != 0 and "nosuch" in unknown.output
