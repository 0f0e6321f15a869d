"""A dataset's documents and segments in order, read from the ordering indexes: numbering any
subset of documents by order of creation, a page of segments document by document, counts, and
the query plans that keep a page of a 10,000-document dataset from sorting all of them."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from zhiku.core.documents import Chunk
from zhiku.knowledge_base import KnowledgeBase
from zhiku.knowledge_base.catalog import Catalog


def _fill(kb: KnowledgeBase, documents: int = 7, segments: int = 3) -> tuple[str, list[str]]:
    dataset = kb.create_dataset("ordered")
    made = dataset.add_chunks(
        [
            (
                f"doc-{d}.txt",
                [Chunk(f"document {d} passage {s} about tea", s, 6, {}) for s in range(segments)],
            )
            for d in range(documents)
        ]
    )
    by_creation = sorted(made, key=lambda info: (info.created_at, info.id))
    return dataset.id, [info.id for info in by_creation]


def test_any_documents_are_numbered_by_order_of_creation(kb: KnowledgeBase) -> None:
    dataset_id, ids = _fill(kb)
    catalog = Catalog(kb.sessions)
    assert catalog.document_positions(dataset_id, ids) == {doc: n + 1 for n, doc in enumerate(ids)}
    # a keyword's matches are not consecutive: those before the first are counted all the same
    assert catalog.document_positions(dataset_id, [ids[5], ids[2]]) == {ids[2]: 3, ids[5]: 6}
    assert catalog.document_positions(dataset_id, [ids[6]]) == {ids[6]: 7}
    assert catalog.document_positions(dataset_id, ["no-such-document"]) == {}
    other = kb.create_dataset("other").id
    assert catalog.document_positions(other, ids) == {}


def test_a_page_of_segments_is_in_document_order_with_the_right_counts(kb: KnowledgeBase) -> None:
    dataset_id, ids = _fill(kb)
    editor = kb.dataset(dataset_id).segment_editor()
    page, total = editor.page(None, offset=4, limit=5)
    assert total == 21
    assert [(s.segment.document_id, s.segment.position) for s in page] == [
        (ids[1], 1),
        (ids[1], 2),
        (ids[2], 0),
        (ids[2], 1),
        (ids[2], 2),
    ]
    page, total = editor.page(ids[3], offset=1, limit=10)
    assert total == 3 and [s.segment.position for s in page] == [1, 2]
    page, total = editor.page(None, offset=0, limit=50, keyword="passage 2")
    assert total == 7 and [s.segment.document_id for s in page] == ids
    editor_of_other = kb.dataset(kb.create_dataset("empty").id).segment_editor()
    assert editor_of_other.page(None, offset=0, limit=50) == ([], 0)


def test_a_page_is_found_from_the_ordering_indexes_alone(kb: KnowledgeBase) -> None:
    dataset_id, _ids = _fill(kb)
    with kb.sessions() as session:
        if session.get_bind().dialect.name != "sqlite":
            pytest.skip("the plan below is SQLite's wording")
        plan = " | ".join(
            str(row[-1])
            for row in session.execute(
                text(
                    "EXPLAIN QUERY PLAN SELECT segments.id FROM segments JOIN documents "
                    "ON documents.id = segments.document_id WHERE documents.dataset_id = :d "
                    "ORDER BY documents.created_at, documents.id, segments.position LIMIT 50 OFFSET 500"
                ),
                {"d": dataset_id},
            )
        )
    assert "COVERING INDEX ix_documents_dataset_created" in plan, plan
    assert "COVERING INDEX ix_segments_document_order" in plan, plan


def test_names_and_filter_choices_are_read_without_whole_rows(kb: KnowledgeBase) -> None:
    dataset_id, ids = _fill(kb, documents=5, segments=1)
    catalog = Catalog(kb.sessions)
    assert list(catalog.document_choices(dataset_id, 3)) == ids[::-1][:3]  # newest first
    names = catalog.document_names(dataset_id, {ids[0], ids[4], "no-such-document"})
    dataset = kb.dataset(dataset_id)
    assert names == {doc: dataset.document(doc).name for doc in (ids[0], ids[4])}
    assert catalog.document_names(kb.create_dataset("other").id, set(ids)) == {}
