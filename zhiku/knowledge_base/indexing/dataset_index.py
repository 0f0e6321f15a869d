"""A dataset's three stores plus its embedding model, and the write path that keeps them in step.

Write protocol for a new version of a document (what makes "all stores or none" hold without a
distributed transaction):

1. embed the new segments (cached batch by batch, outside the dataset's write lock);
2. upsert them into the vector and full-text stores and flush both: the points are durable, and
   invisible, because search serves only segments whose rows exist;
3. in ONE database transaction: move the document ``indexing`` → ``completed`` (conditionally:
   a document paused or deleted meanwhile is left alone), swap its segment rows and keyword
   postings — this commit is the moment the new version becomes visible;
4. delete the points the new version no longer uses.

A failure in 2 or 3 discards the new points and leaves the previous version served; a crash
anywhere leaves points without rows, which are invisible and swept at the next open. Segment
edits keep their ids and overwrite points, so they are journalled first (``write_segments``).

Points: a segment is a point of the stores unless it has child chunks (parent-child index);
then its children are, each with its own row in ``child_chunks`` and the parent's document id in
the stores' payload. A segment's summary (summary index) is one more point beside those, with a
``child_chunks`` row of kind ``summary`` and a ``summary`` flag in the stores' payload, so a
search leaves it out unless asked. Rows of segments, children and summaries are written in the
same transaction, so the protocol above holds for all.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import Engine, bindparam, delete, func, insert, select, update
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.config import Settings
from zhiku.core.db.models import (
    CHILD_KIND,
    SUMMARY_KIND,
    ChildChunkRow,
    DatasetRow,
    DocumentRow,
    PendingSegmentWriteRow,
    SegmentRow,
    utcnow,
)
from zhiku.core.document_status import DocumentStatus
from zhiku.core.documents import ChildChunk, Segment
from zhiku.core.errors import ConfigError, StoreError, ZhikuError
from zhiku.core.scope import DocumentScope
from zhiku.core.sections import section_of
from zhiku.datasource.fulltext.base import TextRecord
from zhiku.datasource.keyword import KeywordExtractor, KeywordStore
from zhiku.datasource.keyword.store import CHILD_POSTINGS
from zhiku.datasource.points.base import SegmentStore
from zhiku.datasource.stores import open_fulltext, open_vector
from zhiku.datasource.vector.base import VectorRecord
from zhiku.index_processors.summary import SUMMARY_OF
from zhiku.knowledge_base.indexing.document_states import move_in, served_condition
from zhiku.knowledge_base.indexing.embedding_cache import DatabaseEmbeddingCache
from zhiku.knowledge_base.indexing.keyword_rebuild import BATCH_SIZE, rebuild_keywords
from zhiku.knowledge_base.records import child_of, segment_of
from zhiku.knowledge_base.runtime.db_locks import DatasetLock
from zhiku.providers.embedding import CachedEmbedding, create_embedding_model
from zhiku.retrieval.dataset_search import DatasetSearch
from zhiku.retrieval.relevance import shipped_calibration
from zhiku.text.tokenizer import Tokenizer

log = logging.getLogger(__name__)
S = DocumentStatus

_UPSERT_BATCH = 512
_SEGMENTS = SegmentRow.metadata.tables[SegmentRow.__tablename__]
_CHILDREN = SegmentRow.metadata.tables[ChildChunkRow.__tablename__]


@dataclass(frozen=True)
class _Point:
    """What one store point indexes: a segment without children, or a child chunk or summary
    of the segment ``parent``; ``section`` is its segment's heading path (a child's or summary's
    is its segment's)."""

    id: str
    document_id: str
    content: str
    enabled: bool
    parent: str | None = None
    summary: bool = False
    section: str | None = None


def _points_of(segments: Sequence[Segment]) -> list[_Point]:
    """The points of these segments: each one's children if it has any, else itself, and its
    summary if it has one. A child's (or summary's) store flag is on only if it and its segment
    are enabled (never stricter than the rows)."""
    points: list[_Point] = []
    for s in segments:
        section = section_of(s.metadata)
        if s.children:
            points.extend(
                _Point(c.id, s.document_id, c.content, c.enabled and s.enabled, s.id, section=section)
                for c in s.children
            )
        else:
            points.append(_Point(s.id, s.document_id, s.content, s.enabled, section=section))
        if s.summary is not None:
            summary = s.summary
            points.append(
                _Point(
                    summary.id,
                    s.document_id,
                    summary.content,
                    summary.enabled and s.enabled,
                    s.id,
                    summary=True,
                    section=section,
                )
            )
    return points


def points_of_segment(segment: Segment) -> list[Segment | ChildChunk]:
    """What carries the keywords of a segment's points: its children or itself, and its summary."""
    items: list[Segment | ChildChunk] = list(segment.children) or [segment]
    if segment.summary is not None:
        items.append(segment.summary)
    return items


def open_embedding(name: str, options: dict[str, Any], sessions: sessionmaker[Session]) -> CachedEmbedding:
    """The dataset's embedding model wrapped with the database cache."""
    return CachedEmbedding(create_embedding_model(name, **options), DatabaseEmbeddingCache(sessions))


#: The served ids among some candidates (what every search asks): by primary key only, since a
#: dataset_id condition lets some planners scan the dataset's index instead (measured: 61 ms vs
#: 0.6 ms at 100k segments on SQLite); built once, so each search only binds the ids. The covering
#: indexes ``ix_segments_served`` and ``ix_documents_served`` answer it without reading the rows.
_SERVED_IDS = (
    select(SegmentRow.id, SegmentRow.dataset_id)
    .join(DocumentRow, DocumentRow.id == SegmentRow.document_id)
    .where(SegmentRow.id.in_(bindparam("ids", expanding=True)))
    .where(served_condition())
)


def _engine_of(sessions: sessionmaker[Session]) -> Engine:
    engine = sessions.kw.get("bind")
    if not isinstance(engine, Engine):
        raise TypeError("the session factory must be bound to an engine")
    return engine


@dataclass(frozen=True)
class DocumentVersion:
    """A new version of one document, ready to write: its segments and the chunks its index
    processor could not turn into segments (recorded on the document with the version)."""

    document_id: str
    segments: Sequence[Segment]
    failed_chunks: Sequence[dict[str, Any]] = ()
    #: the content hash of the source this version was made from, recorded when it is committed
    file_hash: str | None = None

    def error_summary(self) -> str | None:
        if not self.failed_chunks:
            return None
        summaries = [f for f in self.failed_chunks if SUMMARY_OF in (f.get("metadata") or {})]
        chunks = [f for f in self.failed_chunks if SUMMARY_OF not in (f.get("metadata") or {})]
        parts = [_failures_text(chunks, "chunk", "chunk(s) not indexed")] if chunks else []
        if summaries:
            parts.append(_failures_text(summaries, "segment", "segment(s) served without summary"))
        return "; ".join(parts)


def _failures_text(failures: Sequence[dict[str, Any]], what: str, headline: str) -> str:
    reasons = "; ".join(f"{what} {f['position']}: {f['reason']}" for f in failures[:5])
    more = f" (and {len(failures) - 5} more)" if len(failures) > 5 else ""
    return f"{len(failures)} {headline}: {reasons}{more}"


class _SemanticChannel:
    def __init__(self, index: DatasetIndex) -> None:
        self._index = index

    def holds_gil(self, query: str) -> bool:
        # a query to embed runs the model, which leaves the GIL to the other channels meanwhile
        return self._index.vector.holds_gil and self._index.embedding.has_query(query)

    def search(
        self, query: str, limit: int, scope: DocumentScope | None = None, *, summaries: bool = False
    ) -> list[tuple[str, float]]:
        if scope is not None and scope.empty:
            return []
        vector = self._index.embedding.embed_query(query)
        return self._index.vector.search(vector, limit, scope, summaries=summaries)


class _FullTextChannel:
    def __init__(self, index: DatasetIndex) -> None:
        self._index = index

    def holds_gil(self, query: str) -> bool:
        return self._index.fulltext.holds_gil

    def search(
        self, query: str, limit: int, scope: DocumentScope | None = None, *, summaries: bool = False
    ) -> list[tuple[str, float]]:
        self._index.follow_user_dict()
        terms = self._index.tokenizer.terms(query)
        return self._index.fulltext.search(terms, limit, scope, summaries=summaries)

    def attainable(self, query: str) -> float:
        return self._index.fulltext.attainable(self._index.tokenizer.terms(query))


def _mtime(path: Path | None) -> float | None:
    """When ``path`` was last written (None: no file)."""
    try:
        return path.stat().st_mtime if path is not None else None
    except OSError:
        return None


class _KeywordChannel:
    """Keyword postings of segments and, once the dataset has any, of child chunks (and of
    summaries, when asked for), merged."""

    def __init__(self, index: DatasetIndex) -> None:
        self._index = index

    def holds_gil(self, query: str) -> bool:
        return False  # SQLite and PostgreSQL read the postings without the GIL

    def attainable(self, query: str) -> float:
        index = self._index
        found = index.keywords.attainable(query)
        return max(found, index.child_keywords.attainable(query)) if index.has_children else found

    def search(
        self, query: str, limit: int, scope: DocumentScope | None = None, *, summaries: bool = False
    ) -> list[tuple[str, float]]:
        self._index.follow_user_dict()
        found = self._index.keywords.search(query, limit, scope)
        if self._index.has_children:
            children = self._index.child_keywords.search(query, limit, scope, summaries=summaries)
            found = sorted(found + children, key=lambda h: (-h[1], h[0]))[:limit]
        return found


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
        self.vector = open_vector(settings, dataset.id, dataset.embedding_dim)
        self.fulltext = open_fulltext(settings, dataset.id)
        self.keywords = KeywordStore(sessions, dataset.id, self.tokenizer)
        self.child_keywords = KeywordStore(sessions, dataset.id, self.tokenizer, CHILD_POSTINGS)
        with sessions() as session:
            # once true, stays true: a dataset that ever had children asks for parents on each search
            first_child = select(ChildChunkRow.id).where(ChildChunkRow.dataset_id == dataset.id).limit(1)
            self._has_children = session.scalar(first_child) is not None
        # re-entrant: an edit holds it from reading a segment to writing it (see ``editing``);
        # on PostgreSQL it holds every process on the database, not only this one's threads
        self._engine = _engine_of(sessions)
        self._write_lock = DatasetLock(self._engine, dataset.id)
        self.search_service = DatasetSearch(
            {
                "semantic": _SemanticChannel(self),
                "full_text": _FullTextChannel(self),
                "keyword": _KeywordChannel(self),
            },
            live_segments=self.live_segments,
            live_ids=self.live_ids,
            parents=self.parents_of,
            calibration=shipped_calibration(dataset.embedding_model),
        )

    # -- reading -----------------------------------------------------------------------------

    @property
    def has_children(self) -> bool:
        return self._has_children

    def parents_of(self, ids: Sequence[str]) -> dict[str, str]:
        """``{child_id: parent segment id}`` for the enabled child chunks among these point ids
        (whether the parent is served is :meth:`live_segments`' answer)."""
        if not ids or not self._has_children:
            return {}
        with self._sessions() as session:
            rows = session.execute(
                select(ChildChunkRow.id, ChildChunkRow.segment_id, ChildChunkRow.dataset_id).where(
                    ChildChunkRow.id.in_(list(ids)), ChildChunkRow.enabled.is_(True)
                )
            )
            return {child: parent for child, parent, dataset_id in rows if dataset_id == self.dataset_id}

    def live_segments(self, ids: Sequence[str]) -> dict[str, str]:
        """Contents of the ids that are served (see :func:`served_condition`)."""
        if not ids:
            return {}
        with self._sessions() as session:
            # Look up by primary key only: a dataset_id condition lets some planners scan the
            # dataset's index instead (measured: 61 ms vs 0.6 ms at 100k segments on SQLite).
            rows = session.execute(
                select(SegmentRow.id, SegmentRow.content, SegmentRow.dataset_id)
                .join(DocumentRow, DocumentRow.id == SegmentRow.document_id)
                .where(SegmentRow.id.in_(list(ids)))
                .where(served_condition())
            )
            return {
                segment_id: content
                for segment_id, content, dataset_id in rows
                if dataset_id == self.dataset_id
            }

    def live_ids(self, ids: Sequence[str]) -> set[str]:
        """The served ids among these (:meth:`live_segments` without the texts): one query on a
        plain connection, no ORM session, as it runs on every search."""
        if not ids:
            return set()
        with self._engine.connect() as connection:
            rows = connection.execute(_SERVED_IDS, {"ids": list(ids)}).all()  # one fetch, not one per row
            return {segment_id for segment_id, dataset_id in rows if dataset_id == self.dataset_id}

    # -- writing -----------------------------------------------------------------------------

    def write_documents(
        self,
        batch: Sequence[DocumentVersion],
        timings: dict[str, float] | None = None,
        on_embedded: Callable[[int, int], None] | None = None,
    ) -> list[str]:
        """Replace each document's segments with a new version and mark it completed.

        Returns the ids committed; a document paused or deleted meanwhile is left as it is (its
        new points are discarded). A failure raises after discarding the new points: no document
        of the batch changed, each still serves what it served before.
        """
        clock = timings if timings is not None else {}
        segments = [segment for version in batch for segment in version.segments]
        points = _points_of(segments)
        started = time.perf_counter()
        # embedding is the slow part: outside the lock, so deletes and edits are not held up
        vectors = (
            self.embedding.embed_documents([p.content for p in points], on_progress=on_embedded)
            if points
            else np.zeros((0, self.embedding.dim), dtype=np.float32)
        )
        clock["embed"] = clock.get("embed", 0.0) + time.perf_counter() - started
        started = time.perf_counter()
        token_lists = [self.tokenizer.tokenize(p.content) for p in points]
        items = {item.id: item for segment in segments for item in points_of_segment(segment)}
        postings = {
            p.id: self._postings(items[p.id], tokens) for p, tokens in zip(points, token_lists, strict=True)
        }
        with self._write_lock.hold():
            document_ids = [version.document_id for version in batch]
            old = self._point_ids_by_document(document_ids)
            reused = set().union(*old.values()) if old else set()
            fresh = [p.id for p in points if p.id not in reused]
            try:
                self._upsert_points(points, vectors, token_lists)
                self.vector.flush()  # durable before any row can point at them
                self.fulltext.flush()
                with self._sessions.begin() as session:
                    committed = [
                        version.document_id
                        for version in batch
                        if self._commit_version(session, version, postings)
                    ]
            except Exception:
                self._discard_points(fresh)
                raise
            done = set(committed)
            dropped = [p.id for p in points if p.document_id not in done and p.id not in reused]
            kept = {p.id for p in points if p.document_id in done}
            stale = [i for document_id in committed for i in old.get(document_id, set()) if i not in kept]
            self._discard_points(dropped + stale)
        clock["index"] = clock.get("index", 0.0) + time.perf_counter() - started
        return committed

    def _point_ids_by_document(self, document_ids: Sequence[str]) -> dict[str, set[str]]:
        """The ids of the points these documents' rows index now."""
        found: dict[str, set[str]] = {}
        with self._sessions() as session:
            parents: set[str] = set()
            if self._has_children:
                for child_id, parent_id, document_id, kind in session.execute(
                    select(
                        ChildChunkRow.id,
                        ChildChunkRow.segment_id,
                        ChildChunkRow.document_id,
                        ChildChunkRow.kind,
                    ).where(ChildChunkRow.document_id.in_(document_ids))
                ):
                    found.setdefault(document_id, set()).add(child_id)
                    if kind == CHILD_KIND:  # a summary's segment stays a point itself
                        parents.add(parent_id)
            for segment_id, document_id in session.execute(
                select(SegmentRow.id, SegmentRow.document_id).where(SegmentRow.document_id.in_(document_ids))
            ):
                if segment_id not in parents:
                    found.setdefault(document_id, set()).add(segment_id)
        return found

    def _upsert_points(
        self, segments: Sequence[_Point], vectors: np.ndarray, token_lists: Sequence[Sequence[str]]
    ) -> None:
        for start in range(0, len(segments), _UPSERT_BATCH):
            part = segments[start : start + _UPSERT_BATCH]
            self.vector.upsert(
                [
                    VectorRecord(
                        id=s.id,
                        vector=vectors[start + i],
                        document_id=s.document_id,
                        enabled=s.enabled,
                        summary=s.summary,
                        section=s.section,
                    )
                    for i, s in enumerate(part)
                ]
            )
            self.fulltext.upsert(self._text_records(part, token_lists[start : start + len(part)]))

    def _text_records(
        self, points: Sequence[_Point], token_lists: Sequence[Sequence[str]]
    ) -> list[TextRecord]:
        """What the full-text store holds of these points, tokenized by the dataset's tokenizer."""
        return [
            TextRecord(
                id=p.id,
                tokens=self.tokenizer.terms(p.content, tokens),
                document_id=p.document_id,
                enabled=p.enabled,
                summary=p.summary,
                section=p.section,
            )
            for p, tokens in zip(points, token_lists, strict=True)
        ]

    def retokenize_fulltext(self, segment_ids: Sequence[str]) -> int:
        """Write the full-text records of these segments' points again from their rows, with the
        dataset's tokenizer as it is now (after a user-dictionary change; the vectors stay).
        Call under the write lock. Returns how many records were written."""
        points = self._current_points(segment_ids)
        if points:
            token_lists = [self.tokenizer.tokenize(p.content) for p in points]
            self.fulltext.upsert(self._text_records(points, token_lists))
            self.fulltext.flush()
        return len(points)

    def _commit_version(
        self, session: Session, version: DocumentVersion, postings: dict[str, list[tuple[str, float]]]
    ) -> bool:
        """Swap a document's rows and postings for its new version in the caller's transaction,
        if it is still being indexed (not paused or deleted meanwhile)."""
        document = session.get(DocumentRow, version.document_id)
        if document is None:
            return False
        partial = bool(version.failed_chunks)
        moved = move_in(
            session,
            [version.document_id],
            S.COMPLETED_WITH_ERRORS if partial else S.COMPLETED,
            only_from={S.INDEXING},
            error=version.error_summary() if partial else None,
            completed_at=utcnow(),
            segment_count=len(version.segments),
            token_count=sum(s.tokens for s in version.segments),
            doc_metadata={**(document.doc_metadata or {}), "failed_chunks": list(version.failed_chunks)},
            **({"file_hash": version.file_hash} if version.file_hash else {}),
        )
        if not moved:
            return False
        old_ids = list(
            session.scalars(select(SegmentRow.id).where(SegmentRow.document_id == version.document_id))
        )
        self.keywords.delete_segments(session, old_ids)
        for start in range(0, len(old_ids), 500):
            session.execute(delete(SegmentRow).where(SegmentRow.id.in_(old_ids[start : start + 500])))
        if version.segments:  # Core executemany on the table: no per-row ORM bookkeeping
            session.execute(insert(_SEGMENTS), [self._row(s) for s in version.segments])
        self._add_children(session, version.segments, postings)
        self.keywords.add(session, [(s.id, postings[s.id]) for s in version.segments if not s.children])
        return True

    def _add_children(
        self, session: Session, segments: Sequence[Segment], postings: dict[str, list[tuple[str, float]]]
    ) -> None:
        """Insert the child and summary rows of these segments and their postings (caller's
        transaction)."""
        rows = [self._child_row(s, c, CHILD_KIND) for s in segments for c in s.children]
        rows += [self._child_row(s, s.summary, SUMMARY_KIND) for s in segments if s.summary is not None]
        if rows:
            self._has_children = True
            session.execute(insert(_CHILDREN), rows)
            self.child_keywords.add(session, [(row["id"], postings[row["id"]]) for row in rows])

    def _discard_points(self, ids: Sequence[str]) -> None:
        """Delete points no row uses (any more); see :meth:`_remove_points`."""
        if ids:
            self._remove_points(lambda store: store.delete(ids), f"{len(ids)} unused points")

    def _remove_points(self, remove: Callable[[SegmentStore[Any, Any]], None], what: str) -> None:
        """Apply ``remove`` to the vector and full-text stores, then flush both. Best effort:
        points without a row are never served, and a failure leaves them to the sweep at the
        next open."""
        try:
            for store in (self.vector, self.fulltext):
                remove(store)
            self.vector.flush()
            self.fulltext.flush()
        except Exception:  # noqa: BLE001 - invisible leftovers; the next open sweeps them
            log.warning("could not delete %s; swept at the next open", what, exc_info=True)

    def _child_row(self, segment: Segment, child: ChildChunk, kind: str) -> dict[str, Any]:
        return {
            "id": child.id,
            "segment_id": segment.id,
            "dataset_id": self.dataset_id,
            "document_id": segment.document_id,
            "position": child.position,
            "content": child.content,
            "hash": child.hash,
            "tokens": child.tokens,
            "keywords": child.keywords,
            "enabled": child.enabled,
            "kind": kind,
        }

    def _delete_segment_rows(self, session: Session, condition: Any) -> None:
        """Delete the segment rows matching ``condition`` and their keyword postings."""
        self.keywords.delete_segments(session, list(session.scalars(select(SegmentRow.id).where(condition))))
        session.execute(delete(SegmentRow).where(condition))

    def _row(self, segment: Segment) -> dict[str, Any]:
        return {
            "id": segment.id,
            "dataset_id": self.dataset_id,
            "document_id": segment.document_id,
            "position": segment.position,
            "content": segment.content,
            "answer": segment.answer,
            "hash": segment.hash,
            "tokens": segment.tokens,
            "keywords": segment.keywords,
            "enabled": segment.enabled,
            "seg_metadata": segment.metadata,
        }

    def delete_documents(self, document_ids: Sequence[str]) -> None:
        """Remove documents: their rows first (they stop being served at that commit), then their
        points. A run indexing one of them meanwhile finds it gone and discards its own points."""
        with self._write_lock.hold():
            with self._sessions.begin() as session:
                self._delete_segment_rows(session, SegmentRow.document_id.in_(list(document_ids)))
                session.execute(delete(DocumentRow).where(DocumentRow.id.in_(list(document_ids))))

            def remove(store: SegmentStore[Any, Any]) -> None:
                for document_id in document_ids:
                    store.delete_document(document_id)

            self._remove_points(remove, "deleted documents' points")

    # -- single segments (edits through the HTTP API) ----------------------------------------

    @contextmanager
    def editing(self) -> Iterator[None]:
        """Hold this dataset's writes for a read-modify-write of its segments: an edit that read a
        segment (or its document, or the next free position) before a concurrent write changed
        them would bring back a deleted segment, undo another edit or reuse a position. On
        PostgreSQL this holds the other processes on the database too (see ``db_locks``)."""
        with self._write_lock.hold():
            yield

    def write_segments(self, segments: Sequence[Segment]) -> None:
        """Index these segments (new, or changed) without touching the rest of their documents.

        Keywords a segment carries are indexed as given, each tokenized as queries are; a segment
        without keywords gets extracted ones. An edit keeps the segment's id, so its points are
        overwritten before its row changes: the ids are journalled first (``pending_segment_writes``);
        on a failure the previous points are written back, and a kill leaves the journal for the
        next open, which rewrites those points from the rows. Either way the database and the
        three stores agree on the old or the new version.

        A segment with ``children`` is a parent: its children (the complete new set; a child that
        keeps its id is overwritten) replace the ones it had, and those it no longer has are
        deleted after the commit.
        """
        ids = [s.id for s in segments]
        points = _points_of(segments)
        with self._write_lock.hold():
            vectors = self.embedding.embed_documents([p.content for p in points])
            token_lists = [self.tokenizer.tokenize(p.content) for p in points]
            items: dict[str, Segment | ChildChunk] = {s.id: s for s in segments}
            items.update({item.id: item for s in segments for item in points_of_segment(s)})
            weights = {
                point.id: self._postings(items[point.id], tokens)
                for point, tokens in zip(points, token_lists, strict=True)
            }
            stale = sorted(self._children_ids(ids) - {p.id for p in points})
            touched = ids + [p.id for p in points if p.parent is not None]
            self._journal(touched + stale)
            try:
                self._upsert_points(points, vectors, token_lists)
                self.vector.flush()
                self.fulltext.flush()
                with self._sessions.begin() as session:
                    existing = set(session.scalars(select(SegmentRow.id).where(SegmentRow.id.in_(ids))))
                    self.keywords.delete_segments(session, ids)
                    session.execute(delete(ChildChunkRow).where(ChildChunkRow.segment_id.in_(ids)))
                    for segment in segments:
                        row = self._row(segment)
                        if segment.id in existing:
                            for key in ("id", "dataset_id", "document_id"):
                                row.pop(key)
                            session.execute(
                                update(SegmentRow).where(SegmentRow.id == segment.id).values(**row)
                            )
                        else:
                            session.execute(insert(SegmentRow), [row])
                    self._add_children(session, segments, weights)
                    self.keywords.add(session, [(s.id, weights[s.id]) for s in segments if not s.children])
                    self._recount(session, {s.document_id for s in segments})
                    session.execute(
                        delete(PendingSegmentWriteRow).where(PendingSegmentWriteRow.segment_id.in_(touched))
                    )
            except Exception as exc:
                self._restore_points(touched + stale)
                if isinstance(exc, ZhikuError):
                    raise
                raise StoreError(f"writing segments failed: {type(exc).__name__}: {exc}") from exc
            if stale:
                self._restore_points(stale)  # rows gone: deletes their points, clears the journal

    def _children_ids(self, segment_ids: Sequence[str]) -> set[str]:
        """The ids of these segments' child chunks."""
        if not self._has_children or not segment_ids:
            return set()
        with self._sessions() as session:
            return set(
                session.scalars(select(ChildChunkRow.id).where(ChildChunkRow.segment_id.in_(list(segment_ids))))
            )

    def repair_pending(self) -> int:
        """Rewrite the points of segments whose edit was interrupted (see :meth:`write_segments`)."""
        with self._write_lock.hold(), self._sessions() as session:
            ids = list(
                session.scalars(
                    select(PendingSegmentWriteRow.segment_id).where(
                        PendingSegmentWriteRow.dataset_id == self.dataset_id
                    )
                )
            )
        if ids:
            self._restore_points(ids)
        return len(ids)

    def _restore_points(self, ids: Sequence[str]) -> None:
        """Make these segments' points match their rows again (rows absent: no points), then clear
        their journal entries. On a failure the entries stay for the next open."""
        try:
            current = self._current_points(ids)
            gone = sorted(set(ids) - {p.id for p in current})
            if current:
                vectors = self.embedding.embed_documents([p.content for p in current])
                self._upsert_points(current, vectors, [self.tokenizer.tokenize(p.content) for p in current])
            if gone:
                self.vector.delete(gone)
                self.fulltext.delete(gone)
            self.vector.flush()
            self.fulltext.flush()
            self._clear_journal(ids)
        except Exception:  # noqa: BLE001 - the journal keeps them for the next open
            log.warning(
                "could not restore %d segments' points; retried at the next open", len(ids), exc_info=True
            )

    def _current_points(self, ids: Sequence[str]) -> list[_Point]:
        """The points the rows say these ids have now: a segment's own (its children's, if it has
        any) and those of the child chunks among the ids; ids with no row have none."""
        with self._sessions() as session:
            segments = {
                row.id: segment_of(row)
                for row in session.scalars(select(SegmentRow).where(SegmentRow.id.in_(list(ids))))
            }
            children = session.scalars(
                select(ChildChunkRow).where(
                    ChildChunkRow.id.in_(list(ids)) | ChildChunkRow.segment_id.in_(list(segments))
                )
            ).all()
            parent_ids = {row.segment_id for row in children} - set(segments)
            for row in session.scalars(select(SegmentRow).where(SegmentRow.id.in_(list(parent_ids)))):
                segments[row.id] = segment_of(row)
        for child in children:
            if child.segment_id not in segments:
                continue
            if child.kind == SUMMARY_KIND:
                segments[child.segment_id].summary = child_of(child)
            else:
                segments[child.segment_id].children.append(child_of(child))
        wanted = set(ids)
        return [
            p
            for p in _points_of(list(segments.values()))
            if p.id in wanted or p.parent in wanted
        ]

    def delete_segments(self, segment_ids: Sequence[str]) -> None:
        """Remove segments: rows and postings first (they stop being served), then the points."""
        with self._write_lock.hold():
            children = sorted(self._children_ids(segment_ids))
            with self._sessions.begin() as session:
                documents = set(
                    session.scalars(
                        select(SegmentRow.document_id).where(SegmentRow.id.in_(list(segment_ids)))
                    )
                )
                self._delete_segment_rows(session, SegmentRow.id.in_(list(segment_ids)))
                self._recount(session, documents)
            self._discard_points(list(segment_ids) + children)

    def set_segments_enabled(self, segment_ids: Sequence[str], enabled: bool) -> None:
        """Flip segments' ``enabled`` in the row and both stores, journalled like an edit. A store
        flag is never stricter than its row (enabling: stores first; disabling: row first), so a
        failure between the writes never hides a served segment; the journal then makes the
        stores match the rows again, at once or at the next open."""
        ids = list(segment_ids)
        with self._write_lock.hold():
            self._journal(ids)
            targets = self._flag_targets(ids, enabled)
            try:
                if enabled:
                    self._set_store_flags(targets, True)
                with self._sessions.begin() as session:
                    session.execute(update(SegmentRow).where(SegmentRow.id.in_(ids)).values(enabled=enabled))
            except Exception as exc:
                self._restore_points(ids)
                if isinstance(exc, ZhikuError):
                    raise
                raise StoreError(f"changing segments failed: {type(exc).__name__}: {exc}") from exc
            try:
                if not enabled:
                    self._set_store_flags(targets, False)
                self._clear_journal(ids)
            except Exception:  # noqa: BLE001 - the row already stops serving it; the journal repairs
                log.warning("disabled segments keep enabled store points until repaired", exc_info=True)
                self._restore_points(ids)

    def _flag_targets(self, segment_ids: Sequence[str], enabled: bool) -> list[str]:
        """The points whose store flag follows these segments' ``enabled``: a segment's own, or
        its children's, and its summary's (only the enabled ones when enabling: a disabled child
        stays off)."""
        if not self._has_children:
            return list(segment_ids)
        with self._sessions() as session:
            children = session.execute(
                select(
                    ChildChunkRow.id, ChildChunkRow.segment_id, ChildChunkRow.enabled, ChildChunkRow.kind
                ).where(ChildChunkRow.segment_id.in_(list(segment_ids)))
            ).all()
        parents = {parent for _, parent, _, kind in children if kind == CHILD_KIND}
        return [i for i in segment_ids if i not in parents] + [
            child for child, _, child_enabled, _ in children if child_enabled or not enabled
        ]

    def _journal(self, ids: Sequence[str]) -> None:
        """Record that these segments' points are about to change (see :meth:`write_segments`)."""
        with self._sessions.begin() as session:
            known = set(
                session.scalars(
                    select(PendingSegmentWriteRow.segment_id).where(
                        PendingSegmentWriteRow.segment_id.in_(ids)
                    )
                )
            )
            session.add_all(
                PendingSegmentWriteRow(segment_id=i, dataset_id=self.dataset_id)
                for i in ids
                if i not in known
            )

    def _clear_journal(self, ids: Sequence[str]) -> None:
        with self._sessions.begin() as session:
            session.execute(
                delete(PendingSegmentWriteRow).where(PendingSegmentWriteRow.segment_id.in_(list(ids)))
            )

    def _set_store_flags(self, segment_ids: Sequence[str], enabled: bool) -> None:
        self.vector.set_enabled(segment_ids, enabled)
        self.fulltext.set_enabled(segment_ids, enabled)
        self.vector.flush()
        self.fulltext.flush()

    def _postings(self, item: Segment | ChildChunk, tokens: Sequence[str]) -> list[tuple[str, float]]:
        """Keyword postings of a point: extracted ones, and those of the keywords it was given
        (weighted above them). A point given none shows the extracted ones as its keywords."""
        if self.keyword_extractor.tokenizer is not self.tokenizer:  # user dictionary re-read
            tokens = self.keyword_extractor.tokenizer.tokenize(item.content)
        if item.keywords:
            return self.keyword_extractor.with_given(item.keywords, tokens)
        item.keywords = self.keyword_extractor.shown(tokens)
        return self.keyword_extractor.postings(tokens)

    @staticmethod
    def _recount(session: Session, document_ids: set[str]) -> None:
        for document_id in document_ids:
            count, tokens = session.execute(
                select(func.count(), func.coalesce(func.sum(SegmentRow.tokens), 0)).where(
                    SegmentRow.document_id == document_id
                )
            ).one()
            session.execute(
                update(DocumentRow)
                .where(DocumentRow.id == document_id)
                .values(segment_count=int(count), token_count=int(tokens))
            )

    def sweep_orphans(self) -> int:
        """Delete store points without a segment row: left by a crash before a commit, or after
        one and before the replaced or deleted points went. A point is written before its row and
        deleted after it, so a store holding as many points as there are rows has no orphan:
        counting first keeps the usual call, with nothing to sweep, cheap."""
        with self._write_lock.hold():
            with self._sessions() as session:
                segments = select(SegmentRow.id).where(SegmentRow.dataset_id == self.dataset_id)
                children = select(ChildChunkRow.id, ChildChunkRow.segment_id, ChildChunkRow.kind).where(
                    ChildChunkRow.dataset_id == self.dataset_id
                )
                parents = select(ChildChunkRow.segment_id).where(
                    ChildChunkRow.dataset_id == self.dataset_id, ChildChunkRow.kind == CHILD_KIND
                )
                child_ids = select(ChildChunkRow.id).where(ChildChunkRow.dataset_id == self.dataset_id)
                points = select(func.count()).select_from(
                    segments.where(SegmentRow.id.not_in(parents)).union_all(child_ids).subquery()
                    if self._has_children
                    else segments.subquery()
                )
                rows = session.scalar(points)
                stores = [store for store in (self.vector, self.fulltext) if store.count() != rows]
                if not stores:
                    return 0
                child_rows = session.execute(children).all() if self._has_children else []
                parent_ids = {parent for _, parent, kind in child_rows if kind == CHILD_KIND}
                known = {i for i in session.scalars(segments) if i not in parent_ids}
                known |= {child for child, _, _ in child_rows}
            removed = 0
            for store in stores:
                orphans = sorted(store.ids() - known)
                if orphans:
                    store.delete(orphans)
                    store.flush()
                    removed += len(orphans)
            return removed

    @property
    def sessions(self) -> sessionmaker[Session]:
        return self._sessions

    @contextmanager
    def write_lock(self) -> Iterator[None]:
        """Hold the dataset's write lock (see ``editing``)."""
        with self._write_lock.hold():
            yield

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

    def optimize(self) -> None:
        """Build indexes (HNSW, BM25 re-weighting); slow, holds writes: run after an ingest job.
        On the embedded stores the build runs in a child process while searches go on."""
        with self._write_lock.hold():
            self.vector.optimize()
            self.fulltext.optimize()

    def drop(self) -> None:
        """Close and delete the stores; a run still writing to them fails its write and stops."""
        with self._write_lock.hold():
            self.search_service.close()
            self.vector.drop()
            self.fulltext.drop()

    def close(self) -> None:
        self.search_service.close()
        self.vector.close()
        self.fulltext.close()
