"""What starts or restarts the indexing of a dataset's documents: new files and text (and what
content already there does), a new file for a document, pre-made chunks, Q&A pairs, a queued
document, a retry.

The runs themselves are :class:`~zhiku.knowledge_base.indexing.ingestion.Ingestion`'s; here are
the decisions before them (which document a source becomes, whether it may run now).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from zhiku.core.document_status import RESTARTABLE, DocumentStatus
from zhiku.core.documents import Chunk
from zhiku.core.errors import InvalidInput, NotFound
from zhiku.index_processors import ChunkFailure
from zhiku.index_processors.qa import renumber
from zhiku.index_processors.summary import SUMMARY_OF
from zhiku.knowledge_base.context import DatasetContext
from zhiku.knowledge_base.dataset_documents import DatasetDocuments
from zhiku.knowledge_base.dataset_segments import DatasetSegments
from zhiku.knowledge_base.indexing.dataset_index import DocumentVersion
from zhiku.knowledge_base.indexing.ingestion import (
    EmbeddingProgress,
    Ingestion,
    Progress,
    Source,
    new_document,
)
from zhiku.knowledge_base.indexing.pipeline import Pipeline
from zhiku.knowledge_base.indexing.qa_import import index_qa_csv, index_qa_pairs
from zhiku.knowledge_base.records import DocumentInfo
from zhiku.knowledge_base.runtime.jobs import DocumentIndexing

S = DocumentStatus

#: What ingesting a file whose content is already in the dataset does: ``skip`` it (the
#: existing document is returned), ``replace`` (index the existing document again from it), or
#: ``keep`` both.
OnDuplicate = Literal["skip", "replace", "keep"]


class DocumentIntake:
    """The ingest entry points of one dataset; ``pipeline()`` builds its stored process rule,
    used whenever a caller passes no pipeline of its own."""

    def __init__(
        self,
        context: DatasetContext,
        documents: DatasetDocuments,
        segments: DatasetSegments,
        pipeline: Callable[[], Pipeline],
    ) -> None:
        self._context = context
        self._documents = documents
        self._segments = segments
        self._pipeline = pipeline
        self.dataset_id = documents.dataset_id

    def add_file(
        self, path: str | Path, *, pipeline: Pipeline | None = None, on_duplicate: OnDuplicate = "skip"
    ) -> DocumentInfo:
        """Ingest one file. A bad file does not raise: its document is marked ``error`` with the reason."""
        infos = self.add_files([path], pipeline=pipeline, on_duplicate=on_duplicate)
        if not infos:
            raise NotFound(f"{Path(path).name}: its document was deleted while it was ingested")
        return infos[0]

    def add_text(
        self, name: str, text: str, *, pipeline: Pipeline | None = None, on_duplicate: OnDuplicate = "skip"
    ) -> DocumentInfo:
        """Ingest text given directly (UTF-8)."""
        return self._add([Source(name, text.encode("utf-8"), name)], pipeline, on_duplicate)[0]

    def add_files(
        self,
        paths: Sequence[str | Path],
        *,
        pipeline: Pipeline | None = None,
        on_progress: Progress | None = None,
        timings: dict[str, float] | None = None,
        on_duplicate: OnDuplicate = "skip",
    ) -> list[DocumentInfo]:
        """Ingest files; each ends ``completed`` or ``error``, and one's failure never stops the others
        (a document deleted while it was ingested is left out of the result).

        A file whose content is already in the dataset is handled by ``on_duplicate``; the info
        returned for it is the existing document's, with ``duplicate`` ``"skipped"`` or ``"replaced"``.
        """
        sources = [Source.file(path) for path in paths]
        return self._add(sources, pipeline, on_duplicate, on_progress=on_progress, timings=timings)

    def _add(
        self,
        sources: Sequence[Source],
        pipeline: Pipeline | None,
        on_duplicate: OnDuplicate,
        *,
        on_progress: Progress | None = None,
        timings: dict[str, float] | None = None,
    ) -> list[DocumentInfo]:
        """New documents for ``sources``, or the existing ones their content duplicates (see
        :meth:`add_files`)."""
        results: list[tuple[str, str | None]] = []  # (document id, what a duplicate got)
        to_run: list[tuple[Source, str]] = []
        for plain in sources:
            digest = plain.sha256()
            source = dataclasses.replace(plain, digest=digest)
            existing = None
            if digest and on_duplicate != "keep":
                existing = self._documents.duplicate(digest, source.origin)
            if existing is not None and on_duplicate == "skip" and existing.status != S.ERROR:
                results.append((existing.id, "skipped"))
                continue
            if existing is not None:  # replace, or retry a failed one: index the existing one again
                self._restart(existing.id, source=source.origin, size=source.size, name=source.name[:1024])
                to_run.append((source, existing.id))
                results.append((existing.id, "replaced"))
                continue
            document_id = new_document(self._context, self.dataset_id, source, file_hash=digest)
            to_run.append((source, document_id))
            results.append((document_id, None))
        self._run(
            [source for source, _ in to_run],
            [document_id for _, document_id in to_run],
            pipeline,
            on_progress=on_progress,
            timings=timings,
        )
        infos = []
        for document_id, duplicate in results:
            try:
                info = self._documents.get(document_id)
            except NotFound:
                continue  # deleted while it was being ingested
            infos.append(dataclasses.replace(info, duplicate=duplicate) if duplicate else info)
        return infos

    def replace_file(
        self, document_id: str, path: str | Path, *, pipeline: Pipeline | None = None
    ) -> DocumentInfo:
        """Re-ingest a document from a new file. Its segments are replaced in every store or in none:
        if the new version fails, the previous segments stay served and the document says why."""
        source = Source.file(path)
        source = dataclasses.replace(source, digest=source.sha256())
        self._restart(document_id, name=source.name[:1024], source=source.origin, size=source.size)
        self._run([source], [document_id], pipeline)
        return self._documents.get(document_id)

    def add_chunks(
        self,
        documents: Sequence[tuple[str, Sequence[Chunk]]],
        *,
        on_progress: Progress | None = None,
        timings: dict[str, float] | None = None,
    ) -> list[DocumentInfo]:
        """Index pre-made chunks (no extraction or splitting), e.g. an evaluation corpus's passages."""
        ingestion = Ingestion(
            self._context, self.dataset_id, self._pipeline(), timings=timings, on_progress=on_progress
        )
        return [self._documents.get(document_id) for document_id in ingestion.run_chunks(documents)]

    def add_qa_pairs(self, name: str, pairs: Sequence[tuple[str, str]]) -> DocumentInfo:
        """Index question/answer pairs as one document, without any LLM: questions are indexed,
        answers returned beside them (as in a ``qa_model`` dataset)."""
        return self._documents.get(
            index_qa_pairs(self._context, self.dataset_id, self._pipeline, name, pairs)
        )

    def add_qa_csv(self, path: str | Path) -> DocumentInfo:
        """Import pairs from a CSV file (see :func:`.qa_import.read_qa_csv` for the layouts). Like
        ``add_file``, a bad file does not raise: its document ends ``error`` with the reason."""
        return self._documents.get(index_qa_csv(self._context, self.dataset_id, self._pipeline, Path(path)))

    def index_waiting(
        self,
        document_id: str,
        *,
        pipeline: Pipeline | None = None,
        on_embedded: EmbeddingProgress | None = None,
        source: Source | None = None,
    ) -> DocumentInfo:
        """Index a document already in the database from ``source`` (the indexing workers pass
        a claimed document's stored upload), by default its source file. Earlier segments stay
        served until the new ones replace them; a failure marks it ``error``; a pause or delete
        stops it. ``on_embedded(done, total)`` reports the embedding of its segments."""
        path = Path(self._documents.get(document_id).source)
        source = source or Source(path.name, path, str(path))
        self._run([source], [document_id], pipeline, on_embedded=on_embedded)
        return self._documents.get(document_id)

    def prepare_waiting(
        self,
        document_id: str,
        source: Source,
        *,
        pipeline: Pipeline | None = None,
        on_embedded: EmbeddingProgress | None = None,
    ) -> DocumentVersion | None:
        """Extract, clean, split and embed a claimed document (its vectors go to the shared
        embedding cache) without writing any store: the new version, left ``indexing`` for the
        process owning the stores to write; None when the run failed or was stopped (the
        document says why). ``on_embedded(done, total)`` reports the embedding."""
        ingestion = Ingestion(
            self._context,
            self.dataset_id,
            pipeline or self._pipeline(),
            on_embedded=on_embedded,
            open_stores=False,
        )
        return ingestion.prepare(source, document_id)

    def retry_document(self, document_id: str) -> DocumentInfo:
        """Redo what failed: for a document with failed chunks, only those chunks (the pairs
        already indexed stay); for a document that failed as a whole, the whole file again."""
        info = self._documents.get(document_id)
        failed = [ChunkFailure.from_json(item) for item in info.metadata.get("failed_chunks") or []]
        if not failed:
            if info.status != S.ERROR:
                raise InvalidInput(f"document {info.name!r} has nothing to retry (status {info.status})")
            source = Path(info.source)
            if not source.is_file():
                raise InvalidInput(f"document {info.name!r} cannot be retried: its source file is gone")
            return self.replace_file(document_id, source)
        pipeline = self._pipeline()
        if not self._context.states.move(document_id, S.INDEXING, only_from=RESTARTABLE):
            raise DocumentIndexing(f"document {document_id!r} is being indexed; wait or pause it first")
        if all(SUMMARY_OF in failure.metadata for failure in failed):
            return self._retry_summaries(document_id, pipeline, failed)
        outcome = pipeline.index_processor.transform([failure.chunk() for failure in failed], document_id)
        merged = renumber([*self._segments.all(document_id), *outcome.segments], document_id)
        version = DocumentVersion(document_id, merged, [failure.to_json() for failure in outcome.failures])
        if merged:
            Ingestion(self._context, self.dataset_id, pipeline).write_version(version)
        else:
            reason = version.error_summary() or "no segments produced"
            self._context.states.fail(document_id, reason, failed_chunks=list(version.failed_chunks))
        return self._documents.get(document_id)

    def _retry_summaries(
        self, document_id: str, pipeline: Pipeline, failed: list[ChunkFailure]
    ) -> DocumentInfo:
        """Summarise again only the segments whose summary failed, and write the document's
        version with them (the other points are rewritten unchanged, their embeddings cached)."""
        segments = self._segments.all(document_id, with_children=True)
        wanted = {str(failure.metadata[SUMMARY_OF]) for failure in failed}
        missing = [s for s in segments if s.id in wanted and s.summary is None]
        failures = pipeline.summarizer.summarize(missing) if pipeline.summarizer is not None else []
        version = DocumentVersion(document_id, segments, [failure.to_json() for failure in failures])
        Ingestion(self._context, self.dataset_id, pipeline).write_version(version)
        return self._documents.get(document_id)

    def _run(
        self,
        sources: Sequence[Source],
        document_ids: Sequence[str],
        pipeline: Pipeline | None,
        *,
        on_progress: Progress | None = None,
        timings: dict[str, float] | None = None,
        on_embedded: EmbeddingProgress | None = None,
    ) -> None:
        if not sources:
            return
        ingestion = Ingestion(
            self._context,
            self.dataset_id,
            pipeline or self._pipeline(),
            timings=timings,
            on_progress=on_progress,
            on_embedded=on_embedded,
        )
        ingestion.run(sources, document_ids)

    def _restart(self, document_id: str, **values: object) -> None:
        """Queue a finished or failed document for a new run (its current version stays served)."""
        self._documents.get(document_id)
        if not self._context.states.move(document_id, S.WAITING, only_from=RESTARTABLE, error=None, **values):
            raise DocumentIndexing(f"document {document_id!r} is being indexed; wait or pause it first")
