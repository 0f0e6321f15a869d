"""Parent-child index: children are the points of all three stores, search returns parents."""

from __future__ import annotations

import pytest

from tests.reliability.consistency import assert_stores_match_rows
from zhiku import KnowledgeBase
from zhiku.core.errors import InvalidInput
from zhiku.knowledge_base.dataset import Dataset

RULE = {"doc_form": "hierarchical_model", "max_tokens": 120, "chunk_overlap": 0, "child_max_tokens": 16}
FILLER = "The estate keeps careful records of every harvest and every visitor. "

#: Six chapters; chapter i holds the marker word zebra<i> in one sentence of its own.
TEXT = "\n\n".join(
    f"Chapter {i} is about plantation number {i}. " + FILLER * 4 + f"Only here grows the tea called zebra{i}."
    for i in range(6)
)


@pytest.fixture
def ds(kb: KnowledgeBase) -> Dataset:
    dataset = kb.create_dataset("pc", process_rule=RULE)
    doc = dataset.add_text("estate.txt", TEXT)
    assert doc.status == "completed", doc.error
    return dataset


def test_children_are_the_points_of_every_store(kb: KnowledgeBase, ds: Dataset) -> None:
    segments = ds.segments(with_children=True)
    assert len(segments) == 6
    assert all(len(s.children) >= 2 for s in segments)
    for segment in segments:  # children cover the parent, in order
        assert segment.children[0].content in segment.content
        assert [c.position for c in segment.children] == list(range(len(segment.children)))
    index = kb.dataset_index(ds.id)
    child_ids = {c.id for s in segments for c in s.children}
    assert index.vector.ids() == child_ids == index.fulltext.ids()
    assert index.child_keywords.ids() == child_ids and index.keywords.ids() == set()
    assert_stores_match_rows(kb, ds)


@pytest.mark.parametrize("method", ["keyword_search", "full_text_search", "semantic_search", "hybrid_search"])
def test_every_channel_returns_the_parent_with_its_matching_child(ds: Dataset, method: str) -> None:
    hits = ds.search("zebra3", search_method=method, top_k=3)
    assert hits, method
    parent = next(s for s in ds.segments(with_children=True) if "zebra3" in s.content)
    if method != "semantic_search":  # exact words: the lexical channels find them first
        assert hits[0].segment_id == parent.id
        assert hits[0].content == parent.content
        best = hits[0].child_chunks[0]
        assert "zebra3" in best.content
        assert best.id in {c.id for c in parent.children}
    for hit in hits:
        scores = [c.score for c in hit.child_chunks]
        assert scores == sorted(scores, reverse=True)


def test_keyword_only_query_still_returns_the_parent(kb: KnowledgeBase, ds: Dataset) -> None:
    """A word only the keyword channel matches (given as a child's keyword, not in its text)."""
    parent = ds.segments(with_children=True)[2]
    editor = ds.segment_editor()
    child = parent.children[0]
    index = kb.dataset_index(ds.id)
    # the keyword postings hold what the child is tagged with; BM25 and vectors hold its text
    updated = editor.update_child(ds.segments()[2].document_id, parent.id, child.id, child.content + " okapi")
    assert updated.chunk.id == child.id
    hits = ds.search("okapi", search_method="hybrid_search", hybrid_methods=["keyword"], top_k=5)
    assert [h.segment_id for h in hits] == [parent.id]
    assert hits[0].child_chunks[0].id == child.id
    assert index.fulltext.ids() == index.vector.ids()


def test_one_parent_never_fills_two_slots(ds: Dataset) -> None:
    # every child of every parent shares the filler words: many children match per parent
    for method in ("hybrid_search", "full_text_search", "keyword_search", "semantic_search"):
        hits = ds.search("careful records of every harvest", search_method=method, top_k=10)
        ids = [h.segment_id for h in hits]
        assert len(ids) == len(set(ids)) == 6, (method, ids)
        assert any(len(h.child_chunks) > 1 for h in hits), method


def test_rrf_and_rank_are_per_parent(ds: Dataset) -> None:
    hits = ds.search(
        "zebra4 tea", search_method="hybrid_search", reranking={"mode": "rrf"}, top_k=3
    )
    assert hits[0].ranks["full_text"] == 1
    assert len({h.segment_id for h in hits}) == len(hits)


def test_metadata_scope_reaches_children(kb: KnowledgeBase, ds: Dataset) -> None:
    other = ds.add_text("other.txt", "A separate leaflet about zebra3 tea and nothing else.")
    meta = ds.metadata
    meta.add_field("kind", "string")
    meta.set_values(other.id, {"kind": "leaflet"})
    only = {"conditions": [{"name": "kind", "comparison_operator": "is", "value": "leaflet"}]}
    for method in ("keyword_search", "full_text_search", "semantic_search"):
        hits = ds.search("zebra3", search_method=method, filter=only, top_k=5)
        assert hits and {h.document_id for h in hits} == {other.id}, method


def test_editing_a_parent_cuts_its_children_again(kb: KnowledgeBase, ds: Dataset) -> None:
    parent = ds.segments(with_children=True)[1]
    editor = ds.segment_editor()
    new_text = "Plantation one now grows capybara oolong. " + FILLER
    editor.update(parent.document_id, parent.id, content=new_text)
    edited = next(s for s in ds.segments(with_children=True) if s.id == parent.id)
    assert edited.children and "capybara" in edited.children[0].content
    # a child with the same position and text keeps its id; the others are gone from every store
    before, after = ({(c.position, c.content) for c in s.children} for s in (parent, edited))
    kept = before & after
    assert len({c.id for c in parent.children} & {c.id for c in edited.children}) == len(kept)
    gone = {c.id for c in parent.children} - {c.id for c in edited.children}
    assert gone and not gone & kb.dataset_index(ds.id).vector.ids()
    assert not ds.search("zebra1", search_method="keyword_search")
    hits = ds.search("capybara", search_method="full_text_search")
    assert hits[0].segment_id == parent.id and "capybara" in hits[0].child_chunks[0].content
    assert_stores_match_rows(kb, ds)


def test_child_chunks_can_be_added_changed_and_deleted(kb: KnowledgeBase, ds: Dataset) -> None:
    parent = ds.segments(with_children=True)[0]
    editor = ds.segment_editor()
    added = editor.add_child(parent.document_id, parent.id, "A wombat guards the drying room.")
    assert added.chunk.position == len(parent.children)
    assert ds.search("wombat", search_method="keyword_search")[0].child_chunks[0].id == added.chunk.id
    editor.update_child(parent.document_id, parent.id, added.chunk.id, "A quokka guards the drying room.")
    assert not ds.search("wombat", search_method="full_text_search")
    assert ds.search("quokka", search_method="full_text_search")[0].segment_id == parent.id
    page, total = editor.children(parent.document_id, parent.id, limit=2)
    assert total == len(parent.children) + 1 and len(page) == 2
    assert editor.children(parent.document_id, parent.id, keyword="QUOKKA")[1] == 1
    editor.delete_child(parent.document_id, parent.id, added.chunk.id)
    assert not ds.search("quokka", search_method="keyword_search")
    assert_stores_match_rows(kb, ds)
    for child in parent.children[1:]:
        editor.delete_child(parent.document_id, parent.id, child.id)
    with pytest.raises(InvalidInput, match="at least one child"):
        editor.delete_child(parent.document_id, parent.id, parent.children[0].id)
    assert_stores_match_rows(kb, ds)


def test_disabled_parent_is_not_served_and_its_children_are_flagged(kb: KnowledgeBase, ds: Dataset) -> None:
    parent = next(s for s in ds.segments(with_children=True) if "zebra5" in s.content)
    ds.set_segment_enabled(parent.id, False)
    index = kb.dataset_index(ds.id)
    assert index.vector.disabled_ids() == {c.id for c in parent.children}
    assert all(h.segment_id != parent.id for h in ds.search("zebra5", top_k=6))
    assert_stores_match_rows(kb, ds)
    ds.set_segment_enabled(parent.id, True)
    assert ds.search("zebra5", search_method="keyword_search")[0].segment_id == parent.id
    assert_stores_match_rows(kb, ds)


def test_new_segments_get_children_and_deletes_reach_every_store(kb: KnowledgeBase, ds: Dataset) -> None:
    from zhiku.knowledge_base.indexing.segments import NewSegment

    document_id = ds.segments()[0].document_id
    editor = ds.segment_editor()
    [added] = editor.add(document_id, [NewSegment("A lone narwhal sentence about nothing in particular.")])
    assert ds.search("narwhal", search_method="keyword_search")[0].segment_id == added.segment.id
    editor.delete(document_id, added.segment.id)
    assert not ds.search("narwhal", search_method="keyword_search")
    assert_stores_match_rows(kb, ds)
    ds.delete_document(document_id)
    index = kb.dataset_index(ds.id)
    assert index.vector.count() == index.fulltext.count() == 0 and index.child_keywords.ids() == set()


def test_full_doc_mode_makes_one_parent_per_file(kb: KnowledgeBase) -> None:
    dataset = kb.create_dataset("full", process_rule={**RULE, "parent_mode": "full-doc"})
    doc = dataset.add_text("estate.txt", TEXT)
    [parent] = dataset.segments(doc.id, with_children=True)
    assert parent.content.startswith("Chapter 0") and "zebra5" in parent.content
    assert len(parent.children) > 6
    assert dataset.search("zebra4", search_method="full_text_search")[0].segment_id == parent.id
