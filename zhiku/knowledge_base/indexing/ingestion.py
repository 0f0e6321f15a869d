"""Ingestion: sources → pipeline → document versions → the dataset's stores, a batch at a time.

Each document runs inside its own :class:`~zhiku.core.cancellation.CancelToken`: pausing or
deleting it, or its time limit (setting ``document_time_limit``), stops it at the next
checkpoint of whatever stage it is in — extraction, cleaning, splitting, the index processor,
or embedding, whose vectors are cached batch by batch, so a stopped or crashed document resumes
from its last embedded batch. Versions of several documents are then written together (one
flush and one transaction for up to :data:`WRITE_BATCH_SEGMENTS` segments); see
:mod:`zhiku.knowledge_base.indexing.dataset_index` for what makes that write all-or-nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from zhiku.core.cancellation import CancelToken, cancellable, current_token
from zhiku.core.db.models import DocumentRow
from zhiku.core.document_status import IN_PROGRESS, DocumentStatus, sources
from zhiku.core.documents import Chunk
from zhiku.core.errors import Cancelled, InvalidInput, TimeLimitExceeded, ZhikuError
from zhiku.extractors.budget import ParseBudget, parse_budget
from zhiku.knowledge_base.context import DatasetContext
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex, DocumentVersion
from zhiku.knowledge_base.indexing.document_states import DocumentStates
from zhiku.knowledge_base.indexing.pipeline import Pipeline
from zhiku.knowledge_base.indexing.points import points_of_segment

S = DocumentStatus

#: Segments gathered from several documents before one store write.
WRITE_BATCH_SEGMENTS = 2048

Progress = Callable[[str, int, int], None]
EmbeddingProgress = Callable[[int, int], None]


@dataclass(frozen=True)
class Source:
    """One thing to ingest: its name, its content (a file path or bytes), and where it came from
    (stored as the document's ``source``: a resolved file path, or a label)."""

    name: str
    content: Path | bytes
    origin: str
    #: its content hash, when the caller computed it (recorded with the version it becomes)
    digest: str | None = None

    @classmethod
    def file(cls, path: str | Path) -> Source:
        resolved = Path(path).resolve()
        return cls(resolved.name, resolved, str(resolved))

    @property
    def size(self) -> int:
        if isinstance(self.content, bytes):
            return len(self.content)
        try:
            return self.content.stat().st_size
        except OSError:
            return 0

    def sha256(self) -> str | None:
        """The content's hash (None when the file cannot be read: the ingest reports why)."""
        if isinstance(self.content, bytes):
            return hashlib.sha256(self.content).hexdigest()
        digest = hashlib.sha256()
        try:
            with self.content.open("rb") as handle:
                for block in iter(functools.partial(handle.read, 1 << 20), b""):
                    digest.update(block)
        except OSError:
            return None
        return digest.hexdigest()


class _Run:
    """One run of one document: when it claimed the document, so that it stops once the
    document is no longer its own (paused and resumed, or claimed by another run)."""

    def __init__(self, states: DocumentStates, document_id: str) -> None:
        self._states = states
        self.document_id = document_id
        #: a worker's claim already moved the document to ``parsing``; a direct ingest claims it
        #: at its first stage
        self.started: datetime | None = states.run_started(document_id)

    def stop_reason(self) -> str | None:
        return self._states.stop_reason(self.document_id, self.started)


def new_document(
    context: DatasetContext,
    dataset_id: str,
    source: Source,
    *,
    status: DocumentStatus = S.WAITING,
    file_hash: str | None = None,
) -> str:
    """Add a document row (not served until a version of it is completed); returns its id."""
    row = DocumentRow(
        dataset_id=dataset_id,
        name=source.name[:1024],
        source=source.origin,
        size=source.size,
        file_hash=file_hash,
        status=str(status),
    )
    with context.sessions.begin() as session:
        session.add(row)
    return row.id


class Ingestion:
    """One ingest run into one dataset (not thread-safe: one run, one caller)."""

    def __init__(
        self,
        context: DatasetContext,
        dataset_id: str,
        pipeline: Pipeline,
        *,
        timings: dict[str, float] | None = None,
        on_progress: Progress | None = None,
        on_embedded: EmbeddingProgress | None = None,
        open_stores: bool = True,
    ) -> None:
        """``open_stores=False``: open the dataset's stores only when first written, so a process
        that may not open them can still :meth:`prepare` versions; otherwise they are opened now
        (``StoreBusy`` before any document is touched)."""
        self._context = context
        self._states = context.states
        self._dataset_id = dataset_id
        self._opened: DatasetIndex | None = context.index(dataset_id) if open_stores else None
        self._pipeline = pipeline
        self._timings = timings
        self._on_progress = on_progress
        self._on_embedded = on_embedded
        self._pending: list[DocumentVersion] = []

    @property
    def _index(self) -> DatasetIndex:
        """The dataset's stores, opened when first written (:meth:`prepare` opens none)."""
        if self._opened is None:
            self._opened = self._context.index(self._dataset_id)
        return self._opened

    # -- files and texts ---------------------------------------------------------------------

    def run(self, sources: Sequence[Source], document_ids: Sequence[str]) -> None:
        """Index each source into its (existing) document; one's failure never stops the others."""
        total = len(sources)
        for done, (source, document_id) in enumerate(zip(sources, document_ids, strict=True), start=1):
            version = self._prepare(source, document_id)
            if version is not None:
                self._pending.append(version)
            if self._pending_segments() >= WRITE_BATCH_SEGMENTS or done == total:
                self._write()
            if self._on_progress:
                self._on_progress(source.name, done, total)

    def prepare(self, source: Source, document_id: str) -> DocumentVersion | None:
        """Make one document's new version, its vectors cached, without writing it (a Celery
        worker beside embedded stores hands it to their owner); None when it failed or stopped."""
        return self._prepare(source, document_id)

    def _prepare(self, source: Source, document_id: str) -> DocumentVersion | None:
        """Extract, clean, split, transform and embed one document under its cancel token."""
        run = _Run(self._states, document_id)
        # under the caller's token, if any: a worker's, cancelled when the server stops
        token = CancelToken.with_time_limit(
            self._context.settings.document_time_limit, should_stop=run.stop_reason, parent=current_token()
        )
        settings = self._context.settings
        budget = ParseBudget(
            settings.parse_time_limit,
            settings.parse_max_mb,
            max_elements=settings.parse_max_elements,
            max_cells=settings.parse_max_cells,
            isolated=settings.parse_in_child_process,
        )
        with cancellable(token), parse_budget(budget):
            try:
                self._check_size(source)
                chunks = self._pipeline.chunks(
                    source.content,
                    source.name,
                    on_stage=functools.partial(self._enter, token, run),
                    timings=self._timings,
                )
                if not chunks:
                    raise InvalidInput(f"{source.name}: no text left after extraction and cleaning")
                self._check_segments(source, len(chunks))
                self._enter(token, run, S.INDEXING)
                version = self._version(document_id, chunks, embed=True)
                return dataclasses.replace(version, file_hash=source.digest) if version else None
            except TimeLimitExceeded as exc:
                limit = self._context.settings.document_time_limit
                self._states.fail(document_id, f"{exc} (document_time_limit {limit:g} s)")
            except Cancelled:
                pass  # paused (it stays paused until resumed) or deleted
            except ZhikuError as exc:
                self._states.fail(document_id, str(exc))
            except Exception as exc:  # noqa: BLE001 - one bad file must not stop the others
                self._states.fail(document_id, f"{source.name}: {type(exc).__name__}: {exc}")
        return None

    def _enter(self, token: CancelToken, run: _Run, stage: str) -> None:
        """Move the document to ``stage``; stop the run if it was paused or deleted meanwhile.
        A document a worker claimed is already ``parsing``. Once the run holds the document,
        a stage is entered only from another stage: a document paused and resumed (``waiting``
        again) belongs to the next run, not to this one."""
        token.stage = stage
        status = S(stage)
        document_id = run.document_id
        only_from = sources(status) & IN_PROGRESS if run.started is not None else None
        moved = self._states.move(document_id, status, only_from=only_from)
        if moved and run.started is None:
            run.started = self._states.run_started(document_id)
        if not moved and self._states.status(document_id) != status:
            raise Cancelled(run.stop_reason() or f"document {document_id} moved")
        reason = run.stop_reason()
        if reason is not None:
            token.cancel(reason)
            raise Cancelled(reason)

    def _check_size(self, source: Source) -> None:
        """Refuse a file over ``upload_max_mb`` before reading it: a 50 MB text file is some
        100,000 chunks, hours of embedding, and most often a log or a dump added by mistake."""
        limit = self._context.settings.upload_max_mb
        size = source.size
        if size > limit * 1024 * 1024:
            raise InvalidInput(
                f"{source.name}: file too large ({size / 1024 / 1024:.1f} MB; the limit is {limit:g} MB, "
                "setting upload_max_mb)"
            )

    def _check_segments(self, source: Source, count: int) -> None:
        """Refuse a document split into more segments than ``max_segments_per_document``
        before any is embedded: each is a row, a vector and a posting list entry."""
        limit = self._context.settings.max_segments_per_document
        if count > limit:
            raise InvalidInput(
                f"{source.name}: {count:,} segments, over the limit of {limit:,} a document may have "
                "(setting max_segments_per_document)"
            )

    # -- pre-made chunks and versions --------------------------------------------------------

    def run_chunks(self, documents: Sequence[tuple[str, Sequence[Chunk]]]) -> list[str]:
        """Index pre-made chunks as new documents (no extraction, splitting or cancellation:
        an evaluation corpus's passages); embedding is batched across documents at write time."""
        ids: list[str] = []
        total = len(documents)
        for done, (name, chunks) in enumerate(documents, start=1):
            document_id = new_document(
                self._context, self._dataset_id, Source(name, b"", "chunks"), status=S.INDEXING
            )
            ids.append(document_id)
            version = self._version(document_id, chunks, embed=False)
            if version is not None:
                self._pending.append(version)
            if self._pending_segments() >= WRITE_BATCH_SEGMENTS or done == total:
                self._write()
            if self._on_progress:
                self._on_progress(name, done, total)
        return ids

    def write_version(self, version: DocumentVersion) -> None:
        """Write one prepared version now (Q&A pairs, a retry of failed chunks)."""
        self._pending.append(version)
        self._write()

    def _version(self, document_id: str, chunks: Sequence[Chunk], *, embed: bool) -> DocumentVersion | None:
        """The document's new version, or None (and the document failed) when no segment came out."""
        outcome = self._pipeline.index_processor.transform(chunks, document_id)
        if self._pipeline.summarizer is not None:
            outcome.failures.extend(self._pipeline.summarizer.summarize(outcome.segments))
        failures = [failure.to_json() for failure in outcome.failures]
        version = DocumentVersion(document_id, outcome.segments, failures)
        if not outcome.segments:
            self._states.fail(
                document_id, version.error_summary() or "no segments produced", failed_chunks=failures
            )
            return None
        if embed:  # cached batch by batch, so the write finds them all and a stop loses one batch
            # what the stores index: a parent's children, else the segment itself; and a summary
            texts = [item.content for s in outcome.segments for item in points_of_segment(s)]
            self._context.embedding(self._dataset_id).embed_documents(texts, on_progress=self._on_embedded)
        return version

    def _pending_segments(self) -> int:
        return sum(len(version.segments) for version in self._pending)

    def _write(self) -> None:
        pending, self._pending = self._pending, []
        if not pending:
            return
        try:
            self._index.write_documents(pending, self._timings, self._on_embedded)
        except Cancelled:
            # the worker was stopped (the server is stopping): nothing was written, the
            # documents stay in progress and are queued again
            return
        except Exception as exc:  # noqa: BLE001 - a store or model failure must mark, not lose, the documents
            reason = str(exc) if isinstance(exc, ZhikuError) else f"{type(exc).__name__}: {exc}"
            for version in pending:
                self._states.fail(version.document_id, f"indexing failed: {reason}")
