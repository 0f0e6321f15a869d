"""A dataset's stemmer: plural folding for new datasets, kept with the dataset, none for old ones."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from zhiku import KnowledgeBase
from zhiku.core.db import DatasetRow
from zhiku.core.errors import InvalidInput

TEXTS = {
    "lab.txt": "The cells were counted after three studies of the culture.",
    "tea.txt": "Green tea is brewed at eighty degrees for two minutes.",
}


def _names(hits) -> list[str]:  # type: ignore[no-untyped-def]
    return [hit.document_name for hit in hits]


def test_a_new_dataset_folds_plurals_for_bm25_and_keywords(kb: KnowledgeBase) -> None:
    ds = kb.create_dataset("stemmed")
    for name, text in TEXTS.items():
        ds.add_text(name, text)
    for method in ("full_text_search", "keyword_search"):
        assert _names(ds.search("cell study", search_method=method, top_k=1)) == ["lab.txt"], method
    index = kb.dataset_index(ds.id)
    assert index.tokenizer.settings()["stemmer"] == "plural"


def test_an_unstemmed_dataset_matches_words_as_written(kb: KnowledgeBase) -> None:
    ds = kb.create_dataset("as-written", stemmer=None)
    for name, text in TEXTS.items():
        ds.add_text(name, text)
    assert ds.search("cell study", search_method="full_text_search") == []
    assert _names(ds.search("cells studies", search_method="full_text_search", top_k=1)) == ["lab.txt"]


def test_a_dataset_from_before_stemmers_keeps_its_tokens(kb: KnowledgeBase) -> None:
    ds = kb.create_dataset("older")
    with kb.sessions.begin() as session:  # as stored by a version without stemmers
        session.execute(update(DatasetRow).where(DatasetRow.id == ds.id).values(tokenizer_settings={}))
    assert kb.dataset_index(ds.id).tokenizer.stemmer is None


def test_snowball_on_request_and_unknown_names_refused(kb: KnowledgeBase) -> None:
    ds = kb.create_dataset("snowball", stemmer="english")
    ds.add_text("lab.txt", "Infected cells were isolated.")
    assert _names(ds.search("infection", search_method="full_text_search")) == ["lab.txt"]
    with pytest.raises(InvalidInput, match="unknown stemmer 'latin'"):
        kb.create_dataset("bad", stemmer="latin")
