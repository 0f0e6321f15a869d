"""Summary index: the chat model (a scripted server) summarises each segment; summaries are
points of all three stores, and a hit on one returns its segment once, with the summary beside it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.openai_server import Reply, ScriptedChatServer, last_user_text
from tests.reliability.consistency import assert_stores_match_rows
from zhiku import KnowledgeBase
from zhiku.knowledge_base.dataset import Dataset

HANDBOOK = (
    "The tea garden opens at eight in the morning and closes at five in the afternoon.\n\n"
    "员工入职满一年后每年享有十天带薪年假。\n\n"
    "Shipping: orders leave the warehouse within two working days."
)

#: each summary holds a word its segment lacks ("timetable", "福利", "logistics")
SUMMARIES = {
    "opens at eight": "The garden's daily timetable of opening hours.",
    "带薪年假": "本段介绍员工的年假福利。",
    "Shipping": "How fast logistics dispatches an order.",
}

RULE = {"splitter": "fixed_separator", "max_tokens": 100, "chunk_overlap": 0, "summary": "llm"}


def summarise(body: dict) -> Reply:
    """Answers like a model would: the summary of the text in the prompt."""
    text = re.split(r"Text:\n|文本：\n", last_user_text(body))[-1]
    return Reply.text(next((summary for key, summary in SUMMARIES.items() if key in text), ""))


@pytest.fixture
def server() -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer(summarise) as chat_server:
        yield chat_server


@pytest.fixture
def kb(tmp_path: Path, server: ScriptedChatServer) -> Iterator[KnowledgeBase]:
    with KnowledgeBase.open(
        tmp_path / "home",
        embedding_model="use",
        llm_base_url=server.base_url,
        llm_model="m",
        llm_max_retries=0,
    ) as knowledge_base:
        yield knowledge_base


@pytest.fixture
def ds(kb: KnowledgeBase) -> Dataset:
    dataset = kb.create_dataset("handbook", process_rule=RULE)
    info = dataset.add_text("handbook.txt", HANDBOOK)
    assert info.status == "completed", info.error
    return dataset


def test_summaries_are_written_and_indexed_in_every_store(
    kb: KnowledgeBase, ds: Dataset, server: ScriptedChatServer
) -> None:
    segments = ds.segments(with_children=True)
    assert [s.summary.content if s.summary else None for s in segments] == list(SUMMARIES.values())
    assert all(not s.children for s in segments)
    prompts = [last_user_text(body) for body in server.requests]
    assert sum("用两三句话概括" in p for p in prompts) == 1, "the Chinese segment gets the Chinese prompt"
    assert sum("Summarise the text below" in p for p in prompts) == 2
    index = kb.dataset_index(ds.id)
    summary_ids = {s.summary.id for s in segments if s.summary}
    segment_ids = {s.id for s in segments}
    # a segment with a summary stays a point itself: "itself + its summary"
    assert index.vector.ids() == index.fulltext.ids() == segment_ids | summary_ids
    assert index.keywords.ids() == segment_ids and index.child_keywords.ids() == summary_ids
    assert_stores_match_rows(kb, ds)


@pytest.mark.parametrize(
    ("query", "marker"), [("timetable", "opens at eight"), ("福利", "带薪年假"), ("logistics", "Shipping")]
)
@pytest.mark.parametrize("method", ["keyword_search", "full_text_search", "hybrid_search"])
def test_summary_hits_map_back(ds: Dataset, query: str, marker: str, method: str) -> None:
    hits = ds.search(query, search_method=method, search_in="originals+summaries", top_k=3)
    segment = next(s for s in ds.segments(with_children=True) if marker in s.content)
    assert hits and hits[0].segment_id == segment.id
    assert hits[0].content == segment.content and marker in hits[0].content
    assert segment.summary is not None and hits[0].summary == segment.summary.content
    assert hits[0].child_chunks == []  # the summary is shown as the summary, not as a child
    ids = [h.segment_id for h in hits]
    assert len(ids) == len(set(ids)), "a segment found through itself and its summary is one hit"


@pytest.mark.parametrize("method", ["keyword_search", "full_text_search"])
def test_originals_mode_does_not_search_summaries(ds: Dataset, method: str) -> None:
    assert ds.search("timetable", search_method=method) == []
    assert ds.search("timetable", search_method=method, search_in="originals") == []
    # the originals' own words still find them, with the summary shown beside the hit
    hits = ds.search("warehouse", search_method=method)
    assert "warehouse" in hits[0].content and hits[0].summary == SUMMARIES["Shipping"]


def test_semantic_originals_search_never_returns_a_summary_point(kb: KnowledgeBase, ds: Dataset) -> None:
    summary_ids = {s.summary.id for s in ds.segments(with_children=True) if s.summary}
    index = kb.dataset_index(ds.id)
    vector = index.embedding.embed_query("daily timetable of opening hours")
    assert not {i for i, _ in index.vector.search(vector, 10)} & summary_ids
    assert {i for i, _ in index.vector.search(vector, 10, None, summaries=True)} & summary_ids


def test_a_failed_summary_is_tracked_and_retried_alone(tmp_path: Path) -> None:
    failing = {"on": True}

    def flaky(body: dict) -> Reply:
        if failing["on"] and "Shipping" in last_user_text(body):
            return Reply.status(500, "upstream exploded")
        return summarise(body)

    with (
        ScriptedChatServer(flaky) as server,
        KnowledgeBase.open(
            tmp_path / "home",
            embedding_model="use",
            llm_base_url=server.base_url,
            llm_model="m",
            llm_max_retries=0,
        ) as kb,
    ):
        ds = kb.create_dataset("handbook", process_rule=RULE)
        info = ds.add_text("handbook.txt", HANDBOOK)
        assert info.status == "completed_with_errors"
        assert "1 segment(s) served without summary" in (info.error or "") and "500" in info.error
        shipping = next(s for s in ds.segments(with_children=True) if "Shipping" in s.content)
        assert shipping.summary is None
        [failed] = info.metadata["failed_chunks"]
        assert failed["metadata"]["summary_of"] == shipping.id
        hits = ds.search("warehouse", search_method="full_text_search", search_in="originals+summaries")
        assert hits[0].segment_id == shipping.id and hits[0].summary is None  # served without summary
        assert ds.search("logistics", search_method="full_text_search", search_in="originals+summaries") == []

        calls = len(server.requests)
        failing["on"] = False
        retried = ds.retry_document(info.id)
        assert retried.status == "completed" and retried.error is None
        assert retried.metadata["failed_chunks"] == []
        assert len(server.requests) == calls + 1, "only the failed segment is summarised again"
        assert "Shipping" in last_user_text(server.requests[-1])
        segments = ds.segments(with_children=True)
        assert [s.id for s in segments] == [s.id for s in ds.segments()]
        assert all(s.summary is not None for s in segments)
        hits = ds.search("logistics", search_method="full_text_search", search_in="originals+summaries")
        assert hits[0].segment_id == shipping.id and hits[0].summary == SUMMARIES["Shipping"]
        assert_stores_match_rows(kb, ds)


def test_deleting_a_document_removes_its_summaries(kb: KnowledgeBase, ds: Dataset) -> None:
    document_id = ds.segments()[0].document_id
    ds.delete_document(document_id)
    index = kb.dataset_index(ds.id)
    assert index.vector.ids() == index.fulltext.ids() == index.child_keywords.ids() == set()
    assert ds.segments(with_children=True) == []


def test_summary_needs_a_chat_model_and_text_segments(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        with pytest.raises(ValueError, match="summary"):
            kb.create_dataset("qa", process_rule={"doc_form": "qa_model", "summary": "llm"})
        ds = kb.create_dataset("plain", process_rule=RULE)
        info = ds.add_text("handbook.txt", HANDBOOK)
        # the segments are served without summaries, to be summarised by a retry
        assert info.status == "completed_with_errors" and "ZHIKU_LLM_BASE_URL" in (info.error or "")
        assert len(info.metadata["failed_chunks"]) == info.segment_count == 3


def test_editing_a_segment_drops_its_summary_everywhere(kb: KnowledgeBase, ds: Dataset) -> None:
    segment = next(s for s in ds.segments(with_children=True) if "Shipping" in s.content)
    assert segment.summary is not None
    ds.segment_editor().update(segment.document_id, segment.id, content="Shipping takes a week now.")
    edited = next(s for s in ds.segments(with_children=True) if s.id == segment.id)
    assert edited.summary is None and "week" in edited.content
    assert segment.summary.id not in kb.dataset_index(ds.id).vector.ids()
    assert ds.search("logistics", search_method="keyword_search", search_in="originals+summaries") == []
    assert_stores_match_rows(kb, ds)
