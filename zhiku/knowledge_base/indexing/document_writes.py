"""The write protocol for a new version of a document, and for deleting documents.

What makes "all stores or none" hold without a distributed transaction:

1. embed the new segments (cached batch by batch, outside the dataset's write lock);
2. upsert them into the vector and full-text stores and flush both: the points are durable, and
   invisible, because search serves only segments whose rows exist;
3. in ONE database transaction: move the document ``indexing`` → ``completed`` (conditionally:
   a document paused or deleted meanwhile is left alone), swap its segment rows and keyword
   postings — this commit is the moment the new version becomes visible;
4. delete the points the new version no longer uses.

A failure in 2 or 3 discards the new points and leaves the previous version served; a crash
anywhere leaves points without rows, which are invisible and swept at the next open
(:mod:`zhiku.knowledge_base.indexing.journal`). Rows of segments, children and summaries are
written in the same transaction, so the protocol holds for all.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from zhiku.core.db.models import DocumentRow, SegmentRow, utcnow
from zhiku.core.document_status import DocumentStatus
from zhiku.core.documents import Segment
from zhiku.datasource.points.base import SegmentStore
from zhiku.index_processors.summary import SUMMARY_OF
from zhiku.knowledge_base.indexing.document_states import move_in
from zhiku.knowledge_base.indexing.points import points_of, points_of_segment
from zhiku.knowledge_base.indexing.rows import SEGMENTS

if TYPE_CHECKING:
    from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex

S = DocumentStatus


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


class DocumentWrites:
    """Writes whole documents of one dataset: a new version of each, or their deletion."""

    def __init__(self, index: DatasetIndex) -> None:
        self._index = index

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
        points = points_of(segments)
        started = time.perf_counter()
        # embedding is the slow part: outside the lock, so deletes and edits are not held up
        vectors = (
            self._index.embedding.embed_documents([p.content for p in points], on_progress=on_embedded)
            if points
            else np.zeros((0, self._index.embedding.dim), dtype=np.float32)
        )
        clock["embed"] = clock.get("embed", 0.0) + time.perf_counter() - started
        started = time.perf_counter()
        token_lists = [self._index.tokenizer.tokenize(p.content) for p in points]
        items = {item.id: item for segment in segments for item in points_of_segment(segment)}
        postings = {
            p.id: self._index.rows.postings(items[p.id], tokens)
            for p, tokens in zip(points, token_lists, strict=True)
        }
        with self._index.write_lock():
            document_ids = [version.document_id for version in batch]
            old = self._index.points.ids_by_document(document_ids)
            reused = set().union(*old.values()) if old else set()
            fresh = [p.id for p in points if p.id not in reused]
            try:
                self._index.points.upsert(points, vectors, token_lists)
                self._index.vector.flush()  # durable before any row can point at them
                self._index.fulltext.flush()
                with self._index.sessions.begin() as session:
                    committed = [
                        version.document_id
                        for version in batch
                        if self.commit_version(session, version, postings)
                    ]
            except Exception:
                self._index.points.discard(fresh)
                raise
            done = set(committed)
            dropped = [p.id for p in points if p.document_id not in done and p.id not in reused]
            kept = {p.id for p in points if p.document_id in done}
            stale = [i for document_id in committed for i in old.get(document_id, set()) if i not in kept]
            self._index.points.discard(dropped + stale)
        clock["index"] = clock.get("index", 0.0) + time.perf_counter() - started
        return committed

    def commit_version(
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
        self._index.keywords.delete_segments(session, old_ids)
        for start in range(0, len(old_ids), 500):
            session.execute(delete(SegmentRow).where(SegmentRow.id.in_(old_ids[start : start + 500])))
        if version.segments:  # Core executemany on the table: no per-row ORM bookkeeping
            session.execute(insert(SEGMENTS), [self._index.rows.row(s) for s in version.segments])
        self._index.rows.add_children(session, version.segments, postings)
        self._index.keywords.add(
            session, [(s.id, postings[s.id]) for s in version.segments if not s.children]
        )
        return True

    def delete_documents(self, document_ids: Sequence[str]) -> None:
        """Remove documents: their rows first (they stop being served at that commit), then their
        points. A run indexing one of them meanwhile finds it gone and discards its own points."""
        with self._index.write_lock():
            points = sum(len(ids) for ids in self._index.points.ids_by_document(document_ids).values())
            with self._index.sessions.begin() as session:
                self._index.rows.delete(session, SegmentRow.document_id.in_(list(document_ids)))
                session.execute(delete(DocumentRow).where(DocumentRow.id.in_(list(document_ids))))

            def remove(store: SegmentStore[Any, Any]) -> None:
                for document_id in document_ids:
                    store.delete_document(document_id)

            self._index.points.remove(remove, "deleted documents' points")
            self._index.changes.add(points)
