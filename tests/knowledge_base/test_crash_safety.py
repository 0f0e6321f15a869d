"""A failure between the store writes and the database commit never serves a half-indexed document."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import update

from tests.fixtures.make_files import make_text
from zhiku import KnowledgeBase
from zhiku.core.db import DocumentRow


def test_store_failure_marks_error_and_leaves_nothing_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        ds = kb.create_dataset("crash")
        ok = ds.add_file(make_text(tmp_path / "ok.txt", "Longjing is a green tea from Hangzhou."))
        index = kb._index(ds.id)

        def broken_upsert(records: object) -> None:
            raise OSError("disk full")

        monkeypatch.setattr(index.fulltext, "upsert", broken_upsert)
        bad = ds.add_file(make_text(tmp_path / "bad.txt", "Tieguanyin is an oolong from Anxi."))
        monkeypatch.undo()

        assert bad.status == "error" and "disk full" in (bad.error or "")
        assert ds.segments(bad.id) == []
        hits = ds.search("Tieguanyin oolong Anxi", search_method="semantic_search", top_k=5)
        assert all(hit.document_id == ok.id for hit in hits)
        orphan_ids = index.vector.ids() - {s.id for s in ds.segments()}
        assert orphan_ids  # the vector store got the points before the failure ...
        assert index.sweep_orphans() == len(orphan_ids)  # ... and the sweep removes them
        assert index.vector.ids() == {s.id for s in ds.segments()}


def test_documents_interrupted_mid_ingest_are_marked_error_on_open(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        ds = kb.create_dataset("interrupted")
        doc = ds.add_file(make_text(tmp_path / "a.txt", "Dragon well tea."))
        with kb.sessions.begin() as session:
            row = session.get(DocumentRow, doc.id)
            assert row is not None
            row.status = "indexing"
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        info = kb.dataset("interrupted").document(doc.id)
        assert info.status == "error"
        assert "interrupted during indexing" in (info.error or "")


def test_only_the_owner_of_the_data_directory_recovers(tmp_path: Path) -> None:
    """A second process opening the directory (a CLI beside a server) must not fail the first's
    running documents; once the first is gone, the next opener recovers them."""
    home = tmp_path / "home"
    with KnowledgeBase.open(home, embedding_model="use") as owner:
        ds = owner.create_dataset("d")
        info = ds.add_text("a.txt", "running")
        with owner.sessions.begin() as session:
            session.execute(update(DocumentRow).where(DocumentRow.id == info.id).values(status="indexing"))
        with KnowledgeBase.open(home, embedding_model="use") as bystander:
            assert bystander.dataset("d").document(info.id).status == "indexing"
    with KnowledgeBase.open(home, embedding_model="use") as next_owner:
        assert next_owner.dataset("d").document(info.id).status == "error"
