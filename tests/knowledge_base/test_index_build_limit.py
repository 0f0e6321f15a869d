"""The embedded stores' index build has a time limit of its own (setting
``index_build_time_limit``): past it the build process is killed, the error says so, and the
dataset goes on answering from its previous index and taking writes."""

from __future__ import annotations

from pathlib import Path

import pytest

import zhiku.benchmarking  # noqa: F401 - registers the fast "synthetic" embedding model
from zhiku import KnowledgeBase
from zhiku.core.errors import StoreError
from zhiku.datasource.points import edge

TEXT = "明前龙井在清明前采摘，滋味鲜爽。"


def test_a_build_past_the_setting_is_killed_and_the_old_index_serves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(edge, "CHILD_BUILD_MIN_POINTS", 0)  # build even a few points in a child
    home = tmp_path / "home"
    with KnowledgeBase.open(home, embedding_model="synthetic", index_build_time_limit=0.001) as kb:
        ds = kb.create_dataset("limited")
        kept = ds.add_text("longjing.md", TEXT)
        with pytest.raises(StoreError) as caught:
            ds.optimize()
        message = str(caught.value)
        assert "ran over 0.001 s and was killed" in message, message
        assert "previous index" in message and "index_build_time_limit" in message, message
        assert ds.search("明前龙井", search_method="full_text_search")[0].document_id == kept.id
        assert ds.search(TEXT, search_method="semantic_search")[0].document_id == kept.id
        added = ds.add_text("puer.md", "普洱茶越陈越香。")  # writes are not held up
        assert added.status == "completed", added.error
    assert not list(home.rglob("*.build")), "the killed build's copy was left behind"


def test_without_the_setting_the_build_runs_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(edge, "CHILD_BUILD_MIN_POINTS", 0)
    with KnowledgeBase.open(tmp_path / "home", embedding_model="synthetic") as kb:
        ds = kb.create_dataset("unlimited")
        kept = ds.add_text("longjing.md", TEXT)
        ds.optimize()
        assert ds.search("明前龙井", search_method="full_text_search")[0].document_id == kept.id
