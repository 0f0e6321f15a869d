"""Dataset: one dataset's documents, segments, Q&A pairs and search; state lives in the database."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import func, select, update

from zhiku.core.db import DatasetRow, DocumentRow, SegmentRow
from zhiku.core.db.models import utcnow
from zhiku.core.documents import Chunk, Hit, Segment, content_hash, segment_id
from zhiku.core.errors import InvalidInput, NotFound, ZhikuError
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.index_processors import ChunkFailure, IndexOutcome
from zhiku.index_processors.qa import renumber
from zhiku.knowledge_base.dataset_index import DatasetIndex
from zhiku.knowledge_base.jobs import IndexingPaused
from zhiku.knowledge_base.pipeline import Pipeline, PipelineSpec, Stage
from zhiku.knowledge_base.qa_import import read_qa_csv
from zhiku.knowledge_base.records import DocumentInfo
from zhiku.knowledge_base.segments import SegmentEditor, segment_of
from zhiku.providers.llm import ChatModel
from zhiku.rerank.types import FusedHit

if TYPE_CHECKING:
    from zhiku.knowledge_base.knowledge_base import KnowledgeBase

#: Segments gathered from several documents before one embedding + store write.
WRITE_BATCH_SEGMENTS = 2048

Progress = Callable[[str, int, int], None]


def as_retrieval_config(value: RetrievalConfig | dict[str, Any] | None) -> RetrievalConfig:
    if value is None:
        return RetrievalConfig()
    if isinstance(value, RetrievalConfig):
        return value
    return RetrievalConfig.from_dict(value)


class Dataset:
    """One dataset: its documents, segments and search. Cheap to create; state lives in the DB."""

    def __init__(self, kb: KnowledgeBase, dataset_id: str) -> None:
        self._kb = kb
        self.id = dataset_id

    def __repr__(self) -> str:
        return f"Dataset(id={self.id!r}, name={self.name!r})"

    # -- properties -------------------------------------------------------------------------------

    @property
    def _row(self) -> DatasetRow:
        return self._kb._row(self.id)

    @property
    def name(self) -> str:
        return self._row.name

    @property
    def description(self) -> str:
        return self._row.description

    @property
    def retrieval(self) -> RetrievalConfig:
        return RetrievalConfig.model_validate(self._row.retrieval_config)

    @property
    def process_rule(self) -> PipelineSpec:
        return PipelineSpec.model_validate(self._row.process_rule)

    @property
    def embedding_model(self) -> str:
        return self._row.embedding_model

    def update(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        retrieval: RetrievalConfig | dict[str, Any] | None = None,
        process_rule: PipelineSpec | dict[str, Any] | None = None,
        llm: dict[str, Any] | None = None,
    ) -> None:
        """Change name, description, retrieval config (the method per dataset), process rule or
        chat model options."""
        with self._kb.sessions.begin() as session:
            row = session.get(DatasetRow, self.id)
            if row is None:
                raise NotFound(f"no dataset {self.id!r}")
            if name is not None:
                row.name = name
            if description is not None:
                row.description = description
            if retrieval is not None:
                row.retrieval_config = as_retrieval_config(retrieval).model_dump()
            if process_rule is not None:
                spec = (
                    process_rule
                    if isinstance(process_rule, PipelineSpec)
                    else PipelineSpec.model_validate(process_rule)
                )
                row.process_rule = spec.model_dump()
                row.doc_form = spec.doc_form
            if llm is not None:
                row.llm_options = dict(llm)

    def stats(self) -> dict[str, Any]:
        with self._kb.sessions() as session:
            documents = session.scalars(select(DocumentRow).where(DocumentRow.dataset_id == self.id)).all()
            by_status: dict[str, int] = {}
            for row in documents:
                by_status[row.status] = by_status.get(row.status, 0) + 1
            segments = session.scalar(
                select(func.count()).select_from(SegmentRow).where(SegmentRow.dataset_id == self.id)
            )
        return {"documents": len(documents), "by_status": by_status, "segments": int(segments or 0)}

    # -- documents ------------------------------------------------------------------------------

    def documents(self) -> list[DocumentInfo]:
        with self._kb.sessions() as session:
            rows = session.scalars(
                select(DocumentRow).where(DocumentRow.dataset_id == self.id).order_by(DocumentRow.created_at)
            ).all()
            return [DocumentInfo.of(row) for row in rows]

    def document(self, document_id: str) -> DocumentInfo:
        with self._kb.sessions() as session:
            row = session.get(DocumentRow, document_id)
            if row is None or row.dataset_id != self.id:
                raise NotFound(f"no document {document_id!r} in dataset {self.name!r}")
            return DocumentInfo.of(row)

    def segments(self, document_id: str | None = None) -> list[Segment]:
        with self._kb.sessions() as session:
            query = select(SegmentRow).where(SegmentRow.dataset_id == self.id)
            if document_id is not None:
                query = query.where(SegmentRow.document_id == document_id)
            rows = session.scalars(query.order_by(SegmentRow.document_id, SegmentRow.position)).all()
            return [segment_of(row) for row in rows]

    def delete_document(self, document_id: str) -> None:
        self.document(document_id)
        self._kb._index(self.id).delete_documents([document_id])

    def set_segment_enabled(self, segment_id: str, enabled: bool) -> None:
        """Enable or disable one segment in the database and in both stores."""
        index = self._kb._index(self.id)
        with index.editing():  # a concurrent edit of the segment would set its stores' flag back
            with self._kb.sessions.begin() as session:
                row = session.get(SegmentRow, segment_id)
                if row is None or row.dataset_id != self.id:
                    raise NotFound(f"no segment {segment_id!r} in dataset {self.name!r}")
                row.enabled = enabled
            index.vector.set_enabled([segment_id], enabled)
            index.fulltext.set_enabled([segment_id], enabled)

    def replace_file(
        self, document_id: str, path: str | Path, *, pipeline: Pipeline | None = None
    ) -> DocumentInfo:
        """Re-ingest a document from a new file. Its segments are replaced in every store or in none:
        if the new version fails, the previous segments stay served and the document shows the error."""
        self.document(document_id)
        source = Path(path)
        with self._kb.sessions.begin() as session:
            row = session.get(DocumentRow, document_id)
            assert row is not None
            row.name, row.source, row.size, row.status = source.name, str(source), _size(source), "waiting"
        return self._ingest([(source.name, source, str(source))], pipeline, None, None, [document_id])[0]

    def add_file(self, path: str | Path, *, pipeline: Pipeline | None = None) -> DocumentInfo:
        """Ingest one file. A bad file does not raise: its document is marked ``error`` with the reason."""
        return self.add_files([path], pipeline=pipeline)[0]

    def add_text(self, name: str, text: str, *, pipeline: Pipeline | None = None) -> DocumentInfo:
        """Ingest text given directly (UTF-8)."""
        return self._ingest([(name, text.encode("utf-8"), str(name))], pipeline, None, None)[0]

    def add_files(
        self,
        paths: Sequence[str | Path],
        *,
        pipeline: Pipeline | None = None,
        on_progress: Progress | None = None,
        timings: dict[str, float] | None = None,
    ) -> list[DocumentInfo]:
        """Ingest files; each ends ``completed`` or ``error``, and one's failure never stops the others."""
        sources = [(Path(p).name, Path(p), str(Path(p))) for p in paths]
        return self._ingest(sources, pipeline, on_progress, timings)

    def add_chunks(
        self,
        documents: Sequence[tuple[str, Sequence[Chunk]]],
        *,
        on_progress: Progress | None = None,
        timings: dict[str, float] | None = None,
    ) -> list[DocumentInfo]:
        """Index pre-made chunks (no extraction or splitting), e.g. an evaluation corpus's passages."""
        processor = self.pipeline().index_processor
        infos: list[str] = []
        pending: list[tuple[str, Sequence[Segment]]] = []
        total = len(documents)
        index = self._kb._index(self.id)
        for done, (name, chunks) in enumerate(documents, start=1):
            document_id = self._new_document(name, source="chunks", status="indexing")
            infos.append(document_id)
            segments = self._outcome(document_id, processor.transform(chunks, document_id))
            if segments is not None:
                pending.append((document_id, segments))
            if sum(len(s) for _, s in pending) >= WRITE_BATCH_SEGMENTS or done == total:
                self._write(index, pending, timings)
                pending = []
            if on_progress:
                on_progress(name, done, total)
        return [self.document(document_id) for document_id in infos]

    def pipeline(self) -> Pipeline:
        """The pipeline built from this dataset's stored process rule."""
        return self.process_rule.build(chat=self.chat_model)

    def chat_model(self) -> ChatModel:
        """The chat model this dataset's Q&A indexing uses (its ``llm`` options over the defaults)."""
        return self._kb.chat_model(self._row.llm_options or None)

    # -- Q&A ------------------------------------------------------------------------------------

    def add_qa_pairs(self, name: str, pairs: Sequence[tuple[str, str]]) -> DocumentInfo:
        """Index question/answer pairs as one document, without any LLM: questions are indexed,
        answers returned beside them (as in a ``qa_model`` dataset)."""
        clean = [(q.strip(), a.strip()) for q, a in pairs if q and q.strip() and a and a.strip()]
        if not clean:
            raise InvalidInput(f"{name}: no question/answer pair with both parts filled")
        document_id = self._new_document(name, source="qa_pairs", status="indexing")
        segments = [
            Segment(
                id=segment_id(document_id, position, question),
                document_id=document_id,
                position=position,
                content=question,
                tokens=0,
                hash=content_hash(question),
                answer=answer,
                metadata={"chunk_position": position, "pair_index": 0},
            )
            for position, (question, answer) in enumerate(clean)
        ]
        self._write(self._kb._index(self.id), [(document_id, segments)], None)
        return self.document(document_id)

    def add_qa_csv(self, path: str | Path) -> DocumentInfo:
        """Import pairs from a CSV file (see :func:`read_qa_csv` for the accepted layouts). Like
        ``add_file``, a bad file does not raise: its document ends ``error`` with the reason."""
        source = Path(path)
        try:
            pairs = read_qa_csv(source)
            return self.add_qa_pairs(source.name, pairs)
        except ZhikuError as exc:  # its messages name the file
            document_id = self._new_document(source.name, source=str(source), size=_size(source))
            self._fail([document_id], str(exc))
            return self.document(document_id)

    def retry_document(self, document_id: str) -> DocumentInfo:
        """Redo what failed: for a document with failed chunks, only those chunks (the pairs
        already indexed stay); for a document that failed as a whole, the whole file again."""
        info = self.document(document_id)
        failed = [ChunkFailure.from_json(item) for item in info.metadata.get("failed_chunks") or []]
        if not failed:
            if info.status != "error":
                raise InvalidInput(f"document {info.name!r} has nothing to retry (status {info.status})")
            with self._kb.sessions() as session:
                row = session.get(DocumentRow, document_id)
                source = Path(row.source) if row is not None else None
            if source is None or not source.is_file():
                raise InvalidInput(f"document {info.name!r} cannot be retried: its source file is gone")
            return self.replace_file(document_id, source)
        pipeline = self.pipeline()
        self._set_stage(document_id, "indexing")
        outcome = pipeline.index_processor.transform([failure.chunk() for failure in failed], document_id)
        kept = self.segments(document_id)
        merged = renumber([*kept, *outcome.segments], document_id)
        segments = self._outcome(document_id, IndexOutcome(merged, outcome.failures))
        if segments is not None:
            self._write(self._kb._index(self.id), [(document_id, segments)], None)
        return self.document(document_id)

    def _check_size(self, name: str, source: Path | bytes) -> None:
        """Refuse a file over ``upload_max_mb`` before reading it: a 50 MB text file is some
        100,000 chunks, hours of embedding, and most often a log or a dump added by mistake."""
        limit = self._kb.settings.upload_max_mb
        size = _size(source)
        if size > limit * 1024 * 1024:
            raise InvalidInput(
                f"{name}: file too large ({size / 1024 / 1024:.1f} MB; the limit is {limit:g} MB, "
                "setting upload_max_mb)"
            )

    def _outcome(self, document_id: str, outcome: IndexOutcome) -> list[Segment] | None:
        """Record the chunks a processor could not index on the document (before the write that
        completes it, so a crash cannot lose them); None when nothing is left to write."""
        failures = [failure.to_json() for failure in outcome.failures]
        summary = None
        if failures:
            reasons = "; ".join(f"chunk {f['position']}: {f['reason']}" for f in failures[:5])
            more = f" (and {len(failures) - 5} more)" if len(failures) > 5 else ""
            summary = f"{len(failures)} chunk(s) not indexed: {reasons}{more}"
        with self._kb.sessions.begin() as session:
            row = session.get(DocumentRow, document_id)
            if row is None:
                return None
            row.doc_metadata = {**(row.doc_metadata or {}), "failed_chunks": failures}
            if outcome.segments:
                row.error = summary
                return outcome.segments
            row.status, row.error, row.error_at = "error", summary or "no segments produced", utcnow()
            return None

    def _new_document(self, name: str, *, source: str, status: str = "waiting", size: int = 0) -> str:
        row = DocumentRow(dataset_id=self.id, name=name[:1024], source=source, status=status, size=size)
        if status == "indexing":
            row.indexing_started_at = utcnow()
        with self._kb.sessions.begin() as session:
            session.add(row)
        return row.id

    def _set_stage(self, document_id: str, stage: Stage | str) -> None:
        """Move a document to ``stage``; IndexingPaused if it was paused (or deleted) meanwhile."""
        now = utcnow()
        with self._kb.sessions.begin() as session:
            moved = session.execute(
                update(DocumentRow)
                .where(DocumentRow.id == document_id, DocumentRow.status != "paused")
                .values(status=stage, **{f"{stage}_started_at": now})
            )
        if moved.rowcount == 0:  # type: ignore[attr-defined]
            raise IndexingPaused(f"document {document_id!r} was paused")

    def _fail(self, document_ids: Sequence[str], reason: str) -> None:
        with self._kb.sessions.begin() as session:
            session.execute(
                update(DocumentRow)
                .where(DocumentRow.id.in_(list(document_ids)))
                .values(status="error", error=reason, error_at=utcnow())
            )

    def _write(
        self,
        index: DatasetIndex,
        pending: list[tuple[str, Sequence[Segment]]],
        timings: dict[str, float] | None,
        on_embedded: Callable[[int, int], None] | None = None,
    ) -> None:
        if not pending:
            return
        try:
            index.write_documents(pending, timings, on_embedded)
        except ZhikuError as exc:
            self._fail([document_id for document_id, _ in pending], f"indexing failed: {exc}")
        except Exception as exc:  # noqa: BLE001 - a store or model failure must mark, not lose, the documents
            self._fail(
                [document_id for document_id, _ in pending], f"indexing failed: {type(exc).__name__}: {exc}"
            )

    def _ingest(
        self,
        sources: Sequence[tuple[str, Path | bytes, str]],
        pipeline: Pipeline | None,
        on_progress: Progress | None,
        timings: dict[str, float] | None,
        document_ids: Sequence[str] | None = None,
        on_embedded: Callable[[int, int], None] | None = None,
    ) -> list[DocumentInfo]:
        pipeline = pipeline or self.pipeline()
        index = self._kb._index(self.id)
        if document_ids is None:
            document_ids = [
                self._new_document(name, source=origin, size=_size(source))
                for name, source, origin in sources
            ]
        pending: list[tuple[str, Sequence[Segment]]] = []
        total = len(sources)
        for done, ((name, source, _origin), document_id) in enumerate(
            zip(sources, document_ids, strict=True), start=1
        ):
            try:
                self._check_size(name, source)
                chunks = pipeline.chunks(
                    source, name, on_stage=functools.partial(self._set_stage, document_id), timings=timings
                )
                if not chunks:
                    raise InvalidInput(f"{name}: no text left after extraction and cleaning")
                self._set_stage(document_id, "indexing")
                segments = self._outcome(document_id, pipeline.index_processor.transform(chunks, document_id))
                if segments is not None:
                    pending.append((document_id, segments))
            except IndexingPaused:
                pass  # the document stays ``paused`` until it is resumed
            except ZhikuError as exc:
                self._fail([document_id], str(exc))
            except Exception as exc:  # noqa: BLE001 - one bad file must not stop the others
                self._fail([document_id], f"{name}: {type(exc).__name__}: {exc}")
            if sum(len(s) for _, s in pending) >= WRITE_BATCH_SEGMENTS or done == total:
                self._write(index, pending, timings, on_embedded)
                pending = []
            if on_progress:
                on_progress(name, done, total)
        return [self.document(document_id) for document_id in document_ids]

    # -- queued indexing and segment editing (the HTTP API's indexing workers and admin) ---------

    def index_waiting(
        self,
        document_id: str,
        *,
        pipeline: Pipeline | None = None,
        on_embedded: Callable[[int, int], None] | None = None,
    ) -> DocumentInfo:
        """Index a document that is already in the database from its stored source file (the
        indexing workers call this for a document they claimed). Earlier segments stay served
        until the new ones replace them; a failure marks it ``error``; a pause stops it.
        ``on_embedded(done, total)`` reports the embedding of its segments."""
        with self._kb.sessions() as session:
            row = session.get(DocumentRow, document_id)
            if row is None or row.dataset_id != self.id:
                raise NotFound(f"no document {document_id!r} in dataset {self.name!r}")
            source = Path(row.source)
        return self._ingest(
            [(source.name, source, str(source))], pipeline, None, None, [document_id], on_embedded
        )[0]

    def segment_editor(self) -> SegmentEditor:
        """Read and edit this dataset's segments one by one (each edit re-indexes that segment)."""
        return SegmentEditor(
            self._kb.sessions, self.id, functools.partial(self._kb._index, self.id), self.process_rule
        )

    # -- search ---------------------------------------------------------------------------------

    def search(self, query: str, **override: Any) -> list[Hit]:
        """Search with the dataset's retrieval config, fields overridden by keyword arguments.

        ``ds.search("...", search_method="full_text_search", top_k=10)``
        """
        config = self.retrieval.merged(override)
        return self.search_with(query, config)

    def search_with(self, query: str, config: RetrievalConfig) -> list[Hit]:
        index = self._kb._index(self.id)
        model = None
        if config.reranking.mode == "reranking_model":
            model = self._kb.rerank_model(config.reranking.model)
        fused = index.search_service.retrieve(query, config, rerank_model=model)
        return self._hits(fused)

    def persist_query_embeddings(self, upcoming: Sequence[str] = ()) -> None:
        """Keep query embeddings in the database cache too (evaluations repeat their queries),
        embedding the ``upcoming`` queries now, in batches."""
        embedding = self._kb._index(self.id).embedding
        embedding.persist_queries = True
        embedding.warm_queries(upcoming)

    def optimize(self) -> None:
        """Build the stores' search indexes after a large ingest (blocking)."""
        self._kb._index(self.id).optimize()

    def _hits(self, fused: Sequence[FusedHit]) -> list[Hit]:
        if not fused:
            return []
        ids = [hit.segment_id for hit in fused]
        with self._kb.sessions() as session:
            rows = session.execute(
                select(SegmentRow, DocumentRow.name)
                .join(DocumentRow, DocumentRow.id == SegmentRow.document_id)
                .where(SegmentRow.id.in_(ids))
            ).all()
        by_id = {segment.id: (segment, document_name) for segment, document_name in rows}
        hits = []
        for item in fused:
            if item.segment_id not in by_id:
                continue
            segment, document_name = by_id[item.segment_id]
            hits.append(
                Hit(
                    segment_id=segment.id,
                    score=item.score,
                    scores=dict(item.scores),
                    ranks=dict(item.ranks),
                    content=segment.content,
                    answer=segment.answer,
                    document_id=segment.document_id,
                    document_name=document_name,
                    dataset_id=self.id,
                    position=segment.position,
                    metadata=dict(segment.seg_metadata or {}),
                )
            )
        return hits


def _size(source: Path | bytes) -> int:
    if isinstance(source, bytes):
        return len(source)
    try:
        return source.stat().st_size
    except OSError:
        return 0
