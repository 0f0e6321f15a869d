"""BM25 matches pairs of neighbouring Chinese characters in new datasets (see Tokenizer.terms)."""

from __future__ import annotations

from pathlib import Path

from zhiku import KnowledgeBase

#: These tests look at what a search may return (sections, filters, terms), not at relevance:
#: their datasets keep every hit.
KEEP_ALL = {"score_threshold": None}


def test_full_text_finds_a_passage_that_shares_only_character_pairs(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        pairs = kb.create_dataset("pairs", retrieval=KEEP_ALL)
        words = kb.create_dataset("words", han_bigrams=False, retrieval=KEEP_ALL)
        for ds in (pairs, words):
            ds.add_text("drugs.txt", "孕妇应在医生指导下服用药物。")
            ds.add_text("tea.txt", "绿茶用八十度的水冲泡，乌龙茶用沸水。")
        # "怎么用药" is cut 怎么 / 用药, the passage 服用 / 药物: no token in common, the pair 用药 is
        question = "怎么用药"
        assert [hit.document_name for hit in pairs.search(question, search_method="full_text_search")] == [
            "drugs.txt"
        ]
        assert words.search(question, search_method="full_text_search") == []
        assert pairs.tokenizer_settings["han_bigrams"] and not words.tokenizer_settings["han_bigrams"]
    with KnowledgeBase.open(tmp_path / "home") as kb:  # stored with the dataset: queries cut like its index
        assert len(kb.dataset("pairs").search(question, search_method="full_text_search")) == 1
        assert kb.dataset("words").search(question, search_method="full_text_search") == []
