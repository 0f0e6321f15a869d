"""Dataset: the public facade of one dataset — documents, segments, Q&A pairs and search.

It holds an id and a :class:`DatasetContext`; state lives in the database, ingestion in
:mod:`zhiku.knowledge_base.indexing.ingestion`, the write path in
:mod:`zhiku.knowledge_base.indexing.dataset_index`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError

from zhiku.core.db import DatasetRow, DocumentRow, SegmentRow
from zhiku.core.db.models import SUMMARY_KIND, ChildChunkRow
from zhiku.core.document_status import IN_PROGRESS, RESTARTABLE, DocumentStatus
from zhiku.core.documents import Chunk, Hit, Segment, content_hash, segment_id
from zhiku.core.errors import AlreadyExists, ConfigError, InvalidInput, NotFound, ZhikuError
from zhiku.core.metadata import MetadataFilter
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.core.scope import DocumentScope
from zhiku.fusion.registry import check_fusion_mode
from zhiku.index_processors import ChunkFailure
from zhiku.index_processors.qa import renumber
from zhiku.index_processors.summary import SUMMARY_OF
from zhiku.knowledge_base import llm_options
from zhiku.knowledge_base.automatic_filter import AutomaticFilterResult, automatic_filter
from zhiku.knowledge_base.catalog import Catalog
from zhiku.knowledge_base.context import DatasetContext
from zhiku.knowledge_base.hits import hits_of
from zhiku.knowledge_base.indexing.dataset_index import DocumentVersion
from zhiku.knowledge_base.indexing.ingestion import (
    EmbeddingProgress,
    Ingestion,
    Progress,
    Source,
    new_document,
)
from zhiku.knowledge_base.indexing.pipeline import Pipeline, PipelineSpec
from zhiku.knowledge_base.indexing.qa_import import read_qa_csv
from zhiku.knowledge_base.indexing.segments import SegmentEditor
from zhiku.knowledge_base.metadata import DatasetMetadata
from zhiku.knowledge_base.records import DocumentInfo, child_of, segment_of
from zhiku.knowledge_base.runtime.jobs import DocumentIndexing
from zhiku.knowledge_base.sections import DatasetSections, SectionInfo
from zhiku.providers.llm import ChatModel

S = DocumentStatus

#: What ingesting a file whose content is already in the dataset does: ``skip`` it (the
#: existing document is returned), ``replace`` (index the existing document again from it), or
#: ``keep`` both.
OnDuplicate = Literal["skip", "replace", "keep"]


def as_retrieval_config(value: RetrievalConfig | dict[str, Any] | None) -> RetrievalConfig:
    """A retrieval config whose fusion is installed (ConfigError listing the installed ones)."""
    if value is None:
        return RetrievalConfig()
    config = value if isinstance(value, RetrievalConfig) else RetrievalConfig.from_dict(value)
    check_fusion_mode(config.reranking.mode)
    return config


def as_process_rule(value: PipelineSpec | dict[str, Any] | None) -> PipelineSpec:
    """A validated process rule: its cleaners, splitter and ``doc_form`` must be registered
    names, checked now rather than when the first document is indexed."""
    spec = value if isinstance(value, PipelineSpec) else PipelineSpec.model_validate(value or {})
    spec.check_names()
    # the overlaps the caller's dict sets (a PipelineSpec is built by code: the API checks the
    # overlaps its request sets before it builds one)
    problem = spec.overlap_problem(value.keys() if isinstance(value, dict) else ())
    if problem is not None:
        raise ConfigError(f"process_rule.{problem[0]}: {problem[1]}")
    return spec


@dataclass(frozen=True)
class SyncReport:
    """What :meth:`Dataset.sync_folder` did, by file."""

    added: list[DocumentInfo] = field(default_factory=list)
    updated: list[DocumentInfo] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[DocumentInfo]:
        return [info for info in (*self.added, *self.updated) if info.status == S.ERROR]


class Dataset:
    """One dataset: its documents, segments and search. Cheap to create; state lives in the DB."""

    def __init__(self, context: DatasetContext, dataset_id: str) -> None:
        self._context = context
        self.id = dataset_id

    def __repr__(self) -> str:
        return f"Dataset(id={self.id!r}, name={self.name!r})"

    # -- properties -------------------------------------------------------------------------------

    def _row(self) -> DatasetRow:
        with self._context.sessions() as session:
            row = session.get(DatasetRow, self.id)
            if row is None:
                raise NotFound(f"no dataset {self.id!r}")
            return row

    @property
    def name(self) -> str:
        return self._row().name

    @property
    def description(self) -> str:
        return self._row().description

    @property
    def retrieval(self) -> RetrievalConfig:
        return RetrievalConfig.model_validate(self._row().retrieval_config)

    @property
    def process_rule(self) -> PipelineSpec:
        return PipelineSpec.model_validate(self._row().process_rule)

    @property
    def embedding_model(self) -> str:
        return self._row().embedding_model

    @property
    def tokenizer_settings(self) -> dict[str, Any]:
        """How its text was cut for BM25 and keywords (fixed at creation): ``stemmer``,
        ``han_bigrams``, ``user_dict``, ``stop_words``, ``keyword_count`` where set."""
        return dict(self._row().tokenizer_settings or {})

    def update(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        retrieval: RetrievalConfig | dict[str, Any] | None = None,
        process_rule: PipelineSpec | dict[str, Any] | None = None,
        llm: dict[str, Any] | None = None,
    ) -> None:
        """Change name, description, retrieval config, process rule or chat model options.
        AlreadyExists when the new name is taken."""
        spec = as_process_rule(process_rule) if process_rule is not None else None
        try:
            with self._context.sessions.begin() as session:
                row = session.get(DatasetRow, self.id)
                if row is None:
                    raise NotFound(f"no dataset {self.id!r}")
                if name is not None:
                    if not name.strip():
                        raise InvalidInput("a dataset needs a non-empty name")
                    row.name = name.strip()
                if description is not None:
                    row.description = description
                if retrieval is not None:
                    row.retrieval_config = as_retrieval_config(retrieval).model_dump()
                if spec is not None:
                    row.process_rule = spec.model_dump()
                    row.doc_form = spec.doc_form
                if llm is not None:
                    row.llm_options = llm_options.seal(self._context.secrets, llm)
        except IntegrityError as exc:
            raise AlreadyExists(f"a dataset named {name!r} already exists") from exc

    def stats(self) -> dict[str, Any]:
        with self._context.sessions() as session:
            by_status = dict(
                session.execute(
                    select(DocumentRow.status, func.count())
                    .where(DocumentRow.dataset_id == self.id)
                    .group_by(DocumentRow.status)
                ).all()
            )
            segments = session.scalar(
                select(func.count()).select_from(SegmentRow).where(SegmentRow.dataset_id == self.id)
            )
        return {
            "documents": sum(by_status.values()),
            "by_status": {status: int(count) for status, count in by_status.items()},
            "segments": int(segments or 0),
        }

    # -- documents ------------------------------------------------------------------------------

    def documents(self, *, status: str | None = None, name: str | None = None) -> list[DocumentInfo]:
        """The dataset's documents, oldest first; only those in ``status`` or named exactly
        ``name`` when given (names need not be unique)."""
        query = select(DocumentRow).where(DocumentRow.dataset_id == self.id)
        if status is not None:
            query = query.where(DocumentRow.status == status)
        if name is not None:
            query = query.where(DocumentRow.name == name)
        with self._context.sessions() as session:
            rows = session.scalars(query.order_by(DocumentRow.created_at, DocumentRow.id)).all()
            return [DocumentInfo.of(row) for row in rows]

    def document(self, document_id: str) -> DocumentInfo:
        with self._context.sessions() as session:
            row = session.get(DocumentRow, document_id)
            if row is None or row.dataset_id != self.id:
                raise NotFound(f"no document {document_id!r} in dataset {self.name!r}")
            return DocumentInfo.of(row)

    def segments(self, document_id: str | None = None, *, with_children: bool = False) -> list[Segment]:
        """The segments of one document (or all), in order; ``with_children`` fills each parent's
        ``children`` (parent-child datasets) in order and each segment's ``summary``."""
        with self._context.sessions() as session:
            query = select(SegmentRow).where(SegmentRow.dataset_id == self.id)
            if document_id is not None:
                query = query.where(SegmentRow.document_id == document_id)
            rows = session.scalars(query.order_by(SegmentRow.document_id, SegmentRow.position)).all()
            segments = [segment_of(row) for row in rows]
            if with_children:
                by_id = {segment.id: segment for segment in segments}
                children = select(ChildChunkRow).where(ChildChunkRow.dataset_id == self.id)
                if document_id is not None:
                    children = children.where(ChildChunkRow.document_id == document_id)
                for child in session.scalars(children.order_by(ChildChunkRow.position)):
                    if child.segment_id not in by_id:
                        continue
                    if child.kind == SUMMARY_KIND:
                        by_id[child.segment_id].summary = child_of(child)
                    else:
                        by_id[child.segment_id].children.append(child_of(child))
            return segments

    def delete_document(self, document_id: str) -> None:
        """Delete a document in any status: it stops being served at once, and a run indexing it
        stops at its next checkpoint."""
        self.document(document_id)
        self._context.index(self.id).delete_documents([document_id])

    def set_documents_enabled(self, document_ids: Sequence[str], enabled: bool) -> None:
        """Serve (or stop serving) whole documents; only database rows change."""
        Catalog(self._context.sessions).set_enabled(self.id, document_ids, enabled)

    def word_counts(self, document_ids: Sequence[str]) -> dict[str, int]:
        """Characters of segment text per document (what Dify calls its word count)."""
        return Catalog(self._context.sessions).document_words(document_ids)

    def set_segment_enabled(self, segment_id: str, enabled: bool) -> None:
        """Enable or disable one segment in the database and in both stores."""
        self.set_segments_enabled([segment_id], enabled)

    def set_segments_enabled(self, segment_ids: Sequence[str], enabled: bool) -> None:
        """Enable or disable segments in the database and in both stores; NotFound, before
        anything changes, when one is not in this dataset."""
        index = self._context.index(self.id)
        with index.editing():  # a concurrent edit of the segment would set its stores' flag back
            with self._context.sessions() as session:
                found = set(
                    session.scalars(
                        select(SegmentRow.id).where(
                            SegmentRow.id.in_(list(segment_ids)), SegmentRow.dataset_id == self.id
                        )
                    )
                )
            missing = [segment_id for segment_id in segment_ids if segment_id not in found]
            if missing:
                raise NotFound(f"no segment {missing[0]!r} in dataset {self.name!r}")
            index.set_segments_enabled(list(dict.fromkeys(segment_ids)), enabled)

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
        return self._ingest([Source(name, text.encode("utf-8"), name)], pipeline, on_duplicate)[0]

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
        return self._ingest(sources, pipeline, on_duplicate, on_progress=on_progress, timings=timings)

    def replace_file(
        self, document_id: str, path: str | Path, *, pipeline: Pipeline | None = None
    ) -> DocumentInfo:
        """Re-ingest a document from a new file. Its segments are replaced in every store or in none:
        if the new version fails, the previous segments stay served and the document says why."""
        source = Source.file(path)
        source = dataclasses.replace(source, digest=source.sha256())
        self._restart(document_id, name=source.name[:1024], source=source.origin, size=source.size)
        self._run([source], [document_id], pipeline)
        return self.document(document_id)

    def sync_folder(
        self, folder: str | Path, *, pipeline: Pipeline | None = None, on_progress: Progress | None = None
    ) -> SyncReport:
        """Make the dataset mirror a folder: new files are added, changed files (by content hash)
        re-indexed atomically, documents whose file is gone deleted, the rest left alone — a run
        with nothing changed reads and hashes the files and embeds nothing."""
        root = Path(folder).resolve()
        if not root.is_dir():
            raise InvalidInput(f"{folder}: not a folder")
        files = {
            str(path): path
            for path in sorted(root.rglob("*"))
            if path.is_file() and not any(part.startswith(".") for part in path.relative_to(root).parts)
        }
        prefix = str(root) + os.sep
        with self._context.sessions() as session:
            known = {
                source: (document_id, file_hash, status)
                for document_id, source, file_hash, status in session.execute(
                    select(
                        DocumentRow.id, DocumentRow.source, DocumentRow.file_hash, DocumentRow.status
                    ).where(
                        DocumentRow.dataset_id == self.id,
                        DocumentRow.source.startswith(prefix, autoescape=True),
                    )
                )
            }
        report = SyncReport()
        new_paths: list[Path] = []
        changed: list[tuple[str, Path]] = []
        for origin, path in files.items():
            if origin not in known:
                new_paths.append(path)
                continue
            document_id, file_hash, status = known[origin]
            if status in IN_PROGRESS or status in (S.WAITING, S.PAUSED):
                report.unchanged.append(origin)  # a run of it is under way; the next sync looks again
            elif status == S.ERROR or file_hash != Source.file(path).sha256():
                changed.append((document_id, path))
            else:
                report.unchanged.append(origin)
        for origin, (document_id, _, _) in known.items():
            if origin not in files:
                self.delete_document(document_id)
                report.deleted.append(origin)
        report.added.extend(
            self.add_files(new_paths, pipeline=pipeline, on_progress=on_progress, on_duplicate="keep")
        )
        for document_id, path in changed:
            report.updated.append(self.replace_file(document_id, path, pipeline=pipeline))
        return report

    def add_chunks(
        self,
        documents: Sequence[tuple[str, Sequence[Chunk]]],
        *,
        on_progress: Progress | None = None,
        timings: dict[str, float] | None = None,
    ) -> list[DocumentInfo]:
        """Index pre-made chunks (no extraction or splitting), e.g. an evaluation corpus's passages."""
        ingestion = Ingestion(
            self._context, self.id, self.pipeline(), timings=timings, on_progress=on_progress
        )
        return [self.document(document_id) for document_id in ingestion.run_chunks(documents)]

    def pipeline(self) -> Pipeline:
        """The pipeline built from this dataset's stored process rule."""
        return self.process_rule.build(chat=self.chat_model, settings=self._context.settings)

    def chat_model(self) -> ChatModel:
        """The chat model this dataset's Q&A indexing uses (its ``llm`` options over the defaults)."""
        return self._context.chat_model(llm_options.unseal(self._context.secrets, self._row().llm_options))

    # -- Q&A ------------------------------------------------------------------------------------

    def add_qa_pairs(self, name: str, pairs: Sequence[tuple[str, str]]) -> DocumentInfo:
        """Index question/answer pairs as one document, without any LLM: questions are indexed,
        answers returned beside them (as in a ``qa_model`` dataset)."""
        clean = [(q.strip(), a.strip()) for q, a in pairs if q and q.strip() and a and a.strip()]
        if not clean:
            raise InvalidInput(f"{name}: no question/answer pair with both parts filled")
        document_id = new_document(self._context, self.id, Source(name, b"", "qa_pairs"), status=S.INDEXING)
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
        Ingestion(self._context, self.id, self.pipeline()).write_version(
            DocumentVersion(document_id, segments)
        )
        return self.document(document_id)

    def add_qa_csv(self, path: str | Path) -> DocumentInfo:
        """Import pairs from a CSV file (see :func:`read_qa_csv` for the accepted layouts). Like
        ``add_file``, a bad file does not raise: its document ends ``error`` with the reason."""
        source = Path(path)
        try:
            pairs = read_qa_csv(source)
            return self.add_qa_pairs(source.name, pairs)
        except ZhikuError as exc:  # its messages name the file
            document_id = new_document(self._context, self.id, Source.file(source))
            self._context.states.fail(document_id, str(exc))
            return self.document(document_id)

    def retry_document(self, document_id: str) -> DocumentInfo:
        """Redo what failed: for a document with failed chunks, only those chunks (the pairs
        already indexed stay); for a document that failed as a whole, the whole file again."""
        info = self.document(document_id)
        failed = [ChunkFailure.from_json(item) for item in info.metadata.get("failed_chunks") or []]
        if not failed:
            if info.status != S.ERROR:
                raise InvalidInput(f"document {info.name!r} has nothing to retry (status {info.status})")
            with self._context.sessions() as session:
                row = session.get(DocumentRow, document_id)
                source = Path(row.source) if row is not None else None
            if source is None or not source.is_file():
                raise InvalidInput(f"document {info.name!r} cannot be retried: its source file is gone")
            return self.replace_file(document_id, source)
        pipeline = self.pipeline()
        if not self._context.states.move(document_id, S.INDEXING, only_from=RESTARTABLE):
            raise DocumentIndexing(f"document {document_id!r} is being indexed; wait or pause it first")
        if all(SUMMARY_OF in failure.metadata for failure in failed):
            return self._retry_summaries(document_id, pipeline, failed)
        outcome = pipeline.index_processor.transform([failure.chunk() for failure in failed], document_id)
        merged = renumber([*self.segments(document_id), *outcome.segments], document_id)
        version = DocumentVersion(document_id, merged, [failure.to_json() for failure in outcome.failures])
        if merged:
            Ingestion(self._context, self.id, pipeline).write_version(version)
        else:
            reason = version.error_summary() or "no segments produced"
            self._context.states.fail(document_id, reason, failed_chunks=list(version.failed_chunks))
        return self.document(document_id)

    def _retry_summaries(
        self, document_id: str, pipeline: Pipeline, failed: list[ChunkFailure]
    ) -> DocumentInfo:
        """Summarise again only the segments whose summary failed, and write the document's
        version with them (the other points are rewritten unchanged, their embeddings cached)."""
        segments = self.segments(document_id, with_children=True)
        wanted = {str(failure.metadata[SUMMARY_OF]) for failure in failed}
        missing = [s for s in segments if s.id in wanted and s.summary is None]
        failures = pipeline.summarizer.summarize(missing) if pipeline.summarizer is not None else []
        version = DocumentVersion(document_id, segments, [failure.to_json() for failure in failures])
        Ingestion(self._context, self.id, pipeline).write_version(version)
        return self.document(document_id)

    # -- queued indexing and segment editing (the HTTP API's indexing workers and admin) ---------

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
        with self._context.sessions() as session:
            row = session.get(DocumentRow, document_id)
            if row is None or row.dataset_id != self.id:
                raise NotFound(f"no document {document_id!r} in dataset {self.name!r}")
            path = Path(row.source)
        source = source or Source(path.name, path, str(path))
        self._run([source], [document_id], pipeline, on_embedded=on_embedded)
        return self.document(document_id)

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
            self._context, self.id, pipeline or self.pipeline(), on_embedded=on_embedded, open_stores=False
        )
        return ingestion.prepare(source, document_id)

    def segment_editor(self) -> SegmentEditor:
        """Read and edit this dataset's segments one by one (each edit re-indexes that segment)."""
        return SegmentEditor(
            self._context.sessions, self.id, lambda: self._context.index(self.id), self.process_rule
        )

    # -- search ---------------------------------------------------------------------------------

    def search(
        self, query: str, *, filter: MetadataFilter | dict[str, Any] | None = None, **override: Any
    ) -> list[Hit]:
        """Search with the dataset's retrieval config, fields overridden by keyword arguments.

        ``ds.search("...", search_method="full_text_search", top_k=10)``; ``filter`` keeps only
        documents whose metadata pass it (Dify's ``metadata_filtering_conditions`` shape:
        ``{"logical_operator": "and", "conditions": [{"name", "comparison_operator", "value"}]}``);
        ``section="Guide > Install"`` keeps only segments in that section or one under it.
        """
        if filter is not None:
            override["metadata_filter"] = filter
        return self.search_with(query, self.retrieval.merged(override))

    def search_with(
        self, query: str, config: RetrievalConfig, *, semantic_query: str | None = None
    ) -> list[Hit]:
        """Search with ``config``; ``semantic_query`` (a HyDE passage) drives semantic search in
        place of ``query`` when given."""
        index = self._context.index(self.id)
        model = None
        if config.reranking.mode == "reranking_model":
            model = self._context.rerank_model(config.reranking.model)
        scope = self._scope(query, config)
        fused = index.search_service.retrieve(
            query, config, rerank_model=model, semantic_query=semantic_query, scope=scope
        )
        return hits_of(self._context.sessions, self.id, fused)

    def automatic_filter(self, question: str) -> AutomaticFilterResult:
        """The metadata conditions the chat model writes for ``question`` over this dataset's
        fields (what ``metadata_filtering_mode="automatic"`` applies), with notes on any dropped."""
        metadata = self.metadata
        return automatic_filter(
            self.chat_model(), question, metadata.fields(), builtin=metadata.builtin_enabled
        )

    def _scope(self, query: str, config: RetrievalConfig) -> DocumentScope | None:
        """What a search may return: the documents the manual filter and the automatic one keep,
        in the config's section."""
        metadata = self.metadata
        scope = metadata.scope(config.metadata_filter) if config.metadata_filter else None
        if config.metadata_filtering_mode == "automatic":
            written = self.automatic_filter(query).metadata_filter
            automatic = metadata.scope(written) if written is not None else None
            if automatic is not None:
                scope = automatic if scope is None else scope.intersect(automatic)
        if config.section is not None:
            in_section = DocumentScope.of_section(config.section)
            scope = in_section if scope is None else scope.intersect(in_section)
        return scope

    def count_hits(self, segment_ids: Sequence[str]) -> None:
        """Add one to the ``hit_count`` of each segment a retrieval returned (the API counts the
        hits it answers with; library searches and evaluations count nothing)."""
        ids = sorted(set(segment_ids))
        if ids:
            with self._context.sessions.begin() as session:
                session.execute(
                    update(SegmentRow)
                    .where(SegmentRow.id.in_(ids), SegmentRow.dataset_id == self.id)
                    .values(hit_count=SegmentRow.hit_count + 1)
                )

    def sections(self) -> list[SectionInfo]:
        """The dataset's sections (heading paths) with their segment counts and descriptions;
        ``search(..., section=name)`` restricts a search to one and the sections under it."""
        return DatasetSections(self._context.sessions, self.id).all()

    def describe_section(self, name: str, description: str | None) -> SectionInfo:
        """Set the description of section ``name`` (None or blank removes it): what an answer's
        intent step reads to choose a section."""
        return self.describe_sections({name: description})[0]

    def describe_sections(self, descriptions: dict[str, str | None]) -> list[SectionInfo]:
        """:meth:`describe_section` for several sections, all or none."""
        return DatasetSections(self._context.sessions, self.id).describe_many(descriptions)

    @property
    def metadata(self) -> DatasetMetadata:
        """The dataset's metadata fields, its documents' values, and filters over them."""
        return DatasetMetadata(self._context.sessions, self.id)

    def persist_query_embeddings(self, upcoming: Sequence[str] = ()) -> None:
        """Keep query embeddings in the database cache too (evaluations repeat their queries),
        embedding the ``upcoming`` queries now, in batches."""
        embedding = self._context.index(self.id).embedding
        embedding.persist_queries = True
        embedding.warm_queries(upcoming)

    def optimize(self) -> None:
        """Build the stores' search indexes after a large ingest (writes wait; searches go on)."""
        self._context.index(self.id).optimize()

    def rebuild_keywords(
        self,
        *,
        batch_size: int = 500,
        should_stop: Callable[[], bool] | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> int:
        """Rebuild the keyword postings from the segments, re-reading the jieba user dictionary:
        after it changed, or the extraction did. One transaction per ``batch_size`` points;
        ``should_stop`` is asked between batches. Returns the points rebuilt."""
        return self._context.index(self.id).rebuild_keywords(
            batch_size=batch_size, should_stop=should_stop, on_progress=on_progress
        )

    # -- internals ------------------------------------------------------------------------------

    def _ingest(
        self,
        sources: Sequence[Source],
        pipeline: Pipeline | None,
        on_duplicate: OnDuplicate,
        *,
        on_progress: Progress | None = None,
        timings: dict[str, float] | None = None,
    ) -> list[DocumentInfo]:
        """New documents for ``sources``, or the existing ones their content duplicates."""
        results: list[tuple[str, str | None]] = []  # (document id, what a duplicate got)
        to_run: list[tuple[Source, str]] = []
        for plain in sources:
            digest = plain.sha256()
            source = dataclasses.replace(plain, digest=digest)
            existing = self._duplicate(digest, source.origin) if digest and on_duplicate != "keep" else None
            if existing is not None and on_duplicate == "skip" and existing.status != S.ERROR:
                results.append((existing.id, "skipped"))
                continue
            if existing is not None:  # replace, or retry a failed one: index the existing one again
                self._restart(existing.id, source=source.origin, size=source.size, name=source.name[:1024])
                to_run.append((source, existing.id))
                results.append((existing.id, "replaced"))
                continue
            document_id = new_document(self._context, self.id, source, file_hash=digest)
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
                info = self.document(document_id)
            except NotFound:
                continue  # deleted while it was being ingested
            infos.append(dataclasses.replace(info, duplicate=duplicate) if duplicate else info)
        return infos

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
            self.id,
            pipeline or self.pipeline(),
            timings=timings,
            on_progress=on_progress,
            on_embedded=on_embedded,
        )
        ingestion.run(sources, document_ids)

    def _duplicate(self, digest: str, origin: str) -> DocumentInfo | None:
        """The document ``digest`` duplicates: one with that content that is served or under way,
        else a failed one from the same source (ingesting it again retries it)."""
        with self._context.sessions() as session:
            rows = session.scalars(
                select(DocumentRow)
                .where(DocumentRow.dataset_id == self.id, DocumentRow.file_hash == digest)
                .order_by(DocumentRow.created_at)
            ).all()
            live = [row for row in rows if row.status != S.ERROR]
            retry = [row for row in rows if row.status == S.ERROR and row.source == origin]
            found = live or retry
            return DocumentInfo.of(found[0]) if found else None

    def _restart(self, document_id: str, **values: Any) -> None:
        """Queue a finished or failed document for a new run (its current version stays served)."""
        self.document(document_id)
        if not self._context.states.move(document_id, S.WAITING, only_from=RESTARTABLE, error=None, **values):
            raise DocumentIndexing(f"document {document_id!r} is being indexed; wait or pause it first")
