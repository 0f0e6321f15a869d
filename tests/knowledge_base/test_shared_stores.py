"""Stores on PostgreSQL with pgvector are shared by every process: a process that does not hold
the data directory's owner lock (a second API process, a Celery worker) opens them too."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.pgvector import all_on_pgvector
from zhiku import KnowledgeBase


def test_a_process_without_the_owner_lock_searches_and_writes_pgvector_stores(
    tmp_path: Path, pgvector_url: str
) -> None:
    stores = {**all_on_pgvector(pgvector_url), "embedding_model": "use"}
    home = tmp_path / "home"
    with KnowledgeBase.open(home, **stores) as owner:
        first = owner.create_dataset("d").add_text("leave.txt", "Employees get fifteen days of annual leave.")
        with KnowledgeBase.open(home, **stores) as second:
            assert second.owns_stores
            dataset = second.dataset("d")
            assert [hit.document_id for hit in dataset.search("annual leave")] == [first.id]
            added = dataset.add_text("travel.txt", "Book flights through the travel portal.")
        hits = owner.dataset("d").search("travel portal flights", search_method="full_text_search")
        assert hits[0].document_id == added.id
