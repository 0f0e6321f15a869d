"""jieba keyword store: extracted keywords and postings, scored and bounded search, per-dataset
isolation, deletes."""

from __future__ import annotations

from pathlib import Path

from pytest import MonkeyPatch
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db import DatasetRow, DocumentRow, SegmentRow, make_engine, make_session_factory
from zhiku.datasource.keyword import KeywordExtractor, KeywordStore, extract_keywords
from zhiku.datasource.keyword import store as keyword_store
from zhiku.text.keywords import BUDGET_MAX, LANGUAGE_MIN, idf
from zhiku.text.tokenizer import Tokenizer

TEXTS = {
    "s1": "铁观音是产自福建安溪的乌龙茶，香气浓郁。",
    "s2": "龙井是产自杭州西湖的绿茶。",
    "s3": "普洱茶产自云南，适合长期存放。Pu-erh tea ages well.",
}


def _sessions(tmp_path: Path) -> sessionmaker[Session]:
    sessions = make_session_factory(make_engine(f"sqlite:///{tmp_path / 'k.db'}"))
    with sessions.begin() as session:
        for dataset_id in ("d1", "d2"):
            session.add(DatasetRow(id=dataset_id, name=dataset_id, embedding_model="x", embedding_dim=1))
    return sessions


def _store(sessions: sessionmaker[Session], dataset_id: str, texts: dict[str, str]) -> KeywordStore:
    tokenizer = Tokenizer()
    store = KeywordStore(sessions, dataset_id, tokenizer)
    extractor = KeywordExtractor(tokenizer, top_n=10)
    with sessions.begin() as session:
        session.add(DocumentRow(id=f"{dataset_id}-doc", dataset_id=dataset_id, name="doc"))
        session.flush()
        for position, (key, text) in enumerate(texts.items()):
            session.add(
                SegmentRow(
                    id=f"{dataset_id}-{key}",
                    dataset_id=dataset_id,
                    document_id=f"{dataset_id}-doc",
                    position=position,
                    content=text,
                    hash="",
                )
            )
        session.flush()
        store.add(session, [(f"{dataset_id}-{key}", extractor(text)) for key, text in texts.items()])
    return store


def test_keywords_are_tf_idf_ranked_and_skip_single_characters() -> None:
    keywords = extract_keywords(["安溪", "安溪", "茶", "乌龙茶", "香气"], top_n=2)
    assert [word for word, _ in keywords][0] == "安溪"
    assert all(len(word) >= 2 for word, _ in keywords) and len(keywords) == 2
    assert keywords[0][1] == 2 / 5 * idf("安溪")


def test_search_is_scored_and_isolated_per_dataset(tmp_path: Path) -> None:
    sessions = _sessions(tmp_path)
    store = _store(sessions, "d1", TEXTS)
    other = _store(sessions, "d2", {"s9": "安溪铁观音乌龙茶"})
    hits = store.search("安溪的铁观音", limit=5)
    assert hits[0][0] == "d1-s1" and hits[0][1] > 0
    assert all(segment_id.startswith("d1-") for segment_id, _ in hits)
    assert [segment_id for segment_id, _ in other.search("安溪", 5)] == ["d2-s9"]
    assert store.search("pu-erh ages", 5)[0][0] == "d1-s3"
    scores = [score for _, score in store.search("产自 茶", 5)]
    assert scores == sorted(scores, reverse=True)
    assert store.search("", 5) == [] and store.search("。，！", 5) == []


def test_deleted_segments_leave_the_postings(tmp_path: Path) -> None:
    sessions = _sessions(tmp_path)
    store = _store(sessions, "d1", TEXTS)
    assert store.count() == 3
    with sessions.begin() as session:
        store.delete_segments(session, ["d1-s1"])
    assert store.count() == 2
    assert all(segment_id != "d1-s1" for segment_id, _ in store.search("安溪铁观音", 5))


def test_two_character_words_and_search_mode_sub_words_are_found(tmp_path: Path) -> None:
    sessions = _sessions(tmp_path)
    texts = {
        "s1": "员工每年享有带薪年假十天，病假另计。",
        "s2": "公司年会在十二月举行，全体员工参加。",
        "s3": "中华人民共和国成立于一九四九年。",
    }
    store = _store(sessions, "d1", texts)
    assert store.search("年假有几天？", 5)[0][0] == "d1-s1"
    # "共和国" is a search-mode sub-word of "中华人民共和国"
    assert store.search("共和国", 5)[0][0] == "d1-s3"


def test_postings_follow_the_length_and_keep_each_language() -> None:
    extractor = KeywordExtractor(Tokenizer())
    short = extractor("铁观音是乌龙茶。")
    english = " ".join(f"term{i} common{i} other{i}" for i in range(60))
    mixed = extractor("安溪铁观音香气浓郁，" + english)
    long = extractor(english)
    assert len(short) < len(long) == BUDGET_MAX
    assert len(mixed) <= BUDGET_MAX
    # 180 English words do not crowd out the few Chinese ones
    assert len({word for word, _ in mixed if not word.isascii()}) >= LANGUAGE_MIN
    assert len({word for word, _ in mixed if word.isascii()}) >= LANGUAGE_MIN


def test_a_given_keyword_outranks_the_same_word_extracted(tmp_path: Path) -> None:
    sessions = _sessions(tmp_path)
    tokenizer = Tokenizer()
    extractor = KeywordExtractor(tokenizer)
    store = _store(sessions, "d1", {"s1": "乌龙茶 乌龙茶 乌龙茶 产自福建。", "s2": "绿茶产自杭州。"})
    with sessions.begin() as session:
        store.delete_segments(session, ["d1-s2"])
        given = extractor.with_given(["乌龙茶"], tokenizer.tokenize("绿茶产自杭州。"))
        store.add(session, [("d1-s2", given)])
    assert [segment_id for segment_id, _ in store.search("乌龙茶", 5)] == ["d1-s2", "d1-s1"]


def test_a_query_reads_a_bounded_number_of_postings(tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    sessions = _sessions(tmp_path)
    texts = {f"s{i}": f"common 词语 rare{i}" for i in range(30)}
    store = _store(sessions, "d1", texts)
    monkeypatch.setattr(keyword_store, "POSTINGS_PER_WORD", 5)
    monkeypatch.setattr(keyword_store, "MAX_QUERY_WORDS", 1)
    assert len(store.search("common", 100)) == 5
    assert len(store.search("rare3 rare7", 100)) == 1  # one word searched of two
