"""A failure between the store writes and the database commit never serves a half-indexed document."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import update

from tests.fixtures.make_files import make_text
from zhiku import KnowledgeBase
from zhiku.core.db import DocumentRow
from zhiku.core.errors import StoreBusy


def test_store_failure_marks_error_and_leaves_nothing_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        ds = kb.create_dataset("crash")
        ok = ds.add_file(make_text(tmp_path / "ok.txt", "Longjing is a green tea from Hangzhou."))
        index = kb.dataset_index(ds.id)

        def broken_upsert(records: object) -> None:
            raise OSError("disk full")

        monkeypatch.setattr(index.fulltext, "upsert", broken_upsert)
        bad = ds.add_file(make_text(tmp_path / "bad.txt", "Tieguanyin is an oolong from Anxi."))
        monkeypatch.undo()

        assert bad.status == "error" and "disk full" in (bad.error or "")
        assert ds.segments(bad.id) == []
        hits = ds.search("Tieguanyin oolong Anxi", search_method="semantic_search", top_k=5)
        assert all(hit.document_id == ok.id for hit in hits)
        # the vector store got the points before the failure; the failed write discarded them
        assert index.vector.ids() == {s.id for s in ds.segments()}
        assert index.sweep_orphans() == 0


def test_points_left_by_a_failed_discard_are_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        ds = kb.create_dataset("crash")
        ds.add_file(make_text(tmp_path / "ok.txt", "Longjing is a green tea from Hangzhou."))
        index = kb.dataset_index(ds.id)

        def broken(*_: object) -> None:
            raise OSError("disk full")

        monkeypatch.setattr(index.fulltext, "upsert", broken)
        monkeypatch.setattr(index.vector, "delete", broken)
        bad = ds.add_file(make_text(tmp_path / "bad.txt", "Tieguanyin is an oolong from Anxi."))
        monkeypatch.undo()
        assert bad.status == "error"
        orphan_ids = index.vector.ids() - {s.id for s in ds.segments()}
        assert orphan_ids  # invisible: no row points at them ...
        assert all(hit.document_id != bad.id for hit in ds.search("Tieguanyin oolong Anxi"))
        assert index.sweep_orphans() == len(orphan_ids)  # ... and the sweep removes them
        assert index.vector.ids() == {s.id for s in ds.segments()}


def test_documents_interrupted_mid_ingest_are_marked_error_on_open(tmp_path: Path) -> None:
    """A first ingest caught mid-way ends ``error``; a re-index caught mid-way goes back to the
    version it still serves, saying it was interrupted."""
    home = tmp_path / "home"
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        ds = kb.create_dataset("interrupted")
        doc = ds.add_file(make_text(tmp_path / "a.txt", "Dragon well tea."))
        new = ds.add_text("b.txt", "Silver needle white tea.")
        ds.delete_document(new.id)
        with kb.sessions.begin() as session:
            session.add(DocumentRow(id=new.id, dataset_id=ds.id, name="b.txt", status="splitting"))
            row = session.get(DocumentRow, doc.id)
            assert row is not None
            row.status = "indexing"
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        ds = kb.dataset("interrupted")
        info = ds.document(doc.id)
        assert info.status == "completed"
        assert "interrupted during indexing" in (info.error or "")
        assert ds.search("Dragon well", search_method="full_text_search")[0].document_id == doc.id
        fresh = ds.document(new.id)
        assert fresh.status == "error" and "interrupted during splitting" in (fresh.error or "")


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
            assert not bystander.owns_stores
            assert bystander.dataset("d").document(info.id).status == "indexing"
            with pytest.raises(StoreBusy):  # refused before any store file is opened
                bystander.dataset("d").search("running")
    with KnowledgeBase.open(home, embedding_model="use") as next_owner:
        recovered = next_owner.dataset("d").document(info.id)
        assert recovered.status == "completed" and "interrupted" in (recovered.error or "")
