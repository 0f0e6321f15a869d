"""The keyword channel of a dataset: edited keywords weigh above extracted ones, and a changed
user dictionary takes effect after a rebuild of the postings, without reopening."""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import update

from zhiku import KnowledgeBase
from zhiku.core.db.models import SegmentRow
from zhiku.core.documents import Chunk
from zhiku.knowledge_base import Dataset

#: These tests look at what a search may return (sections, filters, terms), not at relevance:
#: their datasets keep every hit.
KEEP_ALL = {"score_threshold": None}


def _add(ds: Dataset, *texts: str) -> str:
    chunks = [Chunk(content=text, position=i, tokens=0, metadata={}) for i, text in enumerate(texts)]
    ds.add_chunks([("doc", chunks)])
    return ds.documents()[0].id


def _scores(ds: Dataset, query: str) -> list[tuple[str, float]]:
    hits = ds.search(query, search_method="keyword_search", top_k=5)
    return [(hit.content, hit.scores["keyword"]) for hit in hits]  # the channel's own weights


def _keyword_hits(ds: Dataset, query: str) -> list[str]:
    return [content for content, _ in _scores(ds, query)]


def test_edited_keywords_outrank_extracted_ones(kb: KnowledgeBase) -> None:
    ds = kb.create_dataset("tea", retrieval=KEEP_ALL)
    document_id = _add(ds, "乌龙茶香气浓郁，乌龙茶产自福建。", "绿茶产自杭州西湖，清香淡雅。")
    segments = ds.segments(document_id)
    assert _keyword_hits(ds, "乌龙茶") == [segments[0].content]
    ds.segment_editor().update(document_id, segments[1].id, keywords=["乌龙茶", "西湖"])
    assert _keyword_hits(ds, "乌龙茶")[0] == segments[1].content


def test_rebuild_after_a_user_dictionary_change(kb: KnowledgeBase, tmp_path: Path) -> None:
    words = tmp_path / "words.txt"
    words.write_text("青山茶园 10\n", encoding="utf-8")
    ds = kb.create_dataset("garden", user_dict=words, retrieval=KEEP_ALL)
    _add(ds, "青山茶园每年举办采茶节。", "青山茶园每年举办采茶会。")
    # not a word yet: both match only "采茶", alike
    (_, first), (_, second) = _scores(ds, "采茶节")
    assert first == second
    words.write_text("青山茶园 10\n采茶节 10\n", encoding="utf-8")
    assert ds.rebuild_keywords() == 2
    (best, first), (_, second) = _scores(ds, "采茶节")
    assert best == "青山茶园每年举办采茶节。" and first > second


def test_rebuild_stops_between_batches(kb: KnowledgeBase) -> None:
    ds = kb.create_dataset("many", retrieval=KEEP_ALL)
    _add(ds, *(f"第{i}段文字讲述茶叶种植。" for i in range(5)))
    progress: list[int] = []
    stop = lambda: bool(progress)  # noqa: E731 - after the first batch
    assert ds.rebuild_keywords(batch_size=2, should_stop=stop, on_progress=progress.append) == 2
    assert progress == [2]
    assert _keyword_hits(ds, "茶叶种植")


def test_a_search_follows_an_edited_user_dictionary(kb: KnowledgeBase, tmp_path: Path) -> None:
    words = tmp_path / "words.txt"
    words.write_text("青山茶园 10\n", encoding="utf-8")
    ds = kb.create_dataset("follow", user_dict=words, retrieval=KEEP_ALL)
    _add(ds, "青山茶园每年举办采茶节。")
    index = kb._context.index(ds.id)  # noqa: SLF001 - the serving process's open index
    before = index.keywords.tokenizer
    words.write_text("青山茶园 10\n采茶节 10\n", encoding="utf-8")
    os.utime(words, (words.stat().st_atime, words.stat().st_mtime + 5))
    _keyword_hits(ds, "采茶节")
    assert index.keywords.tokenizer is not before
    assert "采茶节" in index.keywords.tokenizer.tokenize("举办采茶节")


def _full_text(ds: Dataset, query: str) -> list[tuple[str, float]]:
    hits = ds.search(query, search_method="full_text_search", top_k=5)
    return [(hit.content, round(hit.scores["full_text"], 6)) for hit in hits]


def test_rebuild_retokenizes_the_full_text_records(kb: KnowledgeBase, tmp_path: Path) -> None:
    """After the rebuild, BM25 holds the new dictionary's words: a search for one scores as in a
    dataset built with that dictionary, in this process and in one opened afterwards."""
    texts = ("青山茶园每年举办采茶节。", "山下小镇只有茶叶市场。")
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_text("青山茶园 10\n", encoding="utf-8")
    new.write_text("青山茶园 10\n采茶节 10\n", encoding="utf-8")
    fresh = kb.create_dataset("fresh", user_dict=new, retrieval=KEEP_ALL)
    _add(fresh, *texts)
    expected = _full_text(fresh, "采茶节")
    assert expected and expected[0][0] == texts[0]

    words = tmp_path / "words.txt"
    words.write_text(old.read_text(encoding="utf-8"), encoding="utf-8")
    ds = kb.create_dataset("garden", user_dict=words, retrieval=KEEP_ALL)
    _add(ds, *texts)
    words.write_text(new.read_text(encoding="utf-8"), encoding="utf-8")
    ds.rebuild_keywords()
    assert _full_text(ds, "采茶节") == expected
    assert [content for content, _ in _full_text(ds, "采茶节")] == _keyword_hits(ds, "采茶节")

    home = kb.settings.home
    kb.close()
    with KnowledgeBase.open(home, embedding_model="use") as reopened:
        assert _full_text(reopened.dataset("garden"), "采茶节") == expected


def test_a_rebuild_extracts_again_the_keywords_no_user_gave(kb: KnowledgeBase, tmp_path: Path) -> None:
    """Extracted keywords differ from the new dictionary's extraction: the rebuild once took
    that for a user's edit, kept the old words and weighted them as given."""
    texts = ("青山茶园每年举办采茶节。", "山下小镇只有茶叶市场。")
    new = tmp_path / "new.txt"
    new.write_text("青山茶园 10\n采茶节 10\n", encoding="utf-8")
    fresh = kb.create_dataset("fresh", user_dict=new, retrieval=KEEP_ALL)
    fresh_segments = fresh.segments(_add(fresh, *texts))

    words = tmp_path / "words.txt"
    words.write_text("青山茶园 10\n", encoding="utf-8")
    ds = kb.create_dataset("garden", user_dict=words, retrieval=KEEP_ALL)
    document_id = _add(ds, *texts)
    edited = ds.segments(document_id)[1]
    ds.segment_editor().update(document_id, edited.id, keywords=["小镇", "市场"])
    words.write_text(new.read_text(encoding="utf-8"), encoding="utf-8")
    ds.rebuild_keywords()

    extracted, given = ds.segments(document_id)
    assert "采茶节" in extracted.keywords and extracted.keywords == fresh_segments[0].keywords
    assert _scores(ds, "采茶节") == _scores(fresh, "采茶节")  # weighted as extracted, not given
    assert given.keywords == ["小镇", "市场"]


def test_keywords_a_user_set_stay_given_even_when_extraction_shows_the_same(kb: KnowledgeBase) -> None:
    """Keywords edited to exactly what extraction shows were taken for extracted ones by the
    rebuild, and lost the weight of given keywords."""
    ds = kb.create_dataset("same", retrieval=KEEP_ALL)
    document_id = _add(ds, "乌龙茶香气浓郁，乌龙茶产自福建。", "绿茶产自杭州西湖，清香淡雅。")
    segment = ds.segments(document_id)[0]
    before = _scores(ds, "乌龙茶")
    ds.segment_editor().update(document_id, segment.id, keywords=list(segment.keywords))
    edited = _scores(ds, "乌龙茶")
    assert edited[0][1] > before[0][1]  # given keywords weigh more
    ds.rebuild_keywords()
    assert _scores(ds, "乌龙茶") == edited


def test_rows_from_before_the_flag_are_judged_as_they_were(kb: KnowledgeBase) -> None:
    """A segment row written before migration 0013 says nothing (NULL): keywords that differ
    from what extraction shows are taken as given, as the rebuild always did."""
    ds = kb.create_dataset("older", retrieval=KEEP_ALL)
    document_id = _add(ds, "乌龙茶香气浓郁，乌龙茶产自福建。", "绿茶产自杭州西湖，清香淡雅。")
    edited = ds.segments(document_id)[1]
    ds.segment_editor().update(document_id, edited.id, keywords=["龙井", "西湖"])
    with kb._context.sessions.begin() as session:  # noqa: SLF001 - as an older release left it
        session.execute(update(SegmentRow).values(keywords_given=None))
    ds.rebuild_keywords()
    assert ds.segments(document_id)[1].keywords == ["龙井", "西湖"]
    assert _keyword_hits(ds, "龙井")[0] == edited.content
