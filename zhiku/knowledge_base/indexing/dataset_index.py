"""A dataset's three stores plus its embedding model and query analysis, opened once per process.

:class:`DatasetIndex` holds what a dataset's reads and writes share: the vector and full-text
stores, the keyword postings, the embedding model, the tokenizer (following the dataset's user
dictionary), the served segments' catalog and the write lock. The work is done by one module
each: the search (:mod:`zhiku.retrieval.dataset_search`, over the channels of
:mod:`zhiku.retrieval.channels` and the catalog of :mod:`zhiku.knowledge_base.segment_catalog`),
the write protocol (:mod:`~zhiku.knowledge_base.indexing.document_writes`,
:mod:`~zhiku.knowledge_base.indexing.segment_writes`, over
:mod:`~zhiku.knowledge_base.indexing.points` and :mod:`~zhiku.knowledge_base.indexing.rows`) and
the repairs after a failure or a crash (:mod:`~zhiku.knowledge_base.indexing.journal`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.cancellation import CancelToken, cancellable, checkpoint
from zhiku.core.config import Settings
from zhiku.core.db.models import DatasetRow
from zhiku.core.documents import Segment
from zhiku.core.errors import ConfigError
from zhiku.datasource.keyword import KeywordExtractor
from zhiku.datasource.stores import open_fulltext, open_keywords, open_vector
from zhiku.knowledge_base.indexing.document_writes import DocumentVersion, DocumentWrites
from zhiku.knowledge_base.indexing.embedding_cache import DatabaseEmbeddingCache
from zhiku.knowledge_base.indexing.journal import PointJournal
from zhiku.knowledge_base.indexing.keyword_rebuild import BATCH_SIZE, rebuild_keywords
from zhiku.knowledge_base.indexing.points import StorePoints
from zhiku.knowledge_base.indexing.rows import SegmentRows
from zhiku.knowledge_base.indexing.segment_writes import SegmentWrites
from zhiku.knowledge_base.indexing.store_changes import StoreChanges
from zhiku.knowledge_base.metadata_points import clear_marks, read_pending
from zhiku.knowledge_base.runtime.db_locks import DatasetLock
from zhiku.knowledge_base.segment_catalog import ServedSegments
from zhiku.providers.embedding import CachedEmbedding, create_embedding_model
from zhiku.retrieval.calibration_files import calibration_for
from zhiku.retrieval.channels import FullTextChannel, KeywordChannel, SemanticChannel
from zhiku.retrieval.dataset_search import DatasetSearch
from zhiku.text.tokenizer import Tokenizer


def open_embedding(name: str, options: dict[str, Any], sessions: sessionmaker[Session]) -> CachedEmbedding:
    """The dataset's embedding model wrapped with the database cache."""
    return CachedEmbedding(create_embedding_model(name, **options), DatabaseEmbeddingCache(sessions))


def _engine_of(sessions: sessionmaker[Session]) -> Engine:
    engine = sessions.kw.get("bind")
    if not isinstance(engine, Engine):
        raise TypeError("the session factory must be bound to an engine")
    return engine




def _mtime(path: Path | None) -> float | None:
    """When ``path`` was last written (None: no file)."""
    try:
        return path.stat().st_mtime if path is not None else None
    except OSError:
        return None


class DatasetIndex:
    """Opened stores of one dataset. Thread-safe for searches; writes are serialised by a lock."""

    def __init__(
        self,
        settings: Settings,
        sessions: sessionmaker[Session],
        dataset: DatasetRow,
        *,
        embedding: CachedEmbedding | None = None,
    ) -> None:
        self.dataset_id = dataset.id
        self._sessions = sessions
        tokenizer_settings = dataset.tokenizer_settings or {}
        self.tokenizer = Tokenizer.from_settings(tokenizer_settings)
        self._user_dict_mtime = _mtime(self.tokenizer.user_dict)
        self._user_dict_lock = threading.Lock()
        self.keyword_extractor = KeywordExtractor(
            self.tokenizer, top_n=int(tokenizer_settings.get("keyword_count", settings.keyword_count))
        )
        self.embedding = embedding or open_embedding(
            dataset.embedding_model, dataset.embedding_options or {}, sessions
        )
        if self.embedding.dim != dataset.embedding_dim:
            raise ConfigError(
                f"dataset {dataset.name!r} was built with {dataset.embedding_dim}-d embeddings but "
                f"{dataset.embedding_model!r} gives {self.embedding.dim}-d"
            )
        stores = settings.with_backends(dataset.store_backends or {})
        self.vector = open_vector(stores, dataset.id, dataset.embedding_dim)
        self.fulltext = open_fulltext(stores, dataset.id)
        self.keywords = open_keywords(settings, sessions, dataset.id, self.tokenizer)
        self.child_keywords = open_keywords(settings, sessions, dataset.id, self.tokenizer, children=True)
        engine = _engine_of(sessions)
        self.catalog = ServedSegments(sessions, engine, dataset.id)
        # re-entrant: an edit holds it from reading a segment to writing it (see ``editing``);
        # on PostgreSQL it holds every process on the database, not only this one's threads
        self._write_lock = DatasetLock(engine, dataset.id)
        #: points changed since the last optimize (what the background optimizer reads)
        self.changes = StoreChanges(sessions, dataset.id)
        #: the cancel token of a background optimize running now (see ``optimize``)
        self._optimizing: CancelToken | None = None
        self._optimizing_lock = threading.Lock()
        self.points = StorePoints(self)
        self.rows = SegmentRows(self)
        self.journal = PointJournal(self)
        self.document_writes = DocumentWrites(self)
        self.segment_writes = SegmentWrites(self)
        #: how this dataset's hits are scored (:func:`calibration_for`; ``source`` says from where)
        self.calibration = calibration_for(dataset.embedding_model, settings.home, self.embedding.name)
        self.search_service = DatasetSearch(
            {
                "semantic": SemanticChannel(self.embedding, self.vector),
                "full_text": FullTextChannel(self.fulltext, self),
                "keyword": KeywordChannel(self.keywords, self.child_keywords, self.catalog, self),
            },
            catalog=self.catalog,
            calibration=self.calibration,
        )

    @property
    def has_children(self) -> bool:
        """Whether the dataset ever had child chunks or summaries (parent-child, summary index)."""
        return self.catalog.has_children

    @property
    def sessions(self) -> sessionmaker[Session]:
        return self._sessions

    # -- writing (see document_writes, segment_writes and journal) -------------------------------

    def write_documents(
        self,
        batch: Sequence[DocumentVersion],
        timings: dict[str, float] | None = None,
        on_embedded: Callable[[int, int], None] | None = None,
    ) -> list[str]:
        """Replace each document's segments with a new version and mark it completed; returns
        the ids committed (see :meth:`DocumentWrites.write_documents`)."""
        return self.document_writes.write_documents(batch, timings, on_embedded)

    def delete_documents(self, document_ids: Sequence[str]) -> None:
        """Remove documents: rows first (they stop being served), then their points. A background
        optimize running gives way (it runs again later)."""
        self.stop_optimize("documents are deleted")
        self.document_writes.delete_documents(document_ids)

    def write_segments(self, segments: Sequence[Segment]) -> None:
        """Index these segments, new or changed (see :meth:`SegmentWrites.write_segments`)."""
        self.segment_writes.write_segments(segments)

    def delete_segments(self, segment_ids: Sequence[str]) -> None:
        """Remove segments: rows and postings first (they stop being served), then the points."""
        self.stop_optimize("segments are deleted")
        self.segment_writes.delete_segments(segment_ids)

    def set_segments_enabled(self, segment_ids: Sequence[str], enabled: bool) -> None:
        """Flip segments' ``enabled`` in the rows and both stores, journalled like an edit."""
        self.segment_writes.set_segments_enabled(segment_ids, enabled)

    def retokenize_fulltext(self, segment_ids: Sequence[str]) -> int:
        """Write these segments' full-text records again with the tokenizer as it is now (under
        the write lock); returns how many were written."""
        return self.points.retokenize_fulltext(segment_ids)

    def repair_pending(self) -> int:
        """Rewrite the points of segments whose edit was interrupted; returns how many."""
        return self.journal.repair_pending()

    def sweep_orphans(self) -> int:
        """Delete store points without a segment row; returns how many."""
        return self.journal.sweep_orphans()

    @contextmanager
    def editing(self) -> Iterator[None]:
        """Hold this dataset's writes for a read-modify-write of its segments: an edit that read a
        segment (or its document, or the next free position) before a concurrent write changed
        them would bring back a deleted segment, undo another edit or reuse a position. On
        PostgreSQL this holds the other processes on the database too (see ``db_locks``)."""
        with self._write_lock.hold():
            yield

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """Hold the dataset's write lock (see ``editing``)."""
        with self._write_lock.hold():
            yield

    # -- query analysis --------------------------------------------------------------------------

    def reload_keyword_tokenizer(self) -> None:
        """Re-read the dataset's jieba user dictionary for the keyword and full-text channels
        (their postings and records are rebuilt after: :meth:`rebuild_keywords`). A process
        opened later reads the new dictionary anyway, so its BM25 queries are tokenized with it:
        the records must be too, or the two disagree."""
        self._user_dict_mtime = _mtime(self.tokenizer.user_dict)
        tokenizer = Tokenizer.from_settings(self.tokenizer.settings())
        self.keyword_extractor = KeywordExtractor(tokenizer, top_n=self.keyword_extractor.top_n)
        self.keywords.tokenizer = self.child_keywords.tokenizer = tokenizer
        self.tokenizer = tokenizer

    def follow_user_dict(self) -> None:
        """Re-read the user dictionary for the keyword channel if its file changed since it was
        read: the process that rebuilt the postings is rarely the one serving searches."""
        if self.tokenizer.user_dict is not None and _mtime(self.tokenizer.user_dict) != self._user_dict_mtime:
            with self._user_dict_lock:
                if _mtime(self.tokenizer.user_dict) != self._user_dict_mtime:
                    self.reload_keyword_tokenizer()

    def rebuild_keywords(
        self,
        *,
        batch_size: int = BATCH_SIZE,
        should_stop: Callable[[], bool] | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> int:
        """Rebuild the keyword postings and the full-text records from the rows (see
        :mod:`keyword_rebuild`)."""
        return rebuild_keywords(self, batch_size=batch_size, should_stop=should_stop, on_progress=on_progress)

    def optimize(self, token: CancelToken | None = None, *, when: Callable[[], bool] | None = None) -> bool:
        """Build indexes (HNSW, BM25 re-weighting); slow, holds writes: run after an ingest job.
        On the embedded stores the build runs in a child process while searches go on.

        ``token``: a background optimize, stopped (its build killed) by :meth:`stop_optimize` —
        a delete must not wait for it; ``when``: asked under the write lock, False skips the
        build (False is returned). The changes it began with are counted off when it ends (see
        :class:`StoreChanges`); a stopped or failed one leaves them for the next. Metadata values
        the points are behind on are written as part of the build (into its copy: see
        ``metadata_points``), and their marks cleared after it."""
        with self._optimizing_lock:
            self._optimizing = token  # before the lock: a delete waiting for it stops it too
        try:
            with self._write_lock.hold():
                if when is not None and not when():
                    return False
                seen = self.changes.pending()
                with self.sessions() as session:  # metadata changes the points are behind on
                    pending = read_pending(session, self.dataset_id)
                payloads = pending.payloads if pending is not None else None
                with cancellable(token) if token is not None else nullcontext():
                    checkpoint()  # stopped while it waited for the lock
                    self.vector.optimize(payloads)
                    self.fulltext.optimize(payloads)
                if pending is not None:
                    clear_marks(self.sessions, pending.marks)
                self.changes.optimized(seen)
                return True
        finally:
            with self._optimizing_lock:
                self._optimizing = None

    def stop_optimize(self, reason: str) -> None:
        """Stop a background optimize of this dataset running in this process, if one runs."""
        with self._optimizing_lock:
            if self._optimizing is not None:
                self._optimizing.cancel(reason)

    def drop(self) -> None:
        """Close and delete the stores; a run still writing to them fails its write and stops."""
        self.stop_optimize("the dataset is deleted")
        with self._write_lock.hold():
            self.search_service.close()
            self.vector.drop()
            self.fulltext.drop()

    def close(self) -> None:
        self.search_service.close()
        self.vector.close()
        self.fulltext.close()
