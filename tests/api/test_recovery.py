"""After a crash, queued documents with a stored upload go back to waiting; others end in error.
Stored file names are made safe."""

from __future__ import annotations

from pathlib import Path

from zhiku import KnowledgeBase
from zhiku.core.db import DocumentRow
from zhiku.knowledge_base.runtime.jobs import IndexingQueue
from zhiku.knowledge_base.runtime.uploads import Uploads, safe_filename


def test_interrupted_queued_documents_are_requeued(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        dataset = kb.create_dataset("crash")
        queue = IndexingQueue(kb.sessions, Uploads(home / "uploads"))
        kept = queue.enqueue(dataset.id, "kept", b"Longjing green tea.", file_name="kept.txt", batch="1")
        lost = queue.enqueue(dataset.id, "lost", b"Black tea.", file_name="lost.txt", batch="1")
        assert queue.claim() is not None and queue.claim() is not None
        with kb.sessions.begin() as session:
            for document_id in (kept, lost):
                row = session.get(DocumentRow, document_id)
                assert row is not None
                row.status = "indexing"
        queue.uploads.remove(lost)
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        dataset = kb.dataset("crash")
        assert dataset.document(kept).status == "waiting"
        assert dataset.document(lost).status == "error"
        queue = IndexingQueue(kb.sessions, Uploads(home / "uploads"))
        job = queue.claim()
        assert job is not None and job.document_id == kept
        assert dataset.index_waiting(kept).status == "completed"


def test_safe_filenames() -> None:
    assert safe_filename("../../etc/passwd") == "passwd"
    assert safe_filename("..\\..\\windows\\system.ini") == "system.ini"
    assert safe_filename("年度报告（终稿）.pdf") == "年度报告（终稿）.pdf"
    assert safe_filename("e\u0301t\u00e9.txt") == "\u00e9t\u00e9.txt"  # NFC
    assert safe_filename("a<b>:c|d?.txt") == "a_b__c_d_.txt"
    assert safe_filename("..") == safe_filename("") == "upload"
    assert safe_filename(".hidden") == "hidden"
    assert safe_filename("CON.txt") == "_CON.txt"
    long = safe_filename("长" * 300 + ".docx")
    assert long.endswith(".docx") and len(long.encode("utf-8")) <= 200
    assert safe_filename("tab\there\n.md") == "tab_here_.md"
