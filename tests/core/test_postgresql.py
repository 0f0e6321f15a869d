"""The PostgreSQL run really uses PostgreSQL: a knowledge base opened the way the other tests
open theirs gets a fresh schema, indexes and searches there, and leaves no SQLite file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sqlalchemy import text

from zhiku import KnowledgeBase

pytestmark = [
    pytest.mark.reliability,
    pytest.mark.skipif(
        not os.environ.get("ZHIKU_TEST_DATABASE_URL"),
        reason="set ZHIKU_TEST_DATABASE_URL to a PostgreSQL URL",
    ),
]


def test_knowledge_base_runs_on_postgresql(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        with kb.sessions() as session:
            assert session.get_bind().dialect.name == "postgresql"
            assert session.execute(text("SELECT count(*) FROM datasets")).scalar() == 0
        dataset = kb.create_dataset("tea", description="茶")
        assert (
            dataset.add_text("tea.txt", "龙井是产自杭州西湖的绿茶。Oolong is rolled.").status == "completed"
        )
        for method in ("semantic_search", "full_text_search", "keyword_search"):
            assert dataset.search("杭州的绿茶", search_method=method, top_k=1), method
    assert not (tmp_path / "home" / "zhiku.db").exists()
