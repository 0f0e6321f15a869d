"""An indexing worker's parse runs in a child process: deleting or pausing the document, or
stopping the workers, kills it during a single long library call (a page BeautifulSoup builds
for many seconds, a workbook openpyxl loads), and a child that dies gives the document an error.

Each hostile file takes many seconds to parse, and a finished parse leaves its child alive for
the next document: a child gone before :data:`GUARD` was killed. The guard only keeps a broken
build from hanging; nothing asserts on timing."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.extractors.test_parse_process import GUARD, gone, slow_html, wait_for
from zhiku import KnowledgeBase
from zhiku.core.document_status import DocumentStatus
from zhiku.core.errors import NotFound
from zhiku.extractors.parse_process import child_pids
from zhiku.knowledge_base.dataset import Dataset
from zhiku.knowledge_base.runtime.jobs import IndexingQueue, new_batch
from zhiku.knowledge_base.runtime.uploads import open_uploads
from zhiku.knowledge_base.runtime.workers import IndexingWorkers

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads /proc")


def slow_xlsx(path: Path, rows: int = 20_000) -> bytes:
    """A workbook openpyxl loads in one call of many seconds."""
    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("cells")
    for row in range(rows):
        sheet.append([f"r{row}c{column}" for column in range(16)])
    book.save(str(path))
    return path.read_bytes()


class Parsing:
    """One worker parsing one queued file, and the pid of its parsing child."""

    def __init__(self, kb: KnowledgeBase, name: str, content: bytes) -> None:
        self.kb = kb
        self.dataset: Dataset = kb.create_dataset("tea")
        self.jobs = IndexingQueue(kb.sessions, open_uploads(kb.settings, kb.sessions))
        self.workers = IndexingWorkers(kb, self.jobs, 1, poll_seconds=0.05)
        self.document_id = self.jobs.enqueue(
            self.dataset.id, name, content, file_name=name, batch=new_batch()
        )
        before = set(child_pids().values())
        self.workers.start()
        assert wait_for(lambda: bool(set(child_pids().values()) - before))
        (self.child,) = set(child_pids().values()) - before
        assert wait_for(lambda: self.status() == DocumentStatus.PARSING)

    def status(self) -> DocumentStatus | None:
        return self.kb.states.status(self.document_id)


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[KnowledgeBase]:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use", parse_time_limit=600) as opened:
        yield opened


def test_delete_kills_the_parse_of_a_hostile_page(kb: KnowledgeBase) -> None:
    run = Parsing(kb, "slow.html", slow_html())
    try:
        run.dataset.delete_document(run.document_id)
        assert wait_for(lambda: gone(run.child))
    finally:
        assert run.workers.stop(GUARD)
    with pytest.raises(NotFound):
        run.dataset.document(run.document_id)


def test_pause_kills_the_parse_of_a_hostile_workbook(kb: KnowledgeBase, tmp_path: Path) -> None:
    run = Parsing(kb, "slow.xlsx", slow_xlsx(tmp_path / "slow.xlsx"))
    try:
        run.jobs.pause(run.dataset.id, run.document_id)
        assert wait_for(lambda: gone(run.child))
    finally:
        assert run.workers.stop(GUARD)
    assert run.status() == DocumentStatus.PAUSED


def test_stopping_the_workers_kills_the_parse_and_queues_the_document_again(kb: KnowledgeBase) -> None:
    run = Parsing(kb, "slow.html", slow_html())
    assert run.workers.stop(GUARD)
    assert gone(run.child)
    assert run.status() == DocumentStatus.WAITING


def test_a_child_killed_from_outside_fails_the_document_with_the_reason(kb: KnowledgeBase) -> None:
    run = Parsing(kb, "slow.html", slow_html())
    try:
        os.kill(run.child, signal.SIGKILL)
        assert wait_for(lambda: run.status() == DocumentStatus.ERROR)
    finally:
        assert run.workers.stop(GUARD)
    error = run.dataset.document(run.document_id).error or ""
    assert "slow.html" in error and "parsing process ended unexpectedly (killed by SIGKILL)" in error
