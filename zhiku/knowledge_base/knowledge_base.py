"""KnowledgeBase and Dataset: the public facade that wires settings, database, stores and pipeline.

>>> kb = KnowledgeBase.open("/tmp/kb")                                  # doctest: +SKIP
>>> ds = kb.create_dataset("handbook", description="Company handbook")  # doctest: +SKIP
>>> ds.add_file("handbook.pdf")                                         # doctest: +SKIP
>>> ds.search("年假有几天？")                                             # doctest: +SKIP
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.config import Settings
from zhiku.core.db import DatasetRow, DocumentRow, SegmentRow, make_engine, make_session_factory
from zhiku.core.db.models import utcnow
from zhiku.core.documents import Chunk, Hit, Segment
from zhiku.core.errors import AlreadyExists, InvalidInput, NotFound, ZhikuError
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.knowledge_base.dataset_index import DatasetIndex, open_embedding
from zhiku.knowledge_base.pipeline import Pipeline, PipelineSpec, Stage
from zhiku.knowledge_base.records import IN_PROGRESS, DocumentInfo
from zhiku.rerank.types import FusedHit

#: Segments gathered from several documents before one embedding + store write.
WRITE_BATCH_SEGMENTS = 2048

Progress = Callable[[str, int, int], None]


class KnowledgeBase:
    """A data directory (or database URL + Qdrant URL) holding any number of datasets."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        settings.home.mkdir(parents=True, exist_ok=True)
        self._engine = make_engine(settings.resolved_database_url)
        self._sessions: sessionmaker[Session] = make_session_factory(self._engine)
        self._indexes: dict[str, DatasetIndex] = {}
        self._lock = threading.Lock()
        self._recover_interrupted()

    @classmethod
    def open(cls, home: str | Path | None = None, **settings: Any) -> KnowledgeBase:
        """Open (creating if needed) the knowledge base in ``home``.

        ``home`` defaults to ``ZHIKU_HOME`` or ``~/.zhiku``; ``settings`` override ``zhiku.toml``.
        """
        return cls(Settings.load(home, **settings))

    def __enter__(self) -> KnowledgeBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            for index in self._indexes.values():
                index.close()
            self._indexes.clear()
        self._engine.dispose()

    # -- datasets ------------------------------------------------------------------------------

    def create_dataset(
        self,
        name: str,
        *,
        description: str = "",
        retrieval: RetrievalConfig | dict[str, Any] | None = None,
        process_rule: PipelineSpec | dict[str, Any] | None = None,
        embedding_model: str | None = None,
        embedding_options: dict[str, Any] | None = None,
        user_dict: str | Path | None = None,
        stop_words: Iterable[str] | None = None,
        keyword_count: int | None = None,
    ) -> Dataset:
        """Create a dataset. The embedding model is fixed at creation (its vectors fill the store)."""
        if not name or not name.strip():
            raise InvalidInput("a dataset needs a non-empty name")
        config = _retrieval_config(retrieval)
        rule = (
            process_rule
            if isinstance(process_rule, PipelineSpec)
            else PipelineSpec.model_validate(process_rule or {})
        )
        model_name = embedding_model or self.settings.embedding_model
        options = dict(embedding_options or {})
        dim = open_embedding(model_name, options, self._sessions).dim
        tokenizer_settings: dict[str, Any] = {"keyword_count": keyword_count or self.settings.keyword_count}
        if user_dict:
            tokenizer_settings["user_dict"] = str(Path(user_dict).resolve())
        if stop_words is not None:
            tokenizer_settings["stop_words"] = sorted(set(stop_words))
        row = DatasetRow(
            name=name.strip(),
            description=description,
            embedding_model=model_name,
            embedding_options=options,
            embedding_dim=dim,
            retrieval_config=config.model_dump(),
            process_rule=rule.model_dump(),
            tokenizer_settings=tokenizer_settings,
            doc_form=rule.doc_form,
        )
        try:
            with self._sessions.begin() as session:
                session.add(row)
        except IntegrityError as exc:
            raise AlreadyExists(f"a dataset named {name!r} already exists") from exc
        return Dataset(self, row.id)

    def dataset(self, name_or_id: str) -> Dataset:
        """A dataset by id or by name; :class:`NotFound` otherwise."""
        with self._sessions() as session:
            row = session.get(DatasetRow, name_or_id) or session.scalar(
                select(DatasetRow).where(DatasetRow.name == name_or_id)
            )
            if row is None:
                raise NotFound(f"no dataset {name_or_id!r}")
            return Dataset(self, row.id)

    def datasets(self) -> list[Dataset]:
        with self._sessions() as session:
            ids = session.scalars(select(DatasetRow.id).order_by(DatasetRow.created_at))
            return [Dataset(self, dataset_id) for dataset_id in ids]

    def delete_dataset(self, name_or_id: str) -> None:
        """Delete a dataset with its documents, segments and every store's data."""
        dataset = self.dataset(name_or_id)
        index = self._index(dataset.id)
        with self._lock:
            self._indexes.pop(dataset.id, None)
        index.drop()
        with self._sessions.begin() as session:
            row = session.get(DatasetRow, dataset.id)
            if row is not None:
                session.delete(row)

    # -- internals shared with Dataset -----------------------------------------------------------

    @property
    def sessions(self) -> sessionmaker[Session]:
        return self._sessions

    def _row(self, dataset_id: str) -> DatasetRow:
        with self._sessions() as session:
            row = session.get(DatasetRow, dataset_id)
            if row is None:
                raise NotFound(f"no dataset {dataset_id!r}")
            return row

    def _index(self, dataset_id: str) -> DatasetIndex:
        with self._lock:
            index = self._indexes.get(dataset_id)
            if index is None:
                index = DatasetIndex(self.settings, self._sessions, self._row(dataset_id))
                self._indexes[dataset_id] = index
                if dataset_id in self._dirty:
                    index.sweep_orphans()
                    self._dirty.discard(dataset_id)
            return index

    def _recover_interrupted(self) -> None:
        """Documents caught mid-ingest by a crash are marked ``error``; their datasets get swept."""
        with self._sessions.begin() as session:
            rows = session.scalars(select(DocumentRow).where(DocumentRow.status.in_(IN_PROGRESS))).all()
            self._dirty = {row.dataset_id for row in rows}
            for row in rows:
                stage = row.status
                row.status = "error"
                row.error = f"interrupted during {stage}: the process stopped; re-ingest the file"
                row.error_at = utcnow()


def _retrieval_config(value: RetrievalConfig | dict[str, Any] | None) -> RetrievalConfig:
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
    ) -> None:
        """Change name, description, retrieval config (the method per dataset) or process rule."""
        with self._kb.sessions.begin() as session:
            row = session.get(DatasetRow, self.id)
            if row is None:
                raise NotFound(f"no dataset {self.id!r}")
            if name is not None:
                row.name = name
            if description is not None:
                row.description = description
            if retrieval is not None:
                row.retrieval_config = _retrieval_config(retrieval).model_dump()
            if process_rule is not None:
                spec = (
                    process_rule
                    if isinstance(process_rule, PipelineSpec)
                    else PipelineSpec.model_validate(process_rule)
                )
                row.process_rule = spec.model_dump()

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
            return [
                Segment(
                    id=r.id,
                    document_id=r.document_id,
                    position=r.position,
                    content=r.content,
                    tokens=r.tokens,
                    hash=r.hash,
                    keywords=list(r.keywords or []),
                    answer=r.answer,
                    enabled=r.enabled,
                    metadata=dict(r.seg_metadata or {}),
                )
                for r in rows
            ]

    def delete_document(self, document_id: str) -> None:
        self.document(document_id)
        self._kb._index(self.id).delete_documents([document_id])

    def set_segment_enabled(self, segment_id: str, enabled: bool) -> None:
        """Enable or disable one segment in the database and in both stores."""
        with self._kb.sessions.begin() as session:
            row = session.get(SegmentRow, segment_id)
            if row is None or row.dataset_id != self.id:
                raise NotFound(f"no segment {segment_id!r} in dataset {self.name!r}")
            row.enabled = enabled
        index = self._kb._index(self.id)
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
            pending.append((document_id, processor.transform(chunks, document_id)))
            if sum(len(s) for _, s in pending) >= WRITE_BATCH_SEGMENTS or done == total:
                self._write(index, pending, timings)
                pending = []
            if on_progress:
                on_progress(name, done, total)
        return [self.document(document_id) for document_id in infos]

    def pipeline(self) -> Pipeline:
        """The pipeline built from this dataset's stored process rule."""
        return self.process_rule.build()

    def _new_document(self, name: str, *, source: str, status: str = "waiting", size: int = 0) -> str:
        row = DocumentRow(dataset_id=self.id, name=name[:1024], source=source, status=status, size=size)
        if status == "indexing":
            row.indexing_started_at = utcnow()
        with self._kb.sessions.begin() as session:
            session.add(row)
        return row.id

    def _set_stage(self, document_id: str, stage: Stage | str) -> None:
        now = utcnow()
        with self._kb.sessions.begin() as session:
            session.execute(
                update(DocumentRow)
                .where(DocumentRow.id == document_id)
                .values(status=stage, **{f"{stage}_started_at": now})
            )

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
    ) -> None:
        if not pending:
            return
        try:
            index.write_documents(pending, timings)
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
                chunks = pipeline.chunks(
                    source, name, on_stage=functools.partial(self._set_stage, document_id), timings=timings
                )
                if not chunks:
                    raise InvalidInput(f"{name}: no text left after extraction and cleaning")
                self._set_stage(document_id, "indexing")
                pending.append((document_id, pipeline.index_processor.transform(chunks, document_id)))
            except ZhikuError as exc:
                self._fail([document_id], str(exc))
            except Exception as exc:  # noqa: BLE001 - one bad file must not stop the others
                self._fail([document_id], f"{name}: {type(exc).__name__}: {exc}")
            if sum(len(s) for _, s in pending) >= WRITE_BATCH_SEGMENTS or done == total:
                self._write(index, pending, timings)
                pending = []
            if on_progress:
                on_progress(name, done, total)
        return [self.document(document_id) for document_id in document_ids]

    # -- search ---------------------------------------------------------------------------------

    def search(self, query: str, **override: Any) -> list[Hit]:
        """Search with the dataset's retrieval config, fields overridden by keyword arguments.

        ``ds.search("...", search_method="full_text_search", top_k=10)``
        """
        config = self.retrieval.merged(override)
        return self.search_with(query, config)

    def search_with(self, query: str, config: RetrievalConfig) -> list[Hit]:
        index = self._kb._index(self.id)
        fused = index.search_service.retrieve(query, config)
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
