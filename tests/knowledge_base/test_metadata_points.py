"""Metadata values in the store points' payload: a filter tested there keeps exactly the points
the list of documents keeps, on each Qdrant backend; a change of values reaches the points after
its commit, and until then filters use the list; a change a stopped process left is applied at
the next open; an upgrade marks the documents whose points hold no values yet."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import select

from zhiku import KnowledgeBase
from zhiku.core.db import make_engine
from zhiku.core.db.migrate import alembic_config
from zhiku.core.db.models import PendingMetadataPointsRow
from zhiku.core.errors import StoreError
from zhiku.core.metadata import MetadataFilter
from zhiku.core.payload_filter import metadata_key
from zhiku.core.scope import DocumentScope
from zhiku.knowledge_base import metadata, metadata_points
from zhiku.knowledge_base.dataset import Dataset

from .random_metadata import random_condition, set_random_values

TEAM_IS_HR = {"name": "team", "comparison_operator": "is", "value": "hr"}
TEXTS = ["annual leave and travel policy", "travel expenses for leave", "leave days carry over", "tea"]


def _filled(kb: KnowledgeBase, documents: int) -> Dataset:
    dataset = kb.create_dataset("d")
    dataset.metadata.set_builtin(True)
    for name, field_type in (("s1", "string"), ("s2", "string"), ("n", "number"), ("t", "time")):
        dataset.metadata.add_field(name, field_type)  # type: ignore[arg-type]
    for i in range(documents):
        dataset.add_text(f"d{i}.txt", f"{TEXTS[i % len(TEXTS)]} number {i}")
    return dataset


def _hr_and_it(
    kb: KnowledgeBase, hr_name: str, hr_text: str, it_name: str, it_text: str
) -> tuple[Dataset, str]:
    """A dataset of two documents with a field ``team``, ``hr`` on the first (its id returned),
    the value in the points."""
    dataset = kb.create_dataset("d")
    dataset.metadata.add_field("team", "string")
    hr = dataset.add_text(hr_name, hr_text).id
    dataset.add_text(it_name, it_text)
    dataset.metadata.set_values(hr, {"team": "hr"})
    assert kb.wait_for_metadata_points(60)
    return dataset, hr


def _both_ways(kb: KnowledgeBase, dataset: Dataset, scope: DocumentScope) -> tuple[set[str], set[str]]:
    """Every point each store's search admits (a limit above the points: all of them), with the
    payload's tests, and with the list of documents only."""
    index = kb.dataset_index(dataset.id)
    vector = index.embedding.embed_query("leave travel")
    terms = index.tokenizer.terms("leave travel")
    listed = scope.with_payload_filter(None)
    tested = {f"v{i}" for i, _ in index.vector.search(vector, 1000, scope)}
    tested |= {f"t{i}" for i, _ in index.fulltext.search(terms, 1000, scope)}
    by_list = {f"v{i}" for i, _ in index.vector.search(vector, 1000, listed)}
    by_list |= {f"t{i}" for i, _ in index.fulltext.search(terms, 1000, listed)}
    return tested, by_list


@pytest.mark.parametrize("backend", ["edge", "qdrant"])
def test_a_filter_tested_on_the_payload_keeps_the_points_the_list_keeps(tmp_path: Path, backend: str) -> None:
    rng = random.Random(27)
    settings = {"embedding_model": "use", "vector_backend": backend, "fulltext_backend": backend}
    with KnowledgeBase.open(tmp_path / "home", **settings) as kb:
        dataset = _filled(kb, documents=24)
        documents = [info.id for info in dataset.documents()]
        set_random_values(dataset, rng, documents)
        assert kb.wait_for_metadata_points(60)
        # values changed again for some, and a segment rewritten (its point takes the values
        # from the rows when it is written, not from a change)
        set_random_values(dataset, rng, rng.sample(documents, 8))
        segment = dataset.segments(documents[0])[0]
        dataset.segment_editor().update(documents[0], segment.id, content="leave travel rewritten")
        assert kb.wait_for_metadata_points(60)
        stored = [v for values in dataset.metadata.values_of(documents).values() for v in values.values()]
        tested = 0
        for _ in range(200):
            conditions = [random_condition(rng, dataset, stored) for _ in range(rng.randint(1, 3))]
            where = MetadataFilter.model_validate(
                {"logical_operator": rng.choice(["and", "or"]), "conditions": conditions}
            )
            scope = dataset.metadata.scope(where)
            assert scope is not None
            if scope.payload_filter is None:
                continue
            tested += 1
            on_payload, by_list = _both_ways(kb, dataset, scope)
            assert on_payload == by_list, where.model_dump()
        assert tested > 40  # most filters are tests of the payload (not contains, built-ins, "")


def test_filters_use_the_list_until_a_change_is_in_the_points(kb: KnowledgeBase) -> None:
    dataset = kb.create_dataset("d")
    dataset.metadata.add_field("team", "string")
    hr = dataset.add_text("hr.txt", "annual leave policy").id
    dataset.add_text("it.txt", "laptop travel policy")
    where = MetadataFilter.model_validate(
        {"conditions": [{"name": "team", "comparison_operator": "is", "value": "hr"}]}
    )
    index = kb.dataset_index(dataset.id)
    with index.write_lock():  # the background write of the change waits behind it
        dataset.metadata.set_values(hr, {"team": "hr"})
        scope = dataset.metadata.scope(where)
        assert scope is not None and scope.payload_filter is None and scope.ids == {hr}
        assert [hit.document_id for hit in dataset.search("policy", filter=where)] == [hr]
    assert kb.wait_for_metadata_points(60)
    scope = dataset.metadata.scope(where)
    assert scope is not None and scope.payload_filter is not None
    assert [hit.document_id for hit in dataset.search("policy", filter=where)] == [hr]
    key = metadata_key(dataset.metadata.fields()[0].id)
    held = {p.payload.get(key) for p in index.vector._collection.scroll(with_vector=False)}  # type: ignore[attr-defined]
    assert held == {"hr", None}
    dataset.metadata.set_values(hr, {"team": None})  # cleared: the key leaves its points
    assert kb.wait_for_metadata_points(60)
    held = {p.payload.get(key) for p in index.vector._collection.scroll(with_vector=False)}  # type: ignore[attr-defined]
    assert held == {None}
    assert dataset.search("policy", filter=where) == []


def test_a_search_tested_on_the_payload_reads_no_list_of_documents(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded stores test the filter in their points: only the keyword postings (SQL)
    read the scope's list of documents, once a search asks them."""
    dataset, hr = _hr_and_it(
        kb, "hr.md", "# Leave\n\nannual leave policy", "it.md", "# Leave\n\nlaptop leave policy"
    )
    reads: list[str] = []
    read = metadata.resolve
    monkeypatch.setattr(metadata, "resolve", lambda *args: reads.append("read") or read(*args))
    where = MetadataFilter.model_validate({"conditions": [TEAM_IS_HR]})
    for method in ("hybrid_search", "semantic_search", "full_text_search"):
        for section in (None, "Leave"):
            hits = dataset.search("leave policy", filter=where, search_method=method, section=section)
            assert [hit.document_id for hit in hits] == [hr], (method, section)
    assert reads == []
    hits = dataset.search("leave policy", filter=where, search_method="keyword_search")
    assert [hit.document_id for hit in hits] == [hr] and reads == ["read"]


_CHANGE_THEN_STOP = textwrap.dedent(
    """
    import os, sys
    from zhiku import KnowledgeBase
    with KnowledgeBase.open(sys.argv[1], embedding_model="use") as kb:
        dataset = kb.dataset("d")
        document = dataset.documents()[0].id
        with kb.dataset_index(dataset.id).write_lock():
            dataset.metadata.set_values(document, {"team": "hr"})
            os._exit(0)  # committed, never written into the points
    """
)


def test_a_change_a_stopped_process_left_is_in_the_points_after_the_next_open(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        dataset = kb.create_dataset("d")
        dataset.metadata.add_field("team", "string")
        document = dataset.add_text("hr.txt", "annual leave policy").id
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([sys.executable, "-c", _CHANGE_THEN_STOP, str(home)], check=True, env=env, timeout=120)
    where = MetadataFilter.model_validate(
        {"conditions": [{"name": "team", "comparison_operator": "is", "value": "hr"}]}
    )
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        dataset = kb.dataset("d")
        assert kb.wait_for_metadata_points(60)
        scope = dataset.metadata.scope(where)
        assert scope is not None and scope.payload_filter is not None
        assert [hit.document_id for hit in dataset.search("policy", filter=where)] == [document]


def test_an_upgrade_marks_the_documents_whose_points_hold_no_values(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        dataset = kb.create_dataset("d")
        dataset.metadata.add_field("team", "string")
        valued = dataset.add_text("hr.txt", "annual leave policy").id
        dataset.add_text("it.txt", "laptop policy")
        dataset.metadata.set_values(valued, {"team": "hr"})
        database_url = kb.settings.resolved_database_url
    engine = make_engine(database_url)
    try:
        with engine.begin() as connection:
            command.downgrade(alembic_config(connection), "0018")
        with engine.begin() as connection:
            command.upgrade(alembic_config(connection), "head")
        with engine.connect() as connection:
            marked = set(connection.scalars(select(PendingMetadataPointsRow.document_id)))
        assert marked == {valued}
    finally:
        engine.dispose()
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        assert kb.wait_for_metadata_points(60)
        with kb.sessions() as session:
            assert session.scalars(select(PendingMetadataPointsRow)).all() == []


def test_a_large_change_waits_for_the_next_build_and_is_written_by_it(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``WRITTEN_NOW_MAX_POINTS`` a change is left to the next index build (written into
    its copy), and counted as changes so the background optimizer comes; the list serves until."""
    monkeypatch.setattr(metadata_points, "WRITTEN_NOW_MAX_POINTS", 0)
    dataset = kb.create_dataset("d")
    dataset.metadata.add_field("team", "string")
    hr = dataset.add_text("hr.txt", "annual leave policy").id
    dataset.add_text("it.txt", "laptop travel policy")
    index = kb.dataset_index(dataset.id)
    index.optimize()
    dataset.metadata.set_values(hr, {"team": "hr"})
    assert kb.wait_for_metadata_points(60)
    where = MetadataFilter.model_validate({"conditions": [TEAM_IS_HR]})
    scope = dataset.metadata.scope(where)
    assert scope is not None and scope.payload_filter is None
    assert index.changes.pending() >= 1
    assert [hit.document_id for hit in dataset.search("policy", filter=where)] == [hr]
    dataset.optimize()
    scope = dataset.metadata.scope(where)
    assert scope is not None and scope.payload_filter is not None
    assert [hit.document_id for hit in dataset.search("policy", filter=where)] == [hr]
    with kb.sessions() as session:
        assert session.scalars(select(PendingMetadataPointsRow)).all() == []


def test_a_store_failing_to_write_a_change_leaves_its_marks_for_the_next_try(
    kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = kb.create_dataset("d")
    dataset.metadata.add_field("team", "string")
    hr = dataset.add_text("hr.txt", "annual leave policy").id
    index = kb.dataset_index(dataset.id)

    def broken(*args: object) -> None:
        raise StoreError("the shard is gone")

    monkeypatch.setattr(index.fulltext, "set_metadata", broken)
    dataset.metadata.set_values(hr, {"team": "hr"})  # committed: the store write fails after
    assert kb.wait_for_metadata_points(60)
    where = MetadataFilter.model_validate({"conditions": [TEAM_IS_HR]})
    scope = dataset.metadata.scope(where)
    assert scope is not None and scope.payload_filter is None
    assert [hit.document_id for hit in dataset.search("policy", filter=where)] == [hr]
    monkeypatch.undo()
    kb.sync_metadata_points()  # what the next change, open or background optimizer does
    assert kb.wait_for_metadata_points(60)
    scope = dataset.metadata.scope(where)
    assert scope is not None and scope.payload_filter is not None
    assert [hit.document_id for hit in dataset.search("policy", filter=where)] == [hr]


def test_a_deleted_fields_payload_index_goes_with_the_next_change(kb: KnowledgeBase) -> None:
    dataset = kb.create_dataset("d")
    team = dataset.metadata.add_field("team", "string")
    year = dataset.metadata.add_field("year", "number")
    document = dataset.add_text("hr.txt", "annual leave policy").id
    dataset.metadata.set_values(document, {"team": "hr", "year": 2026})
    assert kb.wait_for_metadata_points(60)
    index = kb.dataset_index(dataset.id)

    def indexed() -> set[str]:
        keys: set[str] = set()
        for store in (index.vector, index.fulltext):
            with store._collection._reading() as shard:  # type: ignore[attr-defined]
                keys |= {key for key in shard.info().payload_schema if key.startswith("meta_")}
        return keys

    assert indexed() == {metadata_key(team.id), metadata_key(year.id)}
    dataset.metadata.delete_field(team.id)
    dataset.metadata.set_values(document, {"year": 2025})
    assert kb.wait_for_metadata_points(60)
    assert indexed() == {metadata_key(year.id)}


def test_a_move_between_backends_writes_the_values_into_the_new_points(kb: KnowledgeBase) -> None:
    dataset, hr = _hr_and_it(kb, "hr.txt", "annual leave policy", "it.txt", "laptop travel policy")
    where = MetadataFilter.model_validate({"conditions": [TEAM_IS_HR]})
    key = metadata_key(dataset.metadata.fields()[0].id)
    for backend in ("qdrant", "edge"):
        kb.move_stores(dataset.id, {"vector": backend, "fulltext": backend})
        index = kb.dataset_index(dataset.id)
        for store in (index.vector, index.fulltext):
            held = {p.payload.get(key) for p in store._collection.scroll(with_vector=False)}  # type: ignore[attr-defined]
            assert held == {"hr", None}
        scope = dataset.metadata.scope(where)
        assert scope is not None and scope.payload_filter is not None
        assert [hit.document_id for hit in dataset.search("policy", filter=where)] == [hr]


def test_the_values_of_more_documents_than_a_statement_binds_are_read(kb: KnowledgeBase) -> None:
    """A build after an upgrade reads every marked document's values: 300,000 ids are past what
    one statement binds (PostgreSQL 65,535; SQLite 32,766 by default, 250,000 as often built)."""
    dataset = kb.create_dataset("d")
    dataset.metadata.add_field("team", "string")
    hr = dataset.add_text("hr.txt", "annual leave policy").id
    dataset.metadata.set_values(hr, {"team": "hr"})
    ids = [f"00000000-0000-0000-0000-{i:012d}" for i in range(300_000)] + [hr]
    with kb.sessions() as session:
        payloads = metadata_points.metadata_payloads(session, dataset.id, ids)
    assert payloads == {hr: {metadata_key(dataset.metadata.fields()[0].id): "hr"}}
