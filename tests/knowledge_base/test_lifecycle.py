"""A document's run can be stopped in any stage, is bounded in time, resumes from its last
embedded batch, and ingesting the same content again makes no duplicate."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import zhiku.benchmarking  # noqa: F401 - registers the fast "synthetic" embedding model
from tests.fixtures.make_files import make_noise_docx, make_text
from tests.knowledge_base.slow_embedding import paragraphs, register
from zhiku import KnowledgeBase
from zhiku.core.document_status import DocumentStatus
from zhiku.core.errors import ConfigError, NotFound
from zhiku.providers.embedding.cache import CACHE_BATCH

ROOT = Path(__file__).resolve().parents[2]
SHORT_CHUNKS = {"max_tokens": 32, "chunk_overlap": 0}


@pytest.fixture(autouse=True)
def _slow_model() -> None:
    register()


def _slow_dataset(kb: KnowledgeBase, name: str, delay: float, log: Path | None = None) -> object:
    options: dict[str, object] = {"delay": delay}
    if log is not None:
        options["log"] = str(log)
    return kb.create_dataset(
        name, embedding_model="slow-counting", embedding_options=options, process_rule=SHORT_CHUNKS
    )


def _wait_for(condition: object, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached")


@pytest.mark.parametrize("action", ["pause", "delete"])
def test_pause_or_delete_stops_a_document_while_it_embeds(tmp_path: Path, action: str) -> None:
    """400 chunks at 20 ms each would take 8 s; the stop lands within one cached batch."""
    with KnowledgeBase.open(tmp_path / "home") as kb:
        ds = _slow_dataset(kb, "slow", delay=0.02)
        source = make_text(tmp_path / "long.txt", paragraphs(400))
        outcome: list[object] = []

        def ingest() -> None:
            try:
                outcome.append(ds.add_file(source))  # type: ignore[attr-defined]
            except NotFound as exc:  # deleted while it was ingested
                outcome.append(exc)

        thread = threading.Thread(target=ingest)
        thread.start()
        _wait_for(lambda: any(d.status == "indexing" for d in ds.documents()))  # type: ignore[attr-defined]
        document = ds.documents()[0]  # type: ignore[attr-defined]
        stopped_at = time.monotonic()
        if action == "pause":
            assert kb.states.move(document.id, DocumentStatus.PAUSED)
        else:
            ds.delete_document(document.id)  # type: ignore[attr-defined]
        thread.join(30)
        assert not thread.is_alive()
        assert time.monotonic() - stopped_at < 5  # one batch of 64 at 20 ms, plus slack
        if action == "pause":
            assert ds.document(document.id).status == "paused"  # type: ignore[attr-defined]
            assert outcome[0].status == "paused"  # type: ignore[attr-defined]
        else:
            assert ds.documents() == []  # type: ignore[attr-defined]
            assert isinstance(outcome[0], NotFound)
        assert ds.segments() == []  # type: ignore[attr-defined]
        index = kb.dataset_index(ds.id)  # type: ignore[attr-defined]
        assert index.vector.count() == 0 and index.fulltext.count() == 0


def test_time_limit_ends_a_runaway_document_and_a_retry_resumes(tmp_path: Path) -> None:
    from tests.knowledge_base.slow_embedding import SlowCountingEmbedding

    home = tmp_path / "home"
    source = make_text(tmp_path / "long.txt", paragraphs(300))
    with KnowledgeBase.open(home, document_time_limit=1.5) as kb:
        ds = _slow_dataset(kb, "slow", delay=0.01)
        before = SlowCountingEmbedding.embedded
        info = ds.add_file(source)  # type: ignore[attr-defined]
        assert info.status == "error"
        assert "time limit at indexing" in info.error and "document_time_limit" in info.error
        first = SlowCountingEmbedding.embedded - before
        assert 0 < first < 300
    with KnowledgeBase.open(home) as kb:
        ds = kb.dataset("slow")
        before = SlowCountingEmbedding.embedded
        info = ds.add_file(source)  # the same content: the failed document is indexed again
        assert info.status == "completed" and info.duplicate == "replaced"
        assert len(ds.documents()) == 1
        again = SlowCountingEmbedding.embedded - before
        assert again <= 300 - first + CACHE_BATCH  # resumed from the cached batches


def test_a_killed_ingest_resumes_from_its_last_embedded_batch(tmp_path: Path) -> None:
    """A 2,000-chunk document is killed while embedding; the next run embeds only what was not
    cached yet (at most one batch again)."""
    home, log = tmp_path / "home", tmp_path / "embedded.log"
    source = make_text(tmp_path / "long.txt", paragraphs(2000))
    with KnowledgeBase.open(home) as kb:
        _slow_dataset(kb, "big", delay=0.002, log=log)
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.knowledge_base.embed_child", str(home), "big", str(source)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        _wait_for(lambda: log.exists() and len(log.read_text().splitlines()) >= 700, 120)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    embedded_before_kill = len(log.read_text().splitlines())
    assert embedded_before_kill < 2000
    with KnowledgeBase.open(home) as kb:
        ds = kb.dataset("big")
        (interrupted,) = ds.documents()
        assert interrupted.status == "error" and "interrupted" in (interrupted.error or "")
        info = ds.retry_document(interrupted.id)
        assert info.status == "completed" and info.segment_count == 2000
    embedded_again = len(log.read_text().splitlines()) - embedded_before_kill
    assert embedded_again <= 2000 - embedded_before_kill + CACHE_BATCH, (embedded_before_kill, embedded_again)


def test_ingesting_the_same_content_twice_makes_one_document(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="synthetic") as kb:
        ds = kb.create_dataset("dup")
        path = make_text(tmp_path / "a.txt", "Longjing is a green tea from Hangzhou.")
        first = ds.add_file(path)
        second = ds.add_file(path)
        assert second.id == first.id and second.duplicate == "skipped"
        copy = make_text(tmp_path / "copy.txt", "Longjing is a green tea from Hangzhou.")
        assert ds.add_files([copy, copy])[1].duplicate == "skipped"
        assert len(ds.documents()) == 1
        hits = ds.search("Longjing green tea", search_method="full_text_search", top_k=5)
        assert len(hits) == 1
        replaced = ds.add_file(path, on_duplicate="replace")
        assert replaced.id == first.id and replaced.duplicate == "replaced" and replaced.status == "completed"
        kept = ds.add_file(path, on_duplicate="keep")
        assert kept.id != first.id and kept.duplicate is None
        assert len(ds.documents()) == 2


def test_sync_mirrors_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    make_text(folder / "a.txt", "Alpha tea grows on the eastern hills.")
    make_text(folder / "b.txt", "Beta tea is picked in spring.")
    (folder / "sub").mkdir()
    make_text(folder / "sub" / "c.txt", "Gamma tea is smoked over pine.")
    with KnowledgeBase.open(tmp_path / "home", embedding_model="synthetic") as kb:
        ds = kb.create_dataset("mirror")
        report = ds.sync_folder(folder)
        assert len(report.added) == 3 and not report.updated and not report.deleted
        make_text(folder / "b.txt", "Beta tea is now picked in autumn.")
        (folder / "sub" / "c.txt").unlink()
        make_text(folder / "d.txt", "Delta tea is rolled into pearls.")
        report = ds.sync_folder(folder)
        assert [info.name for info in report.added] == ["d.txt"]
        assert [info.name for info in report.updated] == ["b.txt"]
        assert [Path(p).name for p in report.deleted] == ["c.txt"]
        assert len(report.unchanged) == 1
        assert sorted(d.name for d in ds.documents()) == ["a.txt", "b.txt", "d.txt"]
        assert ds.search("autumn", search_method="full_text_search")[0].document_name == "b.txt"
        assert ds.search("spring", search_method="full_text_search") == []
        assert ds.search("smoked pine", search_method="full_text_search") == []
        report = ds.sync_folder(folder)
        assert not (report.added or report.updated or report.deleted) and len(report.unchanged) == 3


def test_a_dataset_with_an_unknown_doc_form_is_refused_up_front(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="synthetic") as kb:
        with pytest.raises(ConfigError, match="parent_child"):
            kb.create_dataset("pc", process_rule={"doc_form": "parent_child"})
        with pytest.raises(ConfigError, match="no_such_cleaner"):
            kb.create_dataset("cl", process_rule={"cleaners": ["no_such_cleaner"]})
        assert kb.datasets() == []


def test_a_runaway_docx_ends_at_the_time_limit_while_it_is_parsed(tmp_path: Path) -> None:
    """A few KB of empty paragraphs once parsed for minutes, past pause and delete: extraction
    now checks between paragraphs, so the time limit ends it, naming the stage. (Empty
    paragraphs are now refused as a zip bomb before parsing: random text compresses like a
    real document and still takes seconds.)"""
    source = make_noise_docx(tmp_path / "noise.docx", 200_000)  # 600,000 elements: limit raised
    home = tmp_path / "home"
    with KnowledgeBase.open(
        home, embedding_model="synthetic", document_time_limit=1.0, parse_max_elements=10_000_000
    ) as kb:
        ds = kb.create_dataset("runaway")
        started = time.monotonic()
        info = ds.add_file(source)
        elapsed = time.monotonic() - started
        assert info.status == "error" and "time limit at parsing" in (info.error or ""), info.error
        assert elapsed < 10, elapsed  # parsing it whole takes about 20 s
        assert ds.search("anything") == []
