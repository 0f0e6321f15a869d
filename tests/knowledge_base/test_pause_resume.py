"""Pause then resume while a worker embeds a document: the old run stops at its next checkpoint
(between two small embedding batches) and a new run indexes the document, so no batch is ever
embedded while the document reads ``waiting`` or ``paused``.

The embedding model blocks at each batch until the test lets it go, so every step is ordered by
the test, not by timing."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from tests.knowledge_base.slow_embedding import paragraphs
from zhiku import KnowledgeBase
from zhiku.benchmarking.synthetic import SyntheticEmbedding
from zhiku.core.document_status import DocumentStatus
from zhiku.knowledge_base.runtime.jobs import IndexingQueue, new_batch
from zhiku.knowledge_base.runtime.uploads import open_uploads
from zhiku.knowledge_base.runtime.workers import IndexingWorkers
from zhiku.providers.embedding import ProgressCallback, embedding_models
from zhiku.providers.embedding.cache import CACHE_BATCH

HANG_GUARD = 30.0


class GatedEmbedding:
    """The synthetic model, one batch at a time: each call says it arrived, with the status its
    document had then, and waits until the test lets it go on."""

    arrivals: queue.Queue[str] = queue.Queue()
    proceed: queue.Queue[None] = queue.Queue()
    observe: Callable[[], str] = staticmethod(lambda: "")
    sizes: list[int] = []

    def __init__(self) -> None:
        self._model = SyntheticEmbedding()
        self.name = "gated"
        self.dim = self._model.dim

    def embed_documents(
        self, texts: Sequence[str], *, on_progress: ProgressCallback | None = None
    ) -> np.ndarray:
        GatedEmbedding.sizes.append(len(texts))
        GatedEmbedding.arrivals.put(GatedEmbedding.observe())
        GatedEmbedding.proceed.get(timeout=HANG_GUARD)
        return self._model.embed_documents(texts, on_progress=on_progress)

    def embed_query(self, text: str) -> np.ndarray:
        return self._model.embed_query(text)


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[KnowledgeBase]:
    if "gated" not in embedding_models.names():
        embedding_models.add("gated", GatedEmbedding)
    GatedEmbedding.arrivals = queue.Queue()
    GatedEmbedding.proceed = queue.Queue()
    GatedEmbedding.sizes = []
    with KnowledgeBase.open(tmp_path / "home") as opened:
        yield opened


def test_pause_then_resume_mid_embedding_never_embeds_while_waiting(kb: KnowledgeBase) -> None:
    dataset = kb.create_dataset(
        "tea", embedding_model="gated", process_rule={"max_tokens": 32, "chunk_overlap": 0}
    )
    jobs = IndexingQueue(kb.sessions, open_uploads(kb.settings, kb.sessions))
    workers = IndexingWorkers(kb, jobs, 1, poll_seconds=0.05)
    text = paragraphs(CACHE_BATCH * 3).encode()
    document_id = jobs.enqueue(dataset.id, "notes", text, file_name="notes.txt", batch=new_batch())
    GatedEmbedding.observe = staticmethod(lambda: str(kb.states.status(document_id)))
    seen: list[str] = []
    workers.start()
    try:
        seen.append(GatedEmbedding.arrivals.get(timeout=HANG_GUARD))  # the first batch is running
        jobs.pause(dataset.id, document_id)
        assert kb.states.status(document_id) == DocumentStatus.PAUSED
        jobs.resume(dataset.id, document_id)
        assert kb.states.status(document_id) == DocumentStatus.WAITING
        GatedEmbedding.proceed.put(None)  # the old run ends its batch and stops there
        while kb.states.status(document_id) not in (DocumentStatus.COMPLETED, DocumentStatus.ERROR):
            try:
                seen.append(GatedEmbedding.arrivals.get(timeout=0.05))
            except queue.Empty:
                continue
            GatedEmbedding.proceed.put(None)
    finally:
        for _ in range(10):
            GatedEmbedding.proceed.put(None)  # never leave a worker blocked
        assert workers.stop(HANG_GUARD)
    assert kb.states.status(document_id) == DocumentStatus.COMPLETED
    # every batch ran while the document read "indexing": none for a waiting (or paused) one
    assert seen and set(seen) == {str(DocumentStatus.INDEXING)}, seen
    # the first batch was cached: the new run embedded only the rest, in small batches
    assert sum(GatedEmbedding.sizes) == CACHE_BATCH * 3
    assert max(GatedEmbedding.sizes) <= CACHE_BATCH


def test_pause_reaches_the_running_worker_at_once(kb: KnowledgeBase) -> None:
    """A pause cancels the in-process run's token when it commits: the run stops at its next
    checkpoint, whatever the interval at which runs look at the database."""
    dataset = kb.create_dataset(
        "tea", embedding_model="gated", process_rule={"max_tokens": 32, "chunk_overlap": 0}
    )
    jobs = IndexingQueue(kb.sessions, open_uploads(kb.settings, kb.sessions))
    workers = IndexingWorkers(kb, jobs, 1, poll_seconds=0.05)
    document_id = jobs.enqueue(
        dataset.id, "notes", paragraphs(CACHE_BATCH * 3).encode(), file_name="notes.txt", batch=new_batch()
    )
    GatedEmbedding.observe = staticmethod(lambda: str(kb.states.status(document_id)))
    workers.start()
    stopped = threading.Event()
    try:
        GatedEmbedding.arrivals.get(timeout=HANG_GUARD)
        jobs.pause(dataset.id, document_id)
        GatedEmbedding.proceed.put(None)
        # the run ends without asking the model for another batch
        assert workers.stop(HANG_GUARD)
        stopped.set()
    finally:
        for _ in range(10):
            GatedEmbedding.proceed.put(None)
        if not stopped.is_set():
            workers.stop(HANG_GUARD)
    assert GatedEmbedding.arrivals.empty() and GatedEmbedding.sizes == [CACHE_BATCH]
    assert kb.states.status(document_id) == DocumentStatus.PAUSED
